import AuthRPCSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("ChildProcess: a program run without a shell, under bounds")
struct ChildProcessTests {
    let shell = "/bin/sh"
    let limits = ChildProcess.Limits(timeout: .seconds(20), output: 64 * 1024, errorOutput: 16)

    func run(
        _ script: String,
        environment: [String: String] = [:],
        limits: ChildProcess.Limits? = nil,
        cancellation: Wakeup? = nil
    ) throws(ChildProcess.Failure) -> ChildProcess.Outcome {
        try ChildProcess.run(
            path: shell,
            arguments: ["-c", script],
            environment: environment,
            limits: limits ?? self.limits,
            cancellation: cancellation
        )
    }

    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Whether a process with this id exists (and is not a zombie of ours).
    func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return !stat.contains(") Z ")
    }

    @Test("standard output, standard error and the exit status come back apart")
    func outputAndStatus() throws {
        let outcome = try run("printf 'out'; printf 'err' >&2; exit 3")
        #expect(outcome.termination == .exited(3))
        #expect(text(outcome.output) == "out")
        #expect(text(outcome.errorOutput) == "err")
        #expect(!outcome.errorOutputTruncated)
    }

    @Test("arguments are passed as they are, with no shell between (quotes, spaces, $, ;)")
    func argumentsVerbatim() throws {
        let outcome = try ChildProcess.run(
            path: "/bin/echo",
            arguments: ["a b", "$HOME", "; rm -rf x", "'q'"],
            environment: [:],
            limits: limits
        )
        #expect(text(outcome.output) == "a b $HOME ; rm -rf x 'q'\n")
    }

    @Test("the environment is exactly the one given")
    func environment() throws {
        let outcome = try ChildProcess.run(
            path: "/usr/bin/env",
            arguments: [],
            environment: ["ONLY": "this", "AND": "that=too"],
            limits: limits
        )
        #expect(text(outcome.output) == "AND=that=too\nONLY=this\n")
    }

    @Test("a signal that ends the program is reported as such")
    func signalled() throws {
        let outcome = try run("kill -TERM $$")
        #expect(outcome.termination == .signalled(SIGTERM))
    }

    @Test("standard error past its limit is dropped, not buffered, and does not block the program")
    func errorOutputBounded() throws {
        let outcome = try run("head -c 1000000 /dev/zero | tr '\\0' e >&2; printf done")
        #expect(outcome.termination == .exited(0))
        #expect(outcome.errorOutput.count == 16)
        #expect(outcome.errorOutputTruncated)
        #expect(text(outcome.output) == "done")
    }

    @Test("10 MB on standard output is refused at the limit and the program killed")
    func outputTooLarge() throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("cp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        #expect(throws: ChildProcess.Failure.outputTooLarge(limit: 64 * 1024)) {
            try run("echo $$ > \(pidFile.path); head -c 10000000 /dev/zero; sleep 60")
        }
        let pid =
            pid_t(
                ((try? String(contentsOf: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines
                )
            ) ?? 0
        #expect(pid > 0)
        #expect(!isAlive(pid))
    }

    @Test("at the timeout the whole process group is killed: the program and what it started")
    func timeoutKillsTheGroup() throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("cp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        let limits = ChildProcess.Limits(timeout: .seconds(1), output: 1024)
        // The background sleep closes its copies of the pipes, so only the timeout ends the run.
        #expect(throws: ChildProcess.Failure.timedOut(.seconds(1))) {
            try run("sleep 120 >/dev/null 2>&1 & echo $! > \(pidFile.path); sleep 120", limits: limits)
        }
        let grandchild =
            pid_t(
                ((try? String(contentsOf: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines
                )
            ) ?? 0
        #expect(grandchild > 0)
        // SIGKILL is delivered asynchronously (under gVisor visibly so): the orphan may still be
        // listed for a moment after killpg returns. A bounded wait, not a timing assertion: it is
        // dead long before 10 s, or it was never killed and would sleep 120 s.
        for _ in 0..<1000 where isAlive(grandchild) { usleep(10_000) }
        #expect(!isAlive(grandchild))
    }

    @Test("a program that exits while a process it started keeps its output open ends at the timeout")
    func lingeringOutput() throws {
        let limits = ChildProcess.Limits(timeout: .seconds(1), output: 1024)
        #expect(throws: ChildProcess.Failure.timedOut(.seconds(1))) {
            try run("sleep 120 & exit 0", limits: limits)
        }
    }

    @Test("the program leads a process group of its own")
    func ownProcessGroup() throws {
        // /proc/self/stat of `cat`: "pid (cat) state ppid pgrp ...": its group is led by the shell.
        let outcome = try run("cat /proc/self/stat")
        let fields = text(outcome.output).split(separator: ")").last?.split(separator: " ") ?? []
        #expect(fields.count > 3)
        #expect(fields[1] == fields[2])
        #expect(Int32(fields[2]) != getpgrp())
    }

    @Test("no descriptor of this process is inherited, and standard input is /dev/null")
    func noInheritedDescriptors() throws {
        let fd = open("/dev/null", O_RDONLY)  // without O_CLOEXEC
        #expect(fd > 2)
        defer { close(fd) }
        let outcome = try run("[ -e /proc/self/fd/\(fd) ] && echo open || echo closed; cat")
        #expect(text(outcome.output) == "closed\n")
    }

    @Test("a program that cannot be started is reported with the reason")
    func spawnFailure() throws {
        #expect(throws: ChildProcess.Failure.spawnFailed(SystemCallError("posix_spawn", errno: ENOENT))) {
            try ChildProcess.run(path: "/nonexistent/helper", arguments: [], environment: [:], limits: limits)
        }
    }

    @Test("cancelling stops the run and kills the program")
    func cancellation() throws {
        let wakeup = try Wakeup()
        wakeup.signal()
        #expect(throws: ChildProcess.Failure.cancelled) {
            try run("sleep 120", cancellation: wakeup)
        }
    }
}
