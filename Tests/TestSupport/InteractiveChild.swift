import AuthRPCSystem
public import Foundation

extension ChildProcess {
    /// Starts `executable` for a test that talks to it while it runs, a line at a time (commands on
    /// its standard input, answers on its standard output); its standard error is this process's.
    /// The pipes close on exec, so a child another test starts meanwhile cannot hold them open.
    public static func start(_ executable: URL, _ arguments: [String]) throws -> InteractiveChild {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let stdin = Pipe.closedOnExec()
        let stdout = Pipe.closedOnExec()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.run()
        return InteractiveChild(
            process: process,
            input: stdin.fileHandleForWriting,
            output: stdout.fileHandleForReading
        )
    }
}

/// A child started by ``ChildProcess/start(_:_:)``: lines to its input, its output's lines back.
public final class InteractiveChild: Sendable {
    private let process: Process
    private let input: FileHandle
    private let lines = LineQueue()

    fileprivate init(process: Process, input: FileHandle, output: FileHandle) {
        self.process = process
        self.input = input
        let lines = self.lines
        // A thread of its own reads, so no thread of the cooperative pool waits on the pipe.
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty {
                    lines.end()
                    return
                }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer = Data(buffer[buffer.index(after: newline)...])
                }
            }
        }
    }

    /// The child's program name, for messages.
    private var name: String { process.executableURL?.lastPathComponent ?? "child" }

    /// The child's next line of output (without its newline).
    ///
    /// - Throws: `PeerError` when the child ended its output first, or said nothing for `limit`.
    public func nextLine(within limit: Duration = .seconds(120)) async throws -> String {
        let deadline = ContinuousClock.now + limit
        while true {
            switch lines.take() {
            case .line(let line): return line
            case .ended:
                let exit = await ChildExit.wait(for: process, until: ContinuousClock.now + .seconds(5))
                throw PeerError("\(name) exited (\(exit.map { "status \($0.code)" } ?? "still running"))")
            case .none:
                guard ContinuousClock.now < deadline else { throw PeerError("\(name) said nothing for \(limit)") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Writes `line` and a newline to the child's input.
    public func write(line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// Closes the child's input: the end of its commands.
    public func closeInput() {
        try? input.close()
    }
}

/// Lines handed from the reader thread to the test.
private final class LineQueue: Sendable {
    enum Next {
        case line(String)
        case ended
        case none
    }

    private struct State {
        var lines: [String] = []
        var ended = false
    }

    private let state = Locked(State())

    func append(_ line: String) { state.withLock { $0.lines.append(line) } }
    func end() { state.withLock { $0.ended = true } }

    func take() -> Next {
        state.withLock { state in
            if !state.lines.isEmpty { return .line(state.lines.removeFirst()) }
            return state.ended ? .ended : .none
        }
    }
}
