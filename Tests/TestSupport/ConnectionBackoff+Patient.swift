public import AuthRPC

extension ConnectionBackoff {
    /// gRPC's backoff with attempts of two minutes rather than 20 s, for channels to the peers
    /// every suite shares: the Python fault server answered SETTINGS too late for 20 s while the
    /// whole machine stalled (a full run: 22 tests failed `timed out waiting for the server's
    /// HTTP/2 SETTINGS`). Only a peer that never answers reaches it.
    public static let patient: ConnectionBackoff = {
        var backoff = ConnectionBackoff.default
        backoff.minimumConnectTimeout = .seconds(120)
        return backoff
    }()
}
