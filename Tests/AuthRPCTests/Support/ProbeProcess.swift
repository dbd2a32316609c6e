import Foundation
import TestSupport

/// The ChannelProbe executable (Tests/ChannelProbe) run in a mount namespace of its own whose
/// /etc/hosts is `hostsFile` (bind-mounted, so rewriting the file in place is what the probe's
/// resolver reads next): a production-shaped name for loopback backends, without touching the
/// machine's hosts file. The test talks to it a line at a time.
final class ProbeProcess: Sendable {
    private let child: InteractiveChild

    /// Whether this machine lets a test make a mount namespace (it needs root: CI and the
    /// sandbox run as root).
    static var canUseNamespaces: Bool { geteuid() == 0 && FileManager.default.isExecutableFile(atPath: unshare) }

    private static let unshare = "/usr/bin/unshare"

    init(hostsFile: URL, arguments: [String]) throws {
        // sh's $0 is the hosts file, "$@" the probe and its arguments.
        child = try ChildProcess.start(
            URL(fileURLWithPath: Self.unshare),
            ["--mount", "/bin/sh", "-c", "mount --bind \"$0\" /etc/hosts && exec \"$@\"", hostsFile.path]
                + [PackageRoot.builtProduct("ChannelProbe").path] + arguments
        )
    }

    /// The probe's next line of output.
    func nextLine(within limit: Duration = .seconds(120)) async throws -> String {
        try await child.nextLine(within: limit)
    }

    /// Sends one command and returns the probe's answer.
    func send(_ command: String) async throws -> String {
        child.write(line: command)
        return try await nextLine()
    }

    /// `calls PREFIX COUNT CONCURRENCY`: the answer's ok, failed and per-server counts.
    func calls(_ prefix: String, count: Int, concurrency: Int = 1) async throws -> ProbeTally {
        let answer = try await send("calls \(prefix) \(count) \(concurrency)")
        guard let tally = ProbeTally(answer) else { throw PeerError("unexpected answer: \(answer)") }
        return tally
    }

    /// Closes its input: it closes its channel and exits by itself.
    func stop() {
        child.closeInput()
    }
}

/// `DONE PREFIX ok=N failed=M servers=NAME:N,... codes=...`
struct ProbeTally: CustomStringConvertible {
    var ok = 0
    var failed = 0
    var servers: [String: Int] = [:]
    let description: String

    init?(_ line: String) {
        description = line
        let words = line.split(separator: " ")
        guard words.first == "DONE" else { return nil }
        for word in words.dropFirst(2) {
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "ok": ok = Int(parts[1]) ?? -1
            case "failed": failed = Int(parts[1]) ?? -1
            case "servers":
                for entry in parts[1].split(separator: ",") {
                    let pair = entry.split(separator: ":")
                    if pair.count == 2 { servers[String(pair[0])] = Int(pair[1]) }
                }
            default: break
            }
        }
    }
}

/// A hosts file of the test's own, rewritten in place (the bind mount follows the inode).
struct HostsFile {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("authrpc-hosts-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: Data("127.0.0.1 localhost\n".utf8)) else {
            throw PeerError("cannot write \(url.path)")
        }
    }

    /// `127.0.0.1 localhost`, then each address with its names.
    func write(_ entries: [(String, String)]) throws {
        let text = (["127.0.0.1 localhost"] + entries.map { "\($0.0) \($0.1)" }).joined(separator: "\n") + "\n"
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
