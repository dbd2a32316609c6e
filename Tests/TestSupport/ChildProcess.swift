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

/// Runs programs for tests without holding a thread of the cooperative pool while they run.
///
/// A test that waits for a child with `waitUntilExit()` blocks one of the pool's threads (one per
/// core) for as long as the child runs; a compiler run takes seconds, and meanwhile every other
/// test's task may wait for a thread (the fuzz replay's client task, a call's continuation). Here
/// the wait is a sleep between checks, and the output goes to files, so no pipe can fill up.
public enum ChildProcess {
    /// Runs `executable` with `arguments` and `environment` (this process's when `nil`), standard
    /// input `input` (empty when `nil`), and waits at most `timeout` (then SIGKILL).
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: Data? = nil,
        timeout: Duration = .seconds(300)
    ) async throws -> ChildProcessResult {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "child-\(UUID().uuidString)",
            isDirectory: true
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stdoutURL = directory.appendingPathComponent("stdout")
        let stderrURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        // Input from a file, as the output goes to files: no pipe for either side to wait on.
        let stdinURL = directory.appendingPathComponent("stdin")
        try (input ?? Data()).write(to: stdinURL)
        let stdin = try FileHandle(forReadingFrom: stdinURL)
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        defer {
            try? stdin.close()
            try? stdout.close()
            try? stderr.close()
        }
        try process.run()
        guard let exit = await ChildExit.wait(for: process, until: ContinuousClock.now + timeout) else {
            kill(process.processIdentifier, SIGKILL)
            _ = await ChildExit.wait(for: process, until: ContinuousClock.now + .seconds(30))
            throw PeerError("\(executable.lastPathComponent) did not finish within \(timeout)")
        }
        return ChildProcessResult(
            status: exit.code,
            stdout: String(decoding: (try? Data(contentsOf: stdoutURL)) ?? Data(), as: UTF8.self),
            stderr: String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
        )
    }
}
