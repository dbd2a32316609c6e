// `package`: OAuth2's HTTP/1.1 transport asks these settings for its routes as channels do.
package import AuthRPCTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``ProxyConfiguration`` read and checked: the proxy (if any) and the targets that bypass it.
/// Made once, when a channel or a transport is made; choosing a route is then a lookup.
package struct ProxySettings: Sendable, Hashable, CustomStringConvertible {
    /// The proxy, or nil when connections go direct.
    let proxy: ProxyURL?
    let exclusions: NoProxyList

    /// The proxy variables in the order they are read; the first one set wins.
    static let proxyVariables = ["grpc_proxy", "GRPC_PROXY", "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"]
    /// The exclusion variables in the order they are read; the first one set wins.
    static let noProxyVariables = ["no_grpc_proxy", "NO_GRPC_PROXY", "no_proxy", "NO_PROXY"]

    /// Reads `configuration`, taking variables from `environment` (the process's by default).
    ///
    /// - Throws: `invalidArgument` naming the variable (or the argument) and what is wrong.
    package init(
        _ configuration: ProxyConfiguration,
        environment: (String) -> String? = ProxySettings.processEnvironment
    ) throws(RPCError) {
        switch configuration.source {
        case .direct:
            proxy = nil
            exclusions = .empty
        case .explicit(let url, let noProxy):
            proxy = try ProxyURL(parsing: url, from: "the proxy URL")
            if let noProxy {
                exclusions = try NoProxyList(parsing: noProxy, from: "noProxy")
            } else {
                exclusions = try Self.environmentExclusions(environment)
            }
        case .environment:
            guard let (name, value) = Self.firstSet(Self.proxyVariables, in: environment, skippingHTTPProxyInCGI: true),
                !value.trimmingASCIIWhitespace.isEmpty
            else {
                proxy = nil
                exclusions = .empty
                return
            }
            proxy = try ProxyURL(parsing: value, from: name)
            exclusions = try Self.environmentExclusions(environment)
        }
    }

    /// The process's environment variable `name`.
    package static let processEnvironment: @Sendable (String) -> String? = { name in
        getenv(name).map { String(cString: $0) }
    }

    private static func environmentExclusions(_ environment: (String) -> String?) throws(RPCError) -> NoProxyList {
        guard let (name, value) = firstSet(noProxyVariables, in: environment, skippingHTTPProxyInCGI: false) else {
            return .empty
        }
        return try NoProxyList(parsing: value, from: name)
    }

    /// The first of `names` that is set, and its value. `HTTP_PROXY` is passed over in a CGI
    /// program (`REQUEST_METHOD` set), where a request's `Proxy:` header arrives as that
    /// variable ("httpoxy"); Go and curl pass it over too.
    private static func firstSet(
        _ names: [String],
        in environment: (String) -> String?,
        skippingHTTPProxyInCGI: Bool
    ) -> (String, String)? {
        let cgi = skippingHTTPProxyInCGI && environment("REQUEST_METHOD") != nil
        for name in names where !(cgi && name == "HTTP_PROXY") {
            if let value = environment(name) { return (name, value) }
        }
        return nil
    }

    /// Whether a connection to `host` at `port` goes through the proxy: there is one, the host
    /// is not on this machine, and the exclusions do not name it.
    package func usesProxy(host: String, port: Int) -> Bool {
        guard proxy != nil else { return false }
        return !IPAddress.isLoopback(host) && !exclusions.contains(host: host, port: port)
    }

    /// How to reach `target`: through the proxy, or by resolving its name.
    package func route(to target: HostAndPort) -> ConnectionRoute {
        proxy(for: target).map { .proxy($0, target: target) } ?? .resolving(target)
    }

    /// The proxy a connection to `target` goes through, or nil when it goes direct.
    func proxy(for target: HostAndPort) -> ProxyServer? {
        guard let proxy, usesProxy(host: target.host, port: target.port) else { return nil }
        return ProxyServer(address: proxy.address, authorization: proxy.authorization)
    }

    /// The proxy, without credentials, or `direct`.
    package var description: String { proxy?.description ?? "direct" }
}
