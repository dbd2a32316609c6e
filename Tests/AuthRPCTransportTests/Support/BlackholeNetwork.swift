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

    init() throws {
        let unique = "\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        client = "authrpc-he-\(unique)"
        sink = "authrpc-hs-\(unique)"
        try Self.ip(["netns", "add", client])
        do {
            try Self.ip(["netns", "add", sink])
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
                try Self.ip(command)
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Removes both namespaces (the veth pair goes with them).
    func remove() {
        try? Self.ip(["netns", "del", client])
        try? Self.ip(["netns", "del", sink])
    }

    /// Runs `executable arguments` inside the client namespace, with `hosts` (if given) bound over
    /// /etc/hosts in a private mount namespace; returns its standard output.
    func run(
        _ executable: String,
        _ arguments: [String],
        hosts: String? = nil
    ) throws -> (status: Int32, output: String) {
        var command = [Self.ip!, "netns", "exec", client]
        if let hosts {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "authrpc-hosts-\(UUID().uuidString)"
            )
            try hosts.write(to: file, atomically: true, encoding: .utf8)
            command += [
                "unshare", "-m", "sh", "-c", #"mount --bind "$1" /etc/hosts && shift && exec "$@""#, "sh", file.path,
            ]
        }
        return try Self.run(command + [executable] + arguments)
    }

    private static func ip(_ arguments: [String]) throws {
        let result = try run([ip!] + arguments)
        guard result.status == 0 else {
            throw PeerError("ip \(arguments.joined(separator: " ")) failed: \(result.output)")
        }
    }

    private static func run(_ command: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe.closedOnExec()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let exit = ChildExit.waitBlocking(for: process)
        return (exit.code, String(decoding: data, as: UTF8.self))
    }
}
