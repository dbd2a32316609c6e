package import AuthRPCTransport

/// What a ``ChannelResolver`` answers: the addresses calls go to, and, for a target balanced as
/// a tree (an xDS cluster's priorities and localities, gRFC A27), where each address sits in it.
package struct ChannelResolution: Sendable, Hashable {
    /// Where one address sits in a target's balancing tree.
    package struct Placement: Sendable, Hashable {
        /// 0 is the most preferred: a priority serves calls while none before it has a ready
        /// connection, and is connected once every priority before it has failed.
        package var priority: Int
        /// The locality's number, the same for every address of one locality and different
        /// between localities (of any priority); numbered from 0 without gaps.
        package var locality: Int
        /// The locality's weight among the localities of its priority (greater than 0).
        package var weight: UInt32

        package init(priority: Int, locality: Int, weight: UInt32) {
            self.priority = priority
            self.locality = locality
            self.weight = weight
        }
    }

    package var addresses: [SocketAddress]
    /// One per address, in the same order; nil when every address is an equal (plain round robin).
    package var placements: [Placement]?

    /// Addresses that are all equals.
    package init(addresses: [SocketAddress]) {
        self.addresses = addresses
        self.placements = nil
    }

    /// Addresses each placed in the balancing tree.
    package init(placed: [(address: SocketAddress, placement: Placement)]) {
        self.addresses = placed.map(\.address)
        self.placements = placed.map(\.placement)
    }
}
