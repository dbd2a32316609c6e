import AuthRPCSystem

/// Wakes the calls waiting for a channel to change (a lookup or an attempt finished, a timer
/// fired, the channel closed), once: the channel makes a new one for the next change. A call
/// woken asks the channel again.
final class ChangeSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [Int: UnsafeContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    /// Wakes every waiter, and every later one at once.
    func fire() {
        let waiters = state.withLock { state -> [Int: UnsafeContinuation<Void, Never>] in
            state.fired = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Returns once the signal fired or the calling task is cancelled.
    func wait() async {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                // A cancellation handler that ran before this found nothing to resume; the task's
                // flag, set before it ran, is seen here.
                let resumeNow = state.withLock { state -> Bool in
                    if state.fired || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
