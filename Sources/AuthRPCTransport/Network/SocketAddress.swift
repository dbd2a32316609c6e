import AuthRPCSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An address a connection's socket goes to: an IPv4 or IPv6 address with a port, or a
/// unix-domain socket (a path, or on Linux a name in the abstract namespace).
package struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The `sockaddr` bytes, as `connect(2)` takes them.
    private let bytes: [UInt8]
    /// `AF_INET`, `AF_INET6` or `AF_UNIX`.
    let family: Int32

    /// Copies a `sockaddr` the system produced (getaddrinfo, accept, getpeername).
    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        family = Int32(address.pointee.sa_family)
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// An IP address (IPv4 dotted quad, or IPv6 with an optional `%zone`) and a port.
    ///
    /// - Throws: ``TransportFailure/invalidAddress(_:)`` when `ipAddress` is not an IP literal or
    ///   `port` is not from 0 to 65535. Nothing is looked up.
    package init(ipAddress: String, port: Int) throws(TransportFailure) {
        guard (0...65535).contains(port) else {
            throw .invalidAddress("port \(port) is not from 0 to 65535")
        }
        // IPv4 strictly as a dotted quad (getaddrinfo would also take 1.2.3 and 0x7f.1); IPv6
        // through getaddrinfo, which knows zone indexes (fe80::1%eth0).
        var v4 = in_addr()
        guard ipAddress.contains(":") || inet_pton(AF_INET, ipAddress, &v4) == 1,
            let address = try? AddressResolver.resolve(host: ipAddress, port: port, numericOnly: true).first
        else {
            throw .invalidAddress("'\(Printable.text(ipAddress, limit: 100))' is not an IPv4 or IPv6 address")
        }
        self = address
    }

    /// The longest unix-domain socket path (or abstract name), in bytes: `sun_path` less the
    /// terminating NUL (107 bytes on Linux, 103 on macOS).
    package static let maximumUnixPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A unix-domain socket at `path` (gRPC's `unix:` targets).
    ///
    /// - Throws: ``TransportFailure/invalidAddress(_:)`` when `path` is empty, holds a NUL byte, or is
    ///   longer than ``maximumUnixPathLength`` bytes.
    package init(unixPath path: String) throws(TransportFailure) {
        let name = Array(path.utf8)
        guard !name.isEmpty else { throw .invalidAddress("the unix socket path is empty") }
        guard !name.contains(0) else { throw .invalidAddress("the unix socket path contains a NUL byte") }
        guard name.count <= Self.maximumUnixPathLength else {
            throw .invalidAddress(
                "the unix socket path is \(name.count) bytes long; the system allows at most \(Self.maximumUnixPathLength)"
            )
        }
        self.init(unixBytes: name, abstract: false)
    }

    /// A unix-domain socket in Linux's abstract namespace (gRPC's `unix-abstract:` targets): no
    /// file, the name is all there is. Every byte of `name` counts, NUL bytes included.
    ///
    /// - Throws: ``TransportFailure/invalidAddress(_:)`` when the name is empty or longer than
    ///   ``maximumUnixPathLength`` bytes, and on systems other than Linux, which have no
    ///   abstract namespace.
    package init(abstractUnixName name: String) throws(TransportFailure) {
        #if os(Linux)
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw .invalidAddress("the abstract unix socket name is empty") }
        guard bytes.count <= Self.maximumUnixPathLength else {
            throw .invalidAddress(
                "the abstract unix socket name is \(bytes.count) bytes long; the system allows at most \(Self.maximumUnixPathLength)"
            )
        }
        self.init(unixBytes: bytes, abstract: true)
        #else
        throw .invalidAddress("abstract unix sockets exist only on Linux")
        #endif
    }

    private init(unixBytes name: [UInt8], abstract: Bool) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        // The abstract namespace: a leading NUL, then the name; the length says where it ends.
        let pathBytes = abstract ? [0] + name : name + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: pathBytes)
        }
        #if canImport(Darwin)
        address.sun_len = UInt8(pathOffset + pathBytes.count)
        #endif
        let length = pathOffset + (abstract ? pathBytes.count : name.count + 1)
        family = AF_UNIX
        bytes = withUnsafeBytes(of: &address) { Array($0.prefix(length)) }
    }

    /// Whether connecting here goes over the network (TCP) rather than to a unix-domain socket.
    var isInternet: Bool { family == AF_INET || family == AF_INET6 }

    /// Calls `body` with the address as `connect(2)` takes it.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var storage = sockaddr_storage()
        return withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyBytes(from: bytes)
            return body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
    }

    /// `127.0.0.1:443`, `[::1]:443`, `unix:/run/app.sock` or `unix-abstract:name`.
    package var description: String {
        if family == AF_UNIX {
            let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
            let path = bytes.dropFirst(pathOffset)
            if path.first == 0 {
                return "unix-abstract:" + Printable.text(String(decoding: path.dropFirst(), as: UTF8.self), limit: 200)
            }
            return "unix:" + Printable.text(String(decoding: path.prefix { $0 != 0 }, as: UTF8.self), limit: 200)
        }
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
        let port = String(nulTerminated: service)
        return family == AF_INET6 ? "[\(hostText)]:\(port)" : "\(hostText):\(port)"
    }

    /// The address at the other end of connected socket `fd`, if the system says.
    static func peer(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
    }
}
