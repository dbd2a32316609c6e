public import Foundation

/// Debian's tinyproxy, started for one test with a generated configuration (never as the system
/// service): on 127.0.0.1 at a free port, optionally with Basic authentication, allowing CONNECT
/// to the given ports only, and resolving names through a hosts file of its own (it runs in a
/// private mount namespace with that file bound over /etc/hosts), so a test can send it to
/// production-shaped names.
///
/// It stops with ``stop()``, and by itself when the test process ends (its watchdog reads a pipe
/// this process holds).
public final class Tinyproxy: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// Its directory: configuration, hosts file, log.
    public let directory: URL
    private let process: Process
    private let stdin: Pipe

    /// Whether tinyproxy can be started here: the binary is installed and this process may make
    /// a mount namespace (root).
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/tinyproxy")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") && geteuid() == 0
    }

    /// `http://127.0.0.1:port`, with `user:password@` when given.
    public func url(user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)"
    }

    /// What tinyproxy logged (at LogLevel Info: each connection and each request line).
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("tinyproxy.log"), encoding: .utf8)) ?? ""
    }

    /// Starts tinyproxy and waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - basicAuth: The one user and password it accepts (`BasicAuth`; tinyproxy takes
    ///     `[-a-z0-9._]` only), or nil for none.
    ///   - connectPorts: The ports CONNECT may reach (`ConnectPort`); others are refused (403).
    ///   - hosts: Names it resolves, to addresses (its /etc/hosts, with `localhost` added).
    public static func start(
        basicAuth: (user: String, password: String)? = nil,
        connectPorts: [Int],
        hosts: [String: String] = [:]
    ) async throws -> Tinyproxy {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        var lastError: any Error = PeerError("tinyproxy did not start")
                        // A port found free can be taken before tinyproxy binds it: try again.
                        for _ in 0..<3 {
                            do {
                                return try Tinyproxy(basicAuth: basicAuth, connectPorts: connectPorts, hosts: hosts)
                            } catch {
                                lastError = error
                            }
                        }
                        throw lastError
                    }
                )
            }.start()
        }
    }

    private init(basicAuth: (user: String, password: String)?, connectPorts: [Int], hosts: [String: String]) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("authrpc-tinyproxy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = Ports.closed()
        var configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            LogFile "\(directory.appendingPathComponent("tinyproxy.log").path)"
            LogLevel Info
            MaxClients 100
            Allow 127.0.0.1

            """
        if let basicAuth { configuration += "BasicAuth \(basicAuth.user) \(basicAuth.password)\n" }
        for connectPort in connectPorts { configuration += "ConnectPort \(connectPort)\n" }
        let configurationFile = directory.appendingPathComponent("tinyproxy.conf")
        try configuration.write(to: configurationFile, atomically: true, encoding: .utf8)
        var hostsText = "127.0.0.1 localhost\n::1 localhost\n"
        for (name, address) in hosts.sorted(by: { $0.key < $1.key }) { hostsText += "\(address) \(name)\n" }
        let hostsFile = directory.appendingPathComponent("hosts")
        try hostsText.write(to: hostsFile, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        // The watchdog: tinyproxy runs until this process's end of the pipe closes; the shell
        // ends when tinyproxy does (so a bad configuration shows at once).
        process.arguments = [
            "-m", "sh", "-c",
            // (A background job's standard input is /dev/null unless redirected: hence fd 3.)
            #"mount --bind "$1" /etc/hosts && exec 3<&0 && { tinyproxy -d -c "$2" </dev/null & pid=$!; { cat <&3 >/dev/null; kill $pid; } & wait $pid; }"#,
            "sh", hostsFile.path, configurationFile.path,
        ]
        let stdin = Pipe.closedOnExec()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(
            forWritingTo: {
                let url = directory.appendingPathComponent("stderr.log")
                _ = FileManager.default.createFile(atPath: url.path, contents: nil)
                return url
            }()
        )
        try process.run()
        // Only a tinyproxy that never listens reaches this, however loaded the machine is.
        let deadline = Date().addingTimeInterval(60)
        while !LoopbackSocket.isListening(port: port) {
            guard process.isRunning, Date() < deadline else {
                try? stdin.fileHandleForWriting.close()
                process.terminate()
                let log = (try? String(contentsOf: directory.appendingPathComponent("stderr.log"), encoding: .utf8))
                throw PeerError("tinyproxy did not start: \(log ?? "")")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        self.port = port
        self.directory = directory
        self.process = process
        self.stdin = stdin
    }

    /// Stops tinyproxy (its watchdog sees the pipe close) and returns; a thread of its own waits
    /// for the exit, as ``PeerProcess/stop()`` does and for the same reason.
    public func stop() {
        try? stdin.fileHandleForWriting.close()
        let process = self.process
        Thread.detachNewThread { ChildExit.waitBlocking(for: process) }
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
    }
}
