import Testing

@testable import AuthRPCTransport

@Suite("Happy Eyeballs v2 (RFC 8305): the order and the pacing of connection attempts")
struct HappyEyeballsTests {
    private let v6a = try! SocketAddress(ipAddress: "2001:db8::a", port: 443)
    private let v6b = try! SocketAddress(ipAddress: "2001:db8::b", port: 443)
    private let v6c = try! SocketAddress(ipAddress: "2001:db8::c", port: 443)
    private let v4a = try! SocketAddress(ipAddress: "192.0.2.1", port: 443)
    private let v4b = try! SocketAddress(ipAddress: "192.0.2.2", port: 443)

    @Test("families alternate, starting with the first address's family; each family keeps its order")
    func interleaving() {
        #expect(HappyEyeballs.interleavingFamilies([v6a, v6b, v6c, v4a, v4b]) == [v6a, v4a, v6b, v4b, v6c])
        #expect(HappyEyeballs.interleavingFamilies([v4a, v4b, v6a]) == [v4a, v6a, v4b])
        #expect(HappyEyeballs.interleavingFamilies([v6a, v6b]) == [v6a, v6b])
        #expect(HappyEyeballs.interleavingFamilies([]) == [])
    }

    @Test("the next attempt starts 250 ms after the previous one while that one is still pending")
    func pacing() {
        let start = ContinuousClock.now
        var plan = HappyEyeballs([v6a, v6b, v4a])
        #expect(plan.step(now: start) == .start(v6a))
        #expect(plan.step(now: start) == .wait(until: start + .milliseconds(250)))
        #expect(plan.step(now: start + .milliseconds(249)) == .wait(until: start + .milliseconds(250)))
        #expect(plan.step(now: start + .milliseconds(250)) == .start(v4a))
        #expect(plan.step(now: start + .milliseconds(500)) == .start(v6b))
        #expect(plan.inFlight == 3)
        // All started: wait for one of them, with no more starts to time.
        #expect(plan.step(now: start + .seconds(5)) == .wait(until: nil))
    }

    @Test("a failed attempt lets the next one start at once; when all have failed the plan is exhausted")
    func failures() {
        let start = ContinuousClock.now
        var plan = HappyEyeballs([v4a, v4b])
        #expect(plan.step(now: start) == .start(v4a))
        plan.attemptFailed(now: start + .milliseconds(10))
        #expect(plan.step(now: start + .milliseconds(10)) == .start(v4b))
        plan.attemptFailed(now: start + .milliseconds(20))
        #expect(plan.step(now: start + .milliseconds(20)) == .exhausted)
    }

    @Test("nothing in flight: the next address starts whatever the clock says")
    func nothingInFlight() {
        let start = ContinuousClock.now
        var plan = HappyEyeballs([v4a, v6a], attemptDelay: .seconds(10))
        #expect(plan.step(now: start) == .start(v4a))
        plan.attemptFailed(now: start)
        #expect(plan.step(now: start) == .start(v6a))
    }
}
