internal import AuthRPC
internal import AuthRPCTransport

/// The `xds` target scheme: once registered, `Channel(target: "xds:///NAME")` takes the
/// listener `NAME`, its routes, clusters and endpoints from the control plane the bootstrap names
/// (gRFC A27), routes each call by the routes (gRFC A28, A31) and spreads the calls of each
/// cluster round robin over its endpoints.
///
/// AuthRPC does not depend on this module, so the scheme exists only after ``register(bootstrap:)``.
/// Today the control plane is reached in plaintext (`insecure` channel credentials) at an IP
/// address or host name and port.
public enum XDSScheme {
    /// Registers the `xds` scheme for channels made from now on.
    ///
    /// With no `bootstrap`, each channel reads `GRPC_XDS_BOOTSTRAP` or
    /// `GRPC_XDS_BOOTSTRAP_CONFIG` when it is made; a bad bootstrap, or one this client cannot
    /// use yet, fails the channel's creation with `invalidArgument` naming what is wrong.
    public static func register(bootstrap: XDSBootstrap? = nil) {
        register(bootstrap: bootstrap, tuning: { _ in })
    }

    /// ``register(bootstrap:)`` with the ADS client's settings adjusted (tests shorten timers).
    static func register(bootstrap: XDSBootstrap?, tuning: @escaping @Sendable (inout XDSADSClient.Settings) -> Void) {
        ChannelResolvers.register(scheme: "xds") { rest throws(RPCError) in
            guard rest.hasPrefix("///"), rest.count > 3 else {
                throw RPCError(code: .invalidArgument, message: "invalid target 'xds:\(rest)': expected xds:///NAME")
            }
            let name = String(rest.dropFirst(3))
            let chosen: XDSBootstrap
            do throws(XDSBootstrapError) {
                if let bootstrap {
                    chosen = bootstrap
                } else {
                    chosen = try XDSBootstrap.fromEnvironment()
                }
            } catch {
                throw RPCError(code: .invalidArgument, message: "xds bootstrap: \(error)")
            }
            var settings = XDSADSClient.Settings(
                server: try serverAddress(chosen.server),
                node: chosen.node.envoyNode,
                ignoresResourceDeletion: chosen.server.ignoresResourceDeletion
            )
            tuning(&settings)
            return XDSNameResolver(name: name, settings: settings)
        }
    }

    /// The control plane's `server_uri` (`host:port`, `dns:///host:port`, `[v6]:port`).
    static func serverAddress(_ server: XDSServer) throws(RPCError) -> HostAndPort {
        guard server.channelCredentials == .insecure else {
            throw RPCError(
                code: .invalidArgument,
                message: "xds bootstrap: xds_servers[0].channel_creds '\(server.channelCredentials)' is not supported "
                    + "yet (only insecure)"
            )
        }
        var text = Substring(server.serverURI)
        if text.hasPrefix("dns:///") { text = text.dropFirst(7) }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), colon > text.startIndex
        else {
            throw RPCError(
                code: .invalidArgument,
                message: "xds bootstrap: xds_servers[0].server_uri '\(server.serverURI)' is not host:port"
            )
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return HostAndPort(host: String(host), port: port)
    }
}
