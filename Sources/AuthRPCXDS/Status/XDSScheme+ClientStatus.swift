extension XDSScheme {
    /// What the xDS client of every `xds:///` channel alive in this process holds now: its
    /// control plane, its ADS stream, and each resource it asked for with its version, and the
    /// reason when the newest version was refused (NACKed).
    ///
    /// One entry per channel, in the order of their targets; empty when there is none. A channel
    /// that has made no call yet has asked for nothing. This is the information gRPC's CSDS
    /// service (gRFC A40) gives; `auth_sample call --xds-status` prints it.
    public static func clientStatus() async -> [XDSClientStatus] {
        var statuses: [XDSClientStatus] = []
        for resolver in XDSNameResolver.live() {
            statuses.append(await resolver.client.status(target: resolver.name))
        }
        return statuses
    }
}
