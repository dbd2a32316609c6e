/// A validated cluster load assignment (EDS): localities by priority, 0 first.
struct XDSEndpoints: Sendable, Hashable {
    /// A backend.
    struct Endpoint: Sendable, Hashable {
        /// An IPv4 or IPv6 address literal.
        let host: String
        let port: Int
        /// `load_balancing_weight` (1 when unset).
        let weight: UInt32
    }

    /// A locality with its weight among the localities of its priority.
    struct Locality: Sendable, Hashable {
        let region: String
        let zone: String
        let subZone: String
        let weight: UInt32
        /// The endpoints that are `HEALTHY` or `UNKNOWN`.
        let endpoints: [Endpoint]

        /// `region/zone/sub_zone`: the locality's name among its siblings.
        var name: String { "\(region)/\(zone)/\(subZone)" }
    }

    /// The localities of each priority: index 0 is the most preferred; no priority is empty.
    let priorities: [[Locality]]
}
