import Foundation

/// A task executor on a thread of its own, for the h2-client target's client task: the target's
/// caller blocks its thread until the client's call ends, and when that caller (the replay under
/// `swift test --parallel`, 2 cores) or other tests hold the cooperative pool, a client task on
/// the pool may not start within the target's step timeout ("the client's task never started").
/// On this thread it does not depend on the pool at all.
///
/// `@unchecked Sendable`: `jobs` is read and written only with `condition` locked.
final class ClientThreadExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ClientThreadExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "fuzz-h2-client"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
