public import Foundation

/// A Python peer (the sandbox or the HTTP/2 fault server) running as a child process.
///
/// The peer is started with `--exit-with-stdin` and its standard input is a pipe this process
/// holds open, so the peer exits by itself when the test process ends, however it ends.
public final class PeerProcess: Sendable {
    /// The parsed JSON document the peer wrote once it was listening.
    public let info: [String: any Sendable]
    /// The peer's state directory (certificates, port files, its stderr log).
    public let stateDirectory: URL

    private let process: Process
    private let stdin: Pipe

    /// Starts `script` as ``init(script:name:arguments:launcher:priority:readyTimeout:)`` does,
    /// waiting for it on a thread of its own. On a loaded machine a peer can take many seconds to
    /// start, and waiting on one of the cooperative pool's threads (one per core) stalls every other
    /// test meanwhile.
    public static func launch(
        script: String,
        name: String,
        arguments: [String] = [],
        launcher: [String] = [],
        priority: PeerStartGate.Priority = .own,
        readyTimeout: Duration = .seconds(60)
    ) async throws -> PeerProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try PeerProcess(
                            script: script,
                            name: name,
                            arguments: arguments,
                            launcher: launcher,
                            priority: priority,
                            readyTimeout: readyTimeout
                        )
                    }
                )
            }.start()
        }
    }

    /// Starts `script` (a path relative to the package root) and waits for its `READY <json>` line.
    /// `launcher` runs Python (`ip netns exec NS`, say), when given. It starts when
    /// ``PeerStartGate/shared`` lets it (`priority` says who goes first); `readyTimeout` counts
    /// from then.
    public convenience init(
        script: String,
        name: String,
        arguments: [String] = [],
        launcher: [String] = [],
        priority: PeerStartGate.Priority = .own,
        readyTimeout: Duration = .seconds(60)
    ) throws {
        let started = try PeerStartGate.shared.starting(priority) {
            try Self.start(
                script: script,
                name: name,
                arguments: arguments,
                launcher: launcher,
                readyTimeout: readyTimeout
            )
        }
        self.init(started)
    }

    private init(_ started: Started) {
        info = started.info
        stateDirectory = started.stateDirectory
        process = started.process
        stdin = started.stdin
    }

    /// A peer that printed its `READY` line.
    private struct Started {
        let info: [String: any Sendable]
        let stateDirectory: URL
        let process: Process
        let stdin: Pipe
    }

    private static func start(
        script: String,
        name: String,
        arguments: [String],
        launcher: [String],
        readyTimeout: Duration
    ) throws -> Started {
        TestLogging.installed
        let root = PackageRoot.url
        let state = FileManager.default.temporaryDirectory
            .appendingPathComponent("authrpc-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let log = state.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)

        let process = Process()
        let command =
            launcher + [PackageRoot.python.path, root.appendingPathComponent(script).path, "--state-dir", state.path]
            + ["--exit-with-stdin"] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.currentDirectoryURL = root
        let stdin = Pipe.closedOnExec()
        let stdout = Pipe.closedOnExec()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()

        let ready = try Self.waitForReadyLine(
            stdout.fileHandleForReading,
            timeout: readyTimeout,
            process: process,
            log: log
        )
        let data = try Data(contentsOf: URL(fileURLWithPath: ready))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PeerError("\(name): \(ready) is not a JSON object")
        }
        return Started(
            info: object.mapValues { Self.sendable($0) },
            stateDirectory: state,
            process: process,
            stdin: stdin
        )
    }

    /// Stops the peer (SIGTERM, and its stdin closed) and returns; a thread of its own waits for
    /// the exit. A sandbox takes two seconds to stop its servers, more on a loaded machine, and
    /// tests stop peers in a `defer`, on one of the cooperative pool's threads (one per core):
    /// waiting there stalled every other test, long enough for their time limits to run out.
    public func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        let process = self.process
        Thread.detachNewThread { ChildExit.waitBlocking(for: process) }
    }

    /// Ends the peer with SIGKILL, as a crash would (no GOAWAY, no orderly close: the kernel
    /// resets or closes its connections), and waits for it to exit.
    public func kill() {
        sendSignal(process.processIdentifier, SIGKILL)
        ChildExit.waitBlocking(for: process)
        try? stdin.fileHandleForWriting.close()
    }

    /// The peer's stderr so far, for failure messages.
    public var log: String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory.path)) ?? []
        return files.filter { $0.hasSuffix(".log") }
            .compactMap { try? String(contentsOf: stateDirectory.appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
    }

    public func int(_ key: String) -> Int { info[key] as? Int ?? 0 }
    public func string(_ key: String) -> String { info[key] as? String ?? "" }

    private static func waitForReadyLine(
        _ handle: FileHandle,
        timeout: Duration,
        process: Process,
        log: URL
    ) throws -> String {
        // Read on a helper thread so a peer that never prints cannot hang the test run.
        let box = ReadyLine()
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty {
                    box.set(nil)
                    return
                }
                buffer.append(chunk)
                if let text = String(data: buffer, encoding: .utf8),
                    let line = text.split(separator: "\n").first(where: { $0.contains(" READY ") })
                {
                    box.set(String(line.split(separator: " ", maxSplits: 2).last ?? ""))
                    // Keep draining so the peer never blocks on a full pipe.
                    while !handle.availableData.isEmpty {}
                    return
                }
            }
        }
        guard let line = box.wait(timeout: timeout) else {
            let stderr = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if process.isRunning { process.terminate() }
            throw PeerError("peer did not become ready:\n\(stderr)")
        }
        return line
    }

    private static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let v as String: return v
        case let v as Int: return v
        case let v as Double: return v
        case let v as Bool: return v
        case let v as [Any]: return v.map { sendable($0) }
        case let v as [String: Any]: return v.mapValues { sendable($0) }
        default: return String(describing: value)
        }
    }
}

/// A failure to start or talk to a test peer.
public struct PeerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One line handed from the reader thread to the waiting test.
private final class ReadyLine: @unchecked Sendable {
    // `condition` guards `line` and `done`.
    private let condition = NSCondition()
    private var line: String?
    private var done = false

    func set(_ value: String?) {
        condition.lock()
        if !done {
            line = value
            done = true
        }
        condition.broadcast()
        condition.unlock()
    }

    func wait(timeout: Duration) -> String? {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
        condition.lock()
        defer { condition.unlock() }
        while !done {
            if !condition.wait(until: deadline) { return nil }
        }
        return line
    }
}

// Inside PeerProcess its own `kill()` would shadow the C function.
private func sendSignal(_ pid: Int32, _ signal: Int32) {
    _ = kill(pid, signal)
}
