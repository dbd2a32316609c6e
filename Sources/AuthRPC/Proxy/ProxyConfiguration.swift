/// Whether, and through which HTTP CONNECT proxy, connections go: a channel's, and the OAuth
/// transport's token, IAM and STS requests (gRFC A1, as gRPC C-core reads it).
///
/// A proxy is reached over plain TCP and asked for a tunnel with `CONNECT host:port`; TLS then
/// runs inside the tunnel, end to end with the server (its name in SNI and verified on its
/// certificate), so the proxy sees the target's name and port and its own credentials, never a
/// call, its metadata or a bearer token. The target's name is resolved by the proxy.
///
/// - ``environment`` (the default) reads the variables gRPC C-core reads, and their upper-case
///   spellings: the proxy from `grpc_proxy`, else `https_proxy`, else `http_proxy` (the first
///   one set wins; set but empty means no proxy); the targets that bypass it from
///   `no_grpc_proxy`, else `no_proxy`.
/// - ``direct`` never uses a proxy, whatever the environment says.
/// - ``http(_:noProxy:)`` names the proxy, overriding the environment's.
///
/// A proxy URL is `http://[user:password@]host[:port][/]` (`http://` may be left out; the port
/// is 80 when it is; C-core would use 443): `user:password`, percent-decoded, is sent as
/// `Proxy-Authorization: Basic`. Only `http://` proxies exist here: a TLS connection to the proxy
/// itself (`https://`) or SOCKS is refused, never silently replaced by a direct connection.
///
/// A `no_proxy` list is comma-separated, each entry one of: `*` (no target uses the proxy); an
/// IP address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), matching targets written as IP
/// addresses (names are not resolved for this, as in C-core); a host name, matching it and every
/// name under it at a dot boundary (`example.com` and `.example.com` both match
/// `api.example.com`, never `badexample.com`, which C-core's plain suffix match would); any of
/// these with `:port` (`example.com:8443`, `[::1]:50051`) matches that port only (C-core compares
/// the entry with the target's host alone, so an entry with a port never matches there).
///
/// Targets on this machine (`localhost`, `127.0.0.0/8`, `::1`) and unix-domain sockets never go
/// through a proxy, whatever the settings: a proxy cannot reach this machine's loopback (gRPC Go
/// and Java leave loopback out too; C-core would send it to the proxy).
///
/// Everything is checked when a channel (or an OAuth transport) is made: a malformed proxy URL,
/// an unsupported scheme or an unusable `no_proxy` entry is `invalidArgument` there, naming the
/// variable it came from, never a failure at call time.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    enum Source: Hashable {
        case environment
        case direct
        case explicit(url: String, noProxy: String?)
    }

    let source: Source

    private init(_ source: Source) {
        self.source = source
    }

    /// The proxy the environment names (see above); the default.
    public static let environment = ProxyConfiguration(.environment)

    /// No proxy, whatever the environment says.
    public static let direct = ProxyConfiguration(.direct)

    /// Every connection goes through the proxy at `url` (`http://[user:password@]host[:port]`),
    /// except to the targets `noProxy` names (a `no_proxy` list; `nil`: the environment's
    /// `no_grpc_proxy` or `no_proxy`, as C-core applies them to a proxy set as a channel
    /// argument; `""`: none).
    public static func http(_ url: String, noProxy: String? = nil) -> ProxyConfiguration {
        ProxyConfiguration(.explicit(url: url, noProxy: noProxy))
    }

    /// `environment`, `direct`, or the proxy's URL without credentials.
    public var description: String {
        switch source {
        case .environment:
            return "environment"
        case .direct:
            return "direct"
        case .explicit(let url, let noProxy):
            let shown = (try? ProxyURL(parsing: url, from: "the proxy URL")).map(\.description) ?? "<invalid proxy URL>"
            return noProxy.map { "\(shown) (no_proxy: \($0.isEmpty ? "none" : "set"))" } ?? shown
        }
    }
}
