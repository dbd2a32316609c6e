import AuthRPCSystem
import AuthRPCTransport

/// A task executor that runs tasks on the I/O thread of a channel's connection.
///
/// A call made by a task that prefers this executor is answered without a thread switch: the
/// connection's thread reads the response, resumes the caller right there, and whatever request
/// the caller makes next goes out in that same turn's write. One call in flight then costs one
/// wake-up per call instead of three, and many calls in flight share one thread with no hand-offs.
///
/// ```swift
/// try await withTaskExecutorPreference(channel.executor) {
///     for request in requests {
///         let response = try await client.unaryCall(request)
///         consume(response.message)
///     }
/// }
/// ```
///
/// Code that runs here shares the thread with the connection's reading and writing: keep the work
/// between calls short and never block in it; CPU-heavy or blocking work belongs on the default
/// executor. Before the first connection, between connections and after the channel closes, jobs
/// run on the global concurrent executor, so a task that prefers this executor always progresses.
///
/// With several connections (``LoadBalancingPolicy/roundRobin``), jobs run on the thread of one
/// of them: the first that became ready, for as long as it stays open, then the next ready one.
/// Calls answered on that connection resume their task in place; calls answered on the others
/// resume it with one hand-off to that thread.
public final class ChannelExecutor: TaskExecutor {
    /// The connection whose thread runs jobs; nil while there is none.
    private let current = Locked<HTTP2Connection?>(nil)

    init() {}

    /// Runs `job` on the current connection's I/O thread, or on the global concurrent executor
    /// when there is no connection.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if let connection = current.withLock({ $0 }), connection.enqueue(job, runningOn: asUnownedTaskExecutor()) {
            return
        }
        globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }

    /// From now on jobs run on `connection`'s thread.
    func use(_ connection: HTTP2Connection) {
        current.withLock { $0 = connection }
    }

    /// `connection` no longer runs new jobs (it drains or ended), nor does any connection when
    /// `connection` is nil.
    func stopUsing(_ connection: HTTP2Connection?) {
        current.withLock { current in
            if connection == nil || current === connection { current = nil }
        }
    }
}
