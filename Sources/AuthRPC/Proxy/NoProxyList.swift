import AuthRPCTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The targets that bypass a proxy: a parsed `no_proxy` list (``ProxyConfiguration`` documents
/// the syntax). A value without I/O: names are compared, never resolved.
struct NoProxyList: Sendable, Hashable {
    /// One entry of the list.
    enum Entry: Sendable, Hashable {
        /// `*`: every target.
        case everything
        /// A host name and the names under it; lower case, without a leading or trailing dot.
        case domain(String, port: Int?)
        /// An IP range (a single address is a full-length prefix): network bytes and prefix length.
        case addresses([UInt8], prefixLength: Int, port: Int?)
    }

    private(set) var entries: [Entry] = []

    static let empty = NoProxyList()

    private init() {}

    /// Parses a comma-separated list; `origin` names where it came from for the error.
    ///
    /// - Throws: `invalidArgument` naming the entry and what is wrong with it.
    init(parsing text: String, from origin: String) throws(RPCError) {
        for raw in text.split(separator: ",") {
            let entry = String(raw).trimmingASCIIWhitespace
            if entry.isEmpty { continue }
            do throws(NoProxyProblem) {
                entries.append(try Self.entry(entry))
            } catch {
                throw RPCError(
                    code: .invalidArgument,
                    message:
                        "invalid \(origin) entry '\(Printable.text(entry, limit: 100))': \(error.reason)"
                )
            }
        }
    }

    /// Whether a connection to `host` (a name, or an IP literal without brackets) at `port`
    /// bypasses the proxy.
    func contains(host: String, port: Int) -> Bool {
        let name = Self.normalized(host)
        let address = IPAddress.bytes(of: name)
        for entry in entries {
            switch entry {
            case .everything:
                return true
            case .domain(let domain, let entryPort):
                guard entryPort == nil || entryPort == port, address == nil else { continue }
                if name == domain || name.hasSuffix("." + domain) { return true }
            case .addresses(let network, let prefixLength, let entryPort):
                guard entryPort == nil || entryPort == port, let address, address.count == network.count else {
                    continue
                }
                if IPAddress.prefix(of: address, length: prefixLength) == network { return true }
            }
        }
        return false
    }

    private struct NoProxyProblem: Error {
        let reason: String
    }

    private static func entry(_ text: String) throws(NoProxyProblem) -> Entry {
        if text == "*" { return .everything }
        var host = Substring(text)
        var port: Int?
        // [v6] or [v6]:port; v6 without brackets has no port; else host:port when one colon.
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw NoProxyProblem(reason: "no closing ']'") }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !after.isEmpty {
                guard after.first == ":" else { throw NoProxyProblem(reason: "expected ':' and a port after ']'") }
                port = try portNumber(after.dropFirst())
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            port = try portNumber(host[host.index(after: colon)...])
            host = host[..<colon]
        }
        if let slash = host.firstIndex(of: "/") {
            let network = String(host[..<slash])
            guard let bytes = IPAddress.bytes(of: network) else {
                throw NoProxyProblem(reason: "a CIDR range needs an IP address before '/'")
            }
            guard let length = Int(host[host.index(after: slash)...]), (0...bytes.count * 8).contains(length) else {
                throw NoProxyProblem(reason: "the prefix length must be a number from 0 to \(bytes.count * 8)")
            }
            return .addresses(IPAddress.prefix(of: bytes, length: length), prefixLength: length, port: port)
        }
        if let bytes = IPAddress.bytes(of: String(host)) {
            return .addresses(bytes, prefixLength: bytes.count * 8, port: port)
        }
        var name = normalized(String(host))
        if name.hasPrefix("*.") { name.removeFirst(2) }
        while name.hasPrefix(".") { name.removeFirst() }
        guard !name.isEmpty else { throw NoProxyProblem(reason: "the host name is empty") }
        // A DNS name: letters, digits, '-', '_' and dots between labels.
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard allowed, !name.contains("..") else {
            throw NoProxyProblem(
                reason: "expected *, a host name, an IP address or a CIDR range, with an optional :port"
            )
        }
        return .domain(name, port: port)
    }

    private static func portNumber(_ text: Substring) throws(NoProxyProblem) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw NoProxyProblem(reason: "the port must be a number from 1 to 65535")
        }
        return port
    }

    /// Lower case, without a trailing dot (`Example.COM.` is `example.com`).
    private static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}

/// IP addresses as bytes, for comparing ranges.
enum IPAddress {
    /// The 4 or 16 network-order bytes of an IPv4 dotted quad or an IPv6 address; nil for
    /// anything else (a name, `1.2.3`).
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    /// `bytes` with every bit past the first `length` cleared.
    static func prefix(of bytes: [UInt8], length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(0xFF >> UInt8(kept))
        }
    }

    /// Whether `host` (a name or an IP literal) is this machine: `localhost` (and names under
    /// it, RFC 6761), `127.0.0.0/8` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        guard let address = bytes(of: name) else { return false }
        if address.count == 4 { return address[0] == 127 }
        return address == [UInt8](repeating: 0, count: 15) + [1]
    }
}
