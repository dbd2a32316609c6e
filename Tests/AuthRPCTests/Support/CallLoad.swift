import AuthRPC
import AuthRPCSystem
import TestSupport

/// Calls kept in flight on a channel until told to stop, each with a unique `x-call-id`, every
/// outcome recorded with when it started and ended.
final class CallLoad: Sendable {
    struct Outcome: Sendable {
        var id: String
        /// nil when the call succeeded.
        var code: StatusCode?
        var message: String
        var started: ContinuousClock.Instant
        var ended: ContinuousClock.Instant
    }

    private struct State {
        var next = 0
        var stopped = false
        var outcomes: [Outcome] = []
    }

    private let state = Locked(State())
    private let channel: Channel
    private let prefix: String

    init(_ channel: Channel, prefix: String) {
        self.channel = channel
        self.prefix = prefix
    }

    /// Runs `concurrency` callers until ``stop()``; each call holds the server `delayMillis`.
    func run(concurrency: Int, delayMillis: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while let id = self.nextID() {
                        let started = ContinuousClock.now
                        var outcome = Outcome(id: id, code: nil, message: "", started: started, ended: started)
                        do throws(RPCError) {
                            _ = try await BackendCall.call(self.channel, id: id, delayMillis: delayMillis)
                        } catch {
                            outcome.code = error.code
                            outcome.message = error.message
                        }
                        outcome.ended = .now
                        self.state.withLock { $0.outcomes.append(outcome) }
                    }
                }
            }
        }
    }

    private func nextID() -> String? {
        state.withLock { state -> String? in
            guard !state.stopped else { return nil }
            defer { state.next += 1 }
            return "\(prefix)-\(state.next)"
        }
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    var outcomes: [Outcome] { state.withLock { $0.outcomes } }

    /// Calls that succeeded and started at or after `instant`.
    func successes(startedAfter instant: ContinuousClock.Instant) -> Int {
        state.withLock { $0.outcomes.filter { $0.code == nil && $0.started >= instant }.count }
    }
}
