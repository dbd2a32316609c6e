import AuthRPC
import Testing

@testable import AuthRPCXDS

@Suite("XDSClusterBalancer: priority, weighted target, round robin")
struct XDSClusterBalancerTests {
    typealias Endpoint = XDSEndpoints.Endpoint
    typealias State = XDSClusterBalancer.EndpointState

    static func endpoint(_ last: Int) -> Endpoint { Endpoint(host: "127.0.0.\(last)", port: 50051, weight: 1) }

    static func locality(_ zone: String, weight: UInt32, _ endpoints: [Endpoint]) -> XDSEndpoints.Locality {
        XDSEndpoints.Locality(region: "r", zone: zone, subZone: "", weight: weight, endpoints: endpoints)
    }

    static let a1 = endpoint(2)
    static let a2 = endpoint(3)
    static let b1 = endpoint(4)
    static let failover = XDSEndpoints(priorities: [
        [locality("a", weight: 1, [a1, a2])], [locality("b", weight: 1, [b1])],
    ])

    /// A balancer with a seeded generator, picking through one call.
    struct Harness {
        var balancer: XDSClusterBalancer
        var random: SplitMix64

        init(_ endpoints: XDSEndpoints, seed: UInt64 = 3) {
            balancer = XDSClusterBalancer(endpoints: endpoints)
            random = SplitMix64(seed: seed)
        }

        mutating func pick(
            _ state: (Endpoint) -> State,
            expired: (Int) -> Bool = { _ in false }
        )
            -> XDSClusterBalancer.Pick
        {
            balancer.pick(state: state, failoverExpired: expired, using: &random)
        }
    }

    @Test("the first priority serves, its endpoints in turn")
    func roundRobin() {
        var harness = Harness(Self.failover)
        let picks = (0..<4).map { _ in harness.pick { _ in .ready } }
        #expect(picks == [.endpoint(Self.a1), .endpoint(Self.a2), .endpoint(Self.a1), .endpoint(Self.a2)])
    }

    @Test("priority failover: failed goes to the next at once, connecting only after the failover timer, and back")
    func failover() {
        var harness = Harness(Self.failover)
        let toFailed = harness.pick { $0 == Self.b1 ? .ready : .failed }
        #expect(toFailed == .endpoint(Self.b1))
        let waiting = harness.pick { $0 == Self.b1 ? .ready : .connecting }
        #expect(waiting == .queue)
        let afterTimer = harness.pick({ $0 == Self.b1 ? .ready : .connecting }, expired: { $0 == 0 })
        #expect(afterTimer == .endpoint(Self.b1))
        let back = harness.pick { _ in .ready }
        #expect(back == .endpoint(Self.a1) || back == .endpoint(Self.a2))
        // One endpoint of p0 failed: the other serves alone.
        for _ in 0..<3 {
            let pick = harness.pick { $0 == Self.a1 ? .failed : .ready }
            #expect(pick == .endpoint(Self.a2))
        }
    }

    @Test("all failed fails the call; nothing ready but connecting queues it; no endpoints says so")
    func failures() {
        var harness = Harness(Self.failover)
        let failed = harness.pick({ _ in .failed }, expired: { _ in true })
        guard case .fail(let text) = failed else {
            Issue.record("not failed: \(failed)")
            return
        }
        #expect(text.contains("2 priorities"))
        let connecting = harness.pick({ _ in .connecting }, expired: { _ in true })
        #expect(connecting == .queue)
        var empty = Harness(XDSEndpoints(priorities: []))
        let none = empty.pick { _ in .ready }
        #expect(none == .fail("the cluster has no endpoints"))
    }

    @Test("localities are picked by weight, 3:1 within 5 % over 4,000 calls, only those with a ready endpoint")
    func weightedTarget() {
        var harness = Harness(
            XDSEndpoints(priorities: [
                [Self.locality("a", weight: 3, [Self.a1]), Self.locality("b", weight: 1, [Self.b1])]
            ]),
            seed: 11
        )
        var toA = 0
        for _ in 0..<4000 where harness.pick({ _ in .ready }) == .endpoint(Self.a1) {
            toA += 1
        }
        #expect(abs(Double(toA) / 4000 - 0.75) <= 0.05, "\(toA)")
        for _ in 0..<10 {
            let pick = harness.pick { $0 == Self.a1 ? .failed : .ready }
            #expect(pick == .endpoint(Self.b1))
        }
    }
}
