/// What one `xds:///` channel's xDS client holds: its control plane, its ADS stream and every
/// resource it has asked for (what gRPC's CSDS, gRFC A40, reports per client).
///
/// Read with ``XDSScheme/clientStatus()``. Names, versions and reasons come from the control plane
/// as it sent them: make them printable before a terminal shows them.
public struct XDSClientStatus: Sendable, Hashable {
    /// The listener the channel's target names (`payments` for `xds:///payments`).
    public var target: String
    /// The control plane, as the bootstrap's `server_uri` names it (`host:port`).
    public var server: String
    /// How many ADS streams the client has started (more than one: it has reconnected).
    public var streamsStarted: Int
    /// Why the last ADS stream ended, if one has; nil while the first is up.
    public var lastStreamFailure: String?
    /// The resources asked for, listeners first, then route configurations, clusters and
    /// endpoints, each type by name.
    public var resources: [XDSResourceStatus]

    /// A status with these parts.
    public init(
        target: String,
        server: String,
        streamsStarted: Int,
        lastStreamFailure: String?,
        resources: [XDSResourceStatus]
    ) {
        self.target = target
        self.server = server
        self.streamsStarted = streamsStarted
        self.lastStreamFailure = lastStreamFailure
        self.resources = resources
    }
}
