/// How a channel spreads calls over the addresses its target resolves to.
///
/// ```swift
/// let channel = try Channel(target: "dns:///backend.default.svc.cluster.local:50051", loadBalancing: .roundRobin)
/// ```
public struct LoadBalancingPolicy: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Sendable, Hashable {
        case pickFirst
        case roundRobin
    }

    private let kind: Kind

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// One HTTP/2 connection, to the first address that answers (tried in the resolver's order),
    /// carrying every call: gRPC's `pick_first`, the default. When it ends, the next call
    /// connects again, to the name looked up afresh.
    public static let pickFirst = LoadBalancingPolicy(.pickFirst)

    /// One HTTP/2 connection to every address, each with its own reconnection backoff; calls
    /// take the ready connections in turn and skip the others: gRPC's `round_robin`. A
    /// connection that fails is tried again after its backoff, and takes calls again as soon as
    /// it is back.
    public static let roundRobin = LoadBalancingPolicy(.roundRobin)

    /// Whether every address gets a connection of its own.
    var spreadsOverAddresses: Bool { kind == .roundRobin }

    /// gRPC's name for the policy: `pick_first` or `round_robin`.
    public var description: String {
        switch kind {
        case .pickFirst: "pick_first"
        case .roundRobin: "round_robin"
        }
    }
}
