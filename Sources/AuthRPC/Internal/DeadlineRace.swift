import AuthRPCSystem
import AuthRPCTransport

/// How a raced operation ended.
enum RaceOutcome<Value: Sendable>: Sendable {
    case value(Value)
    case failed(any Error)
    case deadlineExceeded
    case cancelled
}

/// Runs `operation` in its own task and answers with whichever comes first: its result, the
/// deadline, or the caller's cancellation.
///
/// The caller never waits on an operation that ignores cancellation (a token provider that
/// hangs, say): when the deadline or the cancellation wins, the operation is cancelled and its
/// late answer is dropped.
func race<Value: Sendable>(
    deadline: ContinuousClock.Instant?,
    _ operation: @escaping @Sendable () async throws -> Value
) async -> RaceOutcome<Value> {
    let race = Race<Value>()
    return await withTaskCancellationHandler {
        await withUnsafeContinuation { continuation in
            race.install(continuation)
            let worker = Task {
                do {
                    race.finish(.value(try await operation()))
                } catch {
                    race.finish(.failed(error))
                }
            }
            race.track(worker)
            if let deadline {
                race.track(
                    Task {
                        try? await Task.sleep(until: deadline, clock: .continuous)
                        if !Task.isCancelled { race.finish(.deadlineExceeded) }
                    }
                )
            }
        }
    } onCancel: {
        race.finish(.cancelled)
    }
}

/// The shared state of one race: the first `finish` wins and cancels the rest.
private final class Race<Value: Sendable>: Sendable {
    private struct State {
        var continuation: UnsafeContinuation<RaceOutcome<Value>, Never>?
        var outcome: RaceOutcome<Value>?
        var tasks: [Task<Void, Never>] = []
        var resumed = false
    }

    private let state = Locked(State())

    func install(_ continuation: UnsafeContinuation<RaceOutcome<Value>, Never>) {
        let early = state.withLock { state -> RaceOutcome<Value>? in
            if let outcome = state.outcome {
                state.resumed = true
                return outcome
            }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func track(_ task: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            if state.outcome != nil { return true }
            state.tasks.append(task)
            return false
        }
        if finished { task.cancel() }
    }

    func finish(_ outcome: RaceOutcome<Value>) {
        let (continuation, tasks) = state.withLock {
            state -> (UnsafeContinuation<RaceOutcome<Value>, Never>?, [Task<Void, Never>]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = outcome
            let continuation = state.resumed ? nil : state.continuation
            state.continuation = nil
            if continuation != nil { state.resumed = true }
            defer { state.tasks = [] }
            return (continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(returning: outcome)
    }
}
