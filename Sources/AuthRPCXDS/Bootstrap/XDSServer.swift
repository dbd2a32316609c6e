/// One xDS control plane the bootstrap names (an entry of `xds_servers`).
public struct XDSServer: Sendable, Hashable {
    /// The control plane's target (`server_uri`), in the channel target syntax:
    /// `host:port`, `dns:///host:port`, `ipv4:127.0.0.1:18000`, ...
    public var serverURI: String
    /// The first entry of `channel_creds` this client supports.
    public var channelCredentials: XDSChannelCredentials
    /// `server_features` as written (unknown features are kept but have no effect, as in gRPC).
    public var serverFeatures: [String]

    /// Creates a server entry.
    public init(serverURI: String, channelCredentials: XDSChannelCredentials, serverFeatures: [String] = []) {
        self.serverURI = serverURI
        self.channelCredentials = channelCredentials
        self.serverFeatures = serverFeatures
    }

    /// Whether a resource the control plane stops sending is kept rather than dropped
    /// (`ignore_resource_deletion`, gRFC A53).
    public var ignoresResourceDeletion: Bool {
        serverFeatures.contains("ignore_resource_deletion")
    }
}
