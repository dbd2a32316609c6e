internal import AuthRPC
internal import AuthRPCTransport
internal import GoogleAuth

/// The `xds` target scheme: once registered, `Channel(target: "xds:///NAME")` takes the
/// listener `NAME`, its routes, clusters and endpoints from the control plane the bootstrap names
/// (gRFC A27), routes each call by the routes (gRFC A28, A31) and spreads the calls of each
/// cluster round robin over its endpoints.
///
/// AuthRPC does not depend on this module, so the scheme exists only after ``register(bootstrap:)``.
/// The control plane is reached at an IP address or host name and port: in plaintext with
/// `insecure` channel credentials; with `google_default`, over TLS (the system's roots, the name
/// checked against the certificate) with a token of the Application Default Credentials
/// (`cloud-platform` scope) on each ADS stream, as Traffic Director requires.
public enum XDSScheme {
    /// Registers the `xds` scheme for channels made from now on.
    ///
    /// With no `bootstrap`, each channel reads `GRPC_XDS_BOOTSTRAP` or
    /// `GRPC_XDS_BOOTSTRAP_CONFIG` when it is made; a bad bootstrap, or one this client cannot
    /// use yet, fails the channel's creation with `invalidArgument` naming what is wrong.
    public static func register(bootstrap: XDSBootstrap? = nil) {
        register(bootstrap: bootstrap, tuning: { _ in })
    }

    /// The scope `google_default`'s token is asked for (gRPC's Google default credentials ask for
    /// the same).
    static let googleDefaultScope = "https://www.googleapis.com/auth/cloud-platform"

    /// ``register(bootstrap:)`` with the ADS client's settings adjusted (tests shorten timers),
    /// and `google_default` looking for credentials in `environment`.
    static func register(
        bootstrap: XDSBootstrap?,
        environment: ApplicationDefaultCredentials.Environment = .current,
        tuning: @escaping @Sendable (inout XDSADSClient.Settings) -> Void
    ) {
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
            if chosen.server.channelCredentials == .googleDefault {
                try secure(&settings, environment: environment)
            }
            tuning(&settings)
            return XDSNameResolver(name: name, settings: settings)
        }
    }

    /// `google_default`: TLS with the system's roots, and the Application Default Credentials
    /// found in `environment` as call credentials. Nothing found, or nothing usable, fails the
    /// channel's creation, saying where it looked.
    private static func secure(
        _ settings: inout XDSADSClient.Settings,
        environment: ApplicationDefaultCredentials.Environment
    ) throws(RPCError) {
        do {
            settings.connection.tls = try TLSContext(TLSClientConfiguration())
        } catch {
            throw RPCError(code: .invalidArgument, message: "xds bootstrap: google_default: TLS: \(error)")
        }
        do {
            settings.callCredentials = try GoogleCredentials.applicationDefault(
                scopes: [googleDefaultScope],
                environment: environment
            )
        } catch {
            throw RPCError(
                code: .invalidArgument,
                message: "xds bootstrap: xds_servers[0].channel_creds google_default: \(error)"
            )
        }
    }

    /// The control plane's `server_uri` (`host:port`, `dns:///host:port`, `[v6]:port`).
    static func serverAddress(_ server: XDSServer) throws(RPCError) -> HostAndPort {
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
