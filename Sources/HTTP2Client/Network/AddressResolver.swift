import AuthRPCSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One address a host name resolved to.
struct ResolvedAddress: CustomStringConvertible {
    private var storage = sockaddr_storage()
    private var length: socklen_t
    let family: Int32

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        self.length = length
        self.family = Int32(address.pointee.sa_family)
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
    }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// `127.0.0.1:443` or `[::1]:443`.
    var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withSockAddr { address, length in
            getnameinfo(
                address,
                length,
                &host,
                socklen_t(host.count),
                &service,
                socklen_t(service.count),
                NI_NUMERICHOST | NI_NUMERICSERV
            )
        }
        guard status == 0 else { return "address" }
        let hostText = String(nulTerminated: host)
        return family == AF_INET6
            ? "[\(hostText)]:\(String(nulTerminated: service))" : "\(hostText):\(String(nulTerminated: service))"
    }
}

/// Resolves host names with getaddrinfo(3), IPv4 and IPv6, in the order the system prefers.
enum AddressResolver {
    static func resolve(_ target: HTTP2Target) throws(HTTP2Error) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(target.host, String(target.port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? Errno.describe(errno) : String(cString: gai_strerror(status))
            throw .resolutionFailed(host: target.host, reason: reason.lowercased())
        }
        defer { freeaddrinfo(first) }
        var addresses: [ResolvedAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            if let address = current.pointee.ai_addr,
                current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6
            {
                addresses.append(ResolvedAddress(address, length: current.pointee.ai_addrlen))
            }
            node = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw .resolutionFailed(host: target.host, reason: "no IPv4 or IPv6 address")
        }
        return addresses
    }

    /// `true` when `host` is an IPv4 or IPv6 literal rather than a DNS name.
    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
