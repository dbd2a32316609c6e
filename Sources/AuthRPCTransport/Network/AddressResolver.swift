import AuthRPCSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves host names with getaddrinfo(3), IPv4 and IPv6, in the order the system prefers
/// (RFC 6724's destination address selection, as glibc and macOS apply it).
package enum AddressResolver {
    /// The addresses of `target`, resolved now (blocking: call it off the cooperative pool).
    package static func resolve(_ target: HostAndPort) throws(TransportFailure) -> [SocketAddress] {
        try resolve(host: target.host, port: target.port, numericOnly: false)
    }

    /// The addresses of `host` at `port`; with `numericOnly`, only an IP literal is accepted
    /// and nothing is looked up.
    static func resolve(host: String, port: Int, numericOnly: Bool) throws(TransportFailure) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV | (numericOnly ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? Errno.describe(errno) : String(cString: gai_strerror(status))
            throw .resolutionFailed(host: host, reason: reason.lowercased())
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            if let address = current.pointee.ai_addr,
                current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6
            {
                addresses.append(SocketAddress(address, length: current.pointee.ai_addrlen))
            }
            node = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw .resolutionFailed(host: host, reason: "no IPv4 or IPv6 address")
        }
        return addresses
    }

    /// `true` when `host` is an IPv4 or IPv6 literal rather than a DNS name.
    package static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
