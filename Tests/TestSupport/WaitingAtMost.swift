import AuthRPCSystem

/// The value of `task`, or `nil` when it has not finished within `limit` of real time: a guard
/// that turns a hang (the defect a test looks for) into a failure, never a timing assertion.
///
/// The task is left running when the limit passes; the caller ends what it hangs on.
public func value<Value: Sendable>(of task: Task<Value, Never>, waitingAtMost limit: Duration) async -> Value? {
    let first = Locked<UnsafeContinuation<Value?, Never>?>(nil)
    return await withUnsafeContinuation { continuation in
        first.withLock { $0 = continuation }
        let timer = Task {
            // Cancelled means the value has already been handed over: only a sleep that ran its
            // whole length answers nil.
            do { try await Task.sleep(for: limit) } catch { return }
            first.withLock { slot in
                defer { slot = nil }
                return slot
            }?.resume(returning: nil)
        }
        Task {
            let value = await task.value
            first.withLock { slot in
                defer { slot = nil }
                return slot
            }?.resume(returning: value)
            timer.cancel()
        }
    }
}
