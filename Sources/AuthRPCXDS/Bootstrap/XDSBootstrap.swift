/// Where an xDS client finds its control plane and how it introduces itself: the bootstrap
/// configuration gRPC reads (gRFC A27), from the file `GRPC_XDS_BOOTSTRAP` names or the JSON in
/// `GRPC_XDS_BOOTSTRAP_CONFIG`.
///
/// ```json
/// {
///   "xds_servers": [{
///     "server_uri": "xds.example.com:443",
///     "channel_creds": [{"type": "google_default"}],
///     "server_features": ["xds_v3", "ignore_resource_deletion"]
///   }],
///   "node": {"id": "projects/1/networks/default/nodes/client-1", "cluster": "c",
///            "locality": {"zone": "us-central1-a"}, "metadata": {"TRAFFICDIRECTOR_NETWORK_NAME": "default"}}
/// }
/// ```
public struct XDSBootstrap: Sendable, Hashable {
    /// The control planes, in the bootstrap's order; the client talks to the first.
    public var servers: [XDSServer]
    /// The client's identity.
    public var node: XDSNode

    /// Creates a bootstrap from its parts.
    ///
    /// - Throws: ``XDSBootstrapError`` when `servers` is empty.
    public init(servers: [XDSServer], node: XDSNode = XDSNode()) throws(XDSBootstrapError) {
        guard !servers.isEmpty else {
            throw XDSBootstrapError(field: "xds_servers", problem: "at least one server is required")
        }
        self.servers = servers
        self.node = node
    }

    /// The control plane the client talks to: the first of ``servers``.
    public var server: XDSServer { servers[0] }
}
