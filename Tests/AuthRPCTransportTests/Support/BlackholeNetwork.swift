import Foundation
import TestSupport

/// Two network namespaces this test makes and removes, joined by a veth pair: the client's
/// (`client`, 10.77.0.1 and 2001:db8:ffff::1 on its end) and a silent neighbour's (`sink`). The
/// client routes 198.51.100.0/24 and 2001:db8:77::/64 to the neighbour, which has forwarding off
/// and blackhole routes for both, so a SYN to any of those addresses leaves the client and is
/// dropped without an answer: an address that swallows SYNs, inside namespaces nobody else
/// uses. Nothing is ever sent outside them.
final class BlackholeNetwork: Sendable {
    let client: String
    let sink: String
    /// The client's own IPv4 address (a server in `client` can listen on it).
    static let clientIPv4 = "10.77.0.1"
    /// Addresses whose SYNs are dropped.
    static let blackholedIPv6 = ["2001:db8:77::1", "2001:db8:77::2", "2001:db8:77::3"]
    static let blackholedIPv4 = "198.51.100.1"

    static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Whether namespaces can be made here: `ip` is installed and this process is root.
    static var isAvailable: Bool { ip != nil && geteuid() == 0 }

    /// Makes the namespaces, runs `body` with them, and removes them however `body` ends.
    static func with<Value>(_ body: (BlackholeNetwork) async throws -> Value) async throws -> Value {
        let network = try await BlackholeNetwork()
        do {
            let result = try await body(network)
            await network.remove()
            return result
        } catch {
            await network.remove()
            throw error
        }
    }

    private init() async throws {
        let unique = "\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        client = "authrpc-he-\(unique)"
        sink = "authrpc-hs-\(unique)"
        try await Self.ip(["netns", "add", client])
        do {
            try await Self.ip(["netns", "add", sink])
            for command in [
                ["-n", client, "link", "set", "lo", "up"],
                ["-n", sink, "link", "set", "lo", "up"],
                ["-n", client, "link", "add", "veth-c", "type", "veth", "peer", "name", "veth-s", "netns", sink],
                ["-n", client, "addr", "add", "\(Self.clientIPv4)/24", "dev", "veth-c"],
                ["-n", client, "addr", "add", "2001:db8:ffff::1/64", "dev", "veth-c", "nodad"],
                ["-n", client, "link", "set", "veth-c", "up"],
                ["-n", sink, "addr", "add", "10.77.0.2/24", "dev", "veth-s"],
                ["-n", sink, "addr", "add", "2001:db8:ffff::2/64", "dev", "veth-s", "nodad"],
                ["-n", sink, "link", "set", "veth-s", "up"],
                ["-n", client, "route", "add", "198.51.100.0/24", "via", "10.77.0.2"],
                ["-n", client, "-6", "route", "add", "2001:db8:77::/64", "via", "2001:db8:ffff::2"],
                ["-n", sink, "route", "add", "blackhole", "198.51.100.0/24"],
                ["-n", sink, "-6", "route", "add", "blackhole", "2001:db8:77::/64"],
            ] {
                try await Self.ip(command)
            }
        } catch {
            await remove()
            throw error
        }
    }

    /// Removes both namespaces (the veth pair goes with them).
    private func remove() async {
        try? await Self.ip(["netns", "del", client])
        try? await Self.ip(["netns", "del", sink])
    }

    /// Runs `executable arguments` inside the client namespace, with `hosts` (if given) bound over
    /// /etc/hosts in a private mount namespace.
    func run(
        _ executable: String,
        _ arguments: [String],
        hosts: String? = nil
    ) async throws -> ChildProcessResult {
        var command = ["netns", "exec", client]
        var hostsFile: URL?
        if let hosts {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "authrpc-hosts-\(UUID().uuidString)"
            )
            try hosts.write(to: file, atomically: true, encoding: .utf8)
            hostsFile = file
            command += [
                "unshare", "-m", "sh", "-c", #"mount --bind "$1" /etc/hosts && shift && exec "$@""#, "sh", file.path,
            ]
        }
        defer { hostsFile.map { try? FileManager.default.removeItem(at: $0) } }
        return try await ChildProcess.run(
            URL(fileURLWithPath: Self.ip!),
            command + [executable] + arguments,
            timeout: .seconds(120)
        )
    }

    private static func ip(_ arguments: [String]) async throws {
        let result = try await ChildProcess.run(URL(fileURLWithPath: ip!), arguments, timeout: .seconds(60))
        guard result.status == 0 else {
            throw PeerError("ip \(arguments.joined(separator: " ")) failed: \(result.stdout)\(result.stderr)")
        }
    }
}
