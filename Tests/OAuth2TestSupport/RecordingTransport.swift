import AuthRPCSystem
public import Foundation
public import OAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The product's default transport (`HTTP1OAuthTransport.standard`) with a record of every request
/// handed to it, so a test can prove a path made no request, exactly the ones expected, or sent
/// the body it should.
///
/// With `refusingOffLoopback`, a request for a host other than `127.0.0.1` or `localhost` is
/// recorded and refused here (`URLError.cannotConnectToHost`), so a test never sends anything off
/// the machine; the record shows whether the library tried.
public final class RecordingTransport: OAuthTransport {
    private let recorded = Locked<[OAuthHTTPRequest]>([])
    private let refusingOffLoopback: Bool

    /// A recorder in front of `HTTP1OAuthTransport.standard`.
    public init(refusingOffLoopback: Bool = false) {
        self.refusingOffLoopback = refusingOffLoopback
    }

    /// Every request asked for, in order.
    public var requests: [OAuthHTTPRequest] { recorded.withLock { $0 } }

    /// The URL of every request asked for, in order.
    public var sent: [URL] { requests.map(\.url) }

    /// Each request's body, as UTF-8 text (empty without one).
    public var bodies: [String] { requests.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } }

    /// The last request's body as form pairs, each name and value percent-decoded (kept as sent
    /// when a malformed escape leaves it undecodable); `nil` before any request.
    public var lastForm: [(String, String)]? {
        bodies.last.map { body in
            body.split(separator: "&").map { pair -> (String, String) in
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).removingPercentEncoding ?? String($0)
                }
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }
        }
    }

    /// Records `request`, then sends it through the default transport (or refuses it, above).
    public func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        recorded.withLock { $0.append(request) }
        if refusingOffLoopback, !["127.0.0.1", "localhost"].contains(request.url.host ?? "") {
            throw URLError(.cannotConnectToHost)
        }
        return try await HTTP1OAuthTransport.standard.send(request)
    }
}
