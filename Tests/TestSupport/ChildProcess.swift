public import Foundation

/// A program a test runs to the end: its exit status and what it wrote.
public struct ChildProcessResult: Sendable {
    /// The exit status (the signal's number when a signal ended it).
    public var status: Int32
    /// Standard output, as UTF-8 (invalid bytes replaced).
    public var stdout: String
    /// Standard error, as UTF-8 (invalid bytes replaced).
    public var stderr: String
}

/// How a child run by ``ChildProcess/capture(_:_:environment:input:timeout:)`` ended, with the
/// exact bytes it wrote.
public struct ChildProcessCapture: Sendable {
    /// How it exited; `nil` when it outlived even SIGKILL's grace.
    public var exit: ChildExitStatus?
    /// Whether it was still running at the timeout (and so was terminated, then killed).
    public var timedOut: Bool
    /// Standard output, byte for byte.
    public var stdout: [UInt8]
    /// Standard error, byte for byte.
    public var stderr: [UInt8]
}

/// Runs programs for tests without holding a thread of the cooperative pool while they run.
///
/// A test that waits for a child with `waitUntilExit()` blocks one of the pool's threads (one per
/// core) for as long as the child runs; a compiler run takes seconds, and meanwhile every other
/// test's task may wait for a thread (the fuzz replay's client task, a call's continuation). Here
/// the wait is a sleep between checks, and the input and output go through files, so no pipe can
/// fill up.
public enum ChildProcess {
    /// Runs `executable` with `arguments` and `environment` (this process's when `nil`), standard
    /// input `input` (empty when `nil`), and waits at most `timeout`.
    ///
    /// - Throws: `PeerError` when the child is still running at the timeout (it is then ended).
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: Data? = nil,
        timeout: Duration = .seconds(300)
    ) async throws -> ChildProcessResult {
        let capture = try await capture(
            executable,
            arguments,
            environment: environment,
            input: input,
            timeout: timeout
        )
        guard let exit = capture.exit, !capture.timedOut else {
            throw PeerError("\(executable.lastPathComponent) did not finish within \(timeout)")
        }
        return ChildProcessResult(
            status: exit.code,
            stdout: String(decoding: capture.stdout, as: UTF8.self),
            stderr: String(decoding: capture.stderr, as: UTF8.self)
        )
    }

    /// Runs `executable` as ``run(_:_:environment:input:timeout:)`` does, but a child still
    /// running at `timeout` is terminated (SIGTERM, then SIGKILL 5 s later) and reported as
    /// `timedOut` rather than thrown.
    ///
    /// A given `environment` also carries this process's sanitizer options (`ASAN_OPTIONS`,
    /// `TSAN_OPTIONS`, `LSAN_OPTIONS`) unless it sets them: they belong to the run, not to the
    /// case. `make test-sanitize` turns LeakSanitizer off (the Swift runtime's and OpenSSL's
    /// process-lifetime state looks like leaks at exit), and without that a child's exit status
    /// would become ASan's 1 whatever the program chose.
    public static func capture(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: Data? = nil,
        timeout: Duration
    ) async throws -> ChildProcessCapture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "child-\(UUID().uuidString)",
            isDirectory: true
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stdinURL = directory.appendingPathComponent("stdin")
        let stdoutURL = directory.appendingPathComponent("stdout")
        let stderrURL = directory.appendingPathComponent("stderr")
        try (input ?? Data()).write(to: stdinURL)
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let stdin = try FileHandle(forReadingFrom: stdinURL)
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if var environment {
            let inherited = ProcessInfo.processInfo.environment
            for name in ["ASAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS"] where environment[name] == nil {
                environment[name] = inherited[name]
            }
            process.environment = environment
        }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        do {
            defer {
                // The child holds its own descriptors once it runs.
                try? stdin.close()
                try? stdout.close()
                try? stderr.close()
            }
            try process.run()
        }
        var exit = await ChildExit.wait(for: process, until: ContinuousClock.now + timeout)
        let timedOut = exit == nil
        if timedOut {
            process.terminate()
            exit = await ChildExit.wait(for: process, until: ContinuousClock.now + .seconds(5))
            if exit == nil {
                kill(process.processIdentifier, SIGKILL)
                exit = await ChildExit.wait(for: process, until: ContinuousClock.now + .seconds(30))
            }
        }
        return ChildProcessCapture(
            exit: exit,
            timedOut: timedOut,
            stdout: [UInt8]((try? Data(contentsOf: stdoutURL)) ?? Data()),
            stderr: [UInt8]((try? Data(contentsOf: stderrURL)) ?? Data())
        )
    }
}
