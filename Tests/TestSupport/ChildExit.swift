public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
public struct ChildExitStatus: Sendable, Equatable {
    /// The exit code, or the signal's number when a signal ended the child.
    public var code: Int32
    /// Whether a signal ended the child.
    public var signalled: Bool
}

/// Waits for a child a test started with Foundation's `Process`, reaping it with `waitpid` itself.
///
/// Foundation's own notice of a child's exit was seen to go missing under `swift test --parallel`
/// on Linux: the child a zombie, `isRunning` true for good and `waitUntilExit()` spinning at
/// 100 % CPU on a thread of the cooperative pool, which hung the whole run. Reaping the child here
/// does not depend on that notice; a child Foundation did reap is read back from the `Process`.
public enum ChildExit {
    /// The child's status once it ends, or `nil` if it is still running at `deadline`. Sleeps
    /// between checks, so no thread of the cooperative pool is held.
    public static func wait(
        for process: Process,
        until deadline: ContinuousClock.Instant
    ) async -> ChildExitStatus? {
        let pid = process.processIdentifier
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                let signal = status & 0x7f
                return signal == 0
                    ? ChildExitStatus(code: (status >> 8) & 0xff, signalled: false)
                    : ChildExitStatus(code: signal, signalled: true)
            }
            if result == -1 && errno == ECHILD {
                // Foundation reaped it first; its record is complete once isRunning says so.
                let settled = ContinuousClock.now + .seconds(5)
                while process.isRunning, ContinuousClock.now < settled {
                    try? await Task.sleep(for: .milliseconds(5))
                }
                if process.isRunning { return ChildExitStatus(code: -1, signalled: false) }
                return ChildExitStatus(
                    code: process.terminationStatus,
                    signalled: process.terminationReason == .uncaughtSignal
                )
            }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// ``wait(for:until:)`` for code that cannot suspend (a peer's `stop()`): checks every 10 ms
    /// for at most `timeout`, then sends SIGKILL and waits for that.
    @discardableResult
    public static func waitBlocking(for process: Process, timeout: Duration = .seconds(30)) -> ChildExitStatus {
        let pid = process.processIdentifier
        var deadline = ContinuousClock.now + timeout
        var killed = false
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                let signal = status & 0x7f
                return signal == 0
                    ? ChildExitStatus(code: (status >> 8) & 0xff, signalled: false)
                    : ChildExitStatus(code: signal, signalled: true)
            }
            if result == -1 {
                // Foundation reaped it (ECHILD); give its record a moment to settle.
                let settled = ContinuousClock.now + .seconds(5)
                while process.isRunning, ContinuousClock.now < settled { usleep(5_000) }
                if process.isRunning { return ChildExitStatus(code: -1, signalled: false) }
                return ChildExitStatus(
                    code: process.terminationStatus,
                    signalled: process.terminationReason == .uncaughtSignal
                )
            }
            if ContinuousClock.now >= deadline {
                if killed { return ChildExitStatus(code: SIGKILL, signalled: true) }
                kill(pid, SIGKILL)
                killed = true
                deadline = ContinuousClock.now + .seconds(10)
            }
            usleep(10_000)
        }
    }
}
