import Foundation

/// Lets a few peers of this test process start at a time, those many suites share first.
///
/// At the start of a parallel run every suite asks for its peers at once. Started together, a
/// dozen sandboxes (grpcio, Authlib, a CA of their own) and as many other Python peers share the
/// cores, each takes half a minute to be ready, and the tests already running lose the CPU for as
/// long: their calls' deadlines ran out while connecting. Started a few at a time, each is ready in
/// a second or two, and the shared ones, which most suites wait for, go first.
///
/// Waiting is on a thread of its own (peers start on one), never on the cooperative pool.
public final class PeerStartGate: @unchecked Sendable {
    /// Who goes first when several peers wait to start.
    public enum Priority: Int, Sendable, Comparable {
        /// A peer of one test or suite.
        case own = 0
        /// A peer every suite of the process shares (the shared sandbox, the fault server).
        case shared = 1

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The process-wide gate: half as many peers at a time as the machine has cores (one at least),
    /// so the tests already running keep the other half.
    public static let shared = PeerStartGate(slots: max(1, ProcessInfo.processInfo.activeProcessorCount / 2))

    // `condition` guards `free`, `waiting` and `nextTicket`.
    private let condition = NSCondition()
    private var free: Int
    private var waiting: [(ticket: UInt64, priority: Priority)] = []
    private var nextTicket: UInt64 = 0

    /// A gate letting `slots` starts run at once.
    public init(slots: Int) {
        free = max(1, slots)
    }

    /// Runs `start` (which returns once the peer is ready, or throws) when a slot is free: the
    /// waiter of highest priority first, then the earliest.
    public func starting<Value>(_ priority: Priority, _ start: () throws -> Value) rethrows -> Value {
        enter(priority)
        defer { leave() }
        return try start()
    }

    private func enter(_ priority: Priority) {
        condition.lock()
        defer { condition.unlock() }
        let ticket = nextTicket
        nextTicket += 1
        waiting.append((ticket, priority))
        while free == 0 || next() != ticket {
            condition.wait()
        }
        waiting.removeAll { $0.ticket == ticket }
        free -= 1
    }

    private func leave() {
        condition.lock()
        free += 1
        condition.broadcast()
        condition.unlock()
    }

    /// The ticket that goes next: the highest priority, the earliest among them.
    private func next() -> UInt64? {
        waiting.max { lhs, rhs in
            lhs.priority != rhs.priority ? lhs.priority < rhs.priority : lhs.ticket > rhs.ticket
        }?.ticket
    }
}
