/// Keepalive for a channel's connection: after `interval` without hearing from the server while
/// calls are in flight, a PING is sent; when it is not answered within `timeout`, the connection
/// is given up and its calls fail `unavailable` ("keepalive ping not answered in time").
public struct Keepalive: Sendable, Hashable {
    /// Silence that triggers a PING.
    public var interval: Duration
    /// How long to wait for the PING's acknowledgement.
    public var timeout: Duration

    /// Creates a keepalive setting; the timeout defaults to 20 s, as in gRPC.
    public init(interval: Duration, timeout: Duration = .seconds(20)) {
        self.interval = interval
        self.timeout = timeout
    }
}
