import AuthRPCSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a connection's socket goes: an IPv4 or IPv6 address with a port, or a unix-domain
/// socket (a file path or, on Linux, a name in the abstract namespace).
package struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The `sockaddr` as `connect(2)` takes it.
    private let bytes: [UInt8]
    /// `AF_INET`, `AF_INET6` or `AF_UNIX`.
    let family: Int32

    /// Copies a `sockaddr` the system produced (getaddrinfo, getpeername).
    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        family = Int32(address.pointee.sa_family)
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// An IP literal (IPv4 dotted quad, or IPv6 with an optional `%zone`) and a port. Nothing is
    /// looked up.
    ///
    /// - Throws: ``HTTP2Error/invalidAddress(_:)`` when `ipAddress` is not an IP literal or the
    ///   port is not from 0 to 65535.
    package init(ipAddress: String, port: Int) throws(HTTP2Error) {
        guard (0...65535).contains(port) else { throw .invalidAddress("port \(port) is not from 0 to 65535") }
        guard let address = try? AddressResolver.resolve(host: ipAddress, port: port, numericOnly: true).first else {
            throw .invalidAddress("'\(ipAddress)' is not an IPv4 or IPv6 address")
        }
        self = address
    }

    /// The longest unix-domain socket path or abstract name, in bytes: `sun_path` less one byte
    /// (the terminating NUL of a path, the leading NUL of an abstract name): 107 on Linux, 103
    /// on macOS.
    package static let maximumUnixPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The unix-domain socket at `path` (gRPC's `unix:` targets), relative or absolute.
    ///
    /// - Throws: ``HTTP2Error/invalidAddress(_:)`` when the path is empty, holds a NUL byte or
    ///   is longer than ``maximumUnixPathLength`` bytes.
    package init(unixPath path: String) throws(HTTP2Error) {
        let name = Array(path.utf8)
        guard !name.isEmpty else { throw .invalidAddress("the unix socket path is empty") }
        guard !name.contains(0) else { throw .invalidAddress("the unix socket path contains a NUL byte") }
        guard name.count <= Self.maximumUnixPathLength else {
            throw .invalidAddress(
                "the unix socket path is \(name.count) bytes long; sun_path holds at most \(Self.maximumUnixPathLength)"
            )
        }
        self.init(unixName: name + [0])
    }

    /// The unix-domain socket called `name` in Linux's abstract namespace (gRPC's
    /// `unix-abstract:` targets): no file, only the name, every byte of which counts.
    ///
    /// - Throws: ``HTTP2Error/invalidAddress(_:)`` when the name is empty or longer than
    ///   ``maximumUnixPathLength`` bytes, and on systems other than Linux.
    package init(abstractUnixName name: String) throws(HTTP2Error) {
        #if os(Linux)
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw .invalidAddress("the abstract unix socket name is empty") }
        guard bytes.count <= Self.maximumUnixPathLength else {
            throw .invalidAddress(
                "the abstract unix socket name is \(bytes.count) bytes long; sun_path holds at most \(Self.maximumUnixPathLength)"
            )
        }
        self.init(unixName: [0] + bytes)
        #else
        throw .invalidAddress("abstract unix sockets exist only on Linux")
        #endif
    }

    /// `sun_path` holds `name` as given: a path with its NUL, or NUL and an abstract name (whose
    /// end only the address length marks).
    private init(unixName name: [UInt8]) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = Self.unixPathOffset + name.count
        #if canImport(Darwin)
        address.sun_len = UInt8(length)
        #endif
        family = AF_UNIX
        bytes = withUnsafeBytes(of: &address) { Array($0.prefix(length)) }
    }

    private static let unixPathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!

    /// Calls `body` with the address as `connect(2)` takes it.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var storage = sockaddr_storage()
        return withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyBytes(from: bytes)
            return body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
    }

    /// `127.0.0.1:443`, `[::1]:443`, `unix:/run/app.sock` or `unix-abstract:name` (bytes a
    /// terminal would act on shown as `?`).
    package var description: String {
        if family == AF_UNIX {
            let path = bytes.dropFirst(Self.unixPathOffset)
            if path.first == 0 { return "unix-abstract:" + Self.printable(path.dropFirst()) }
            return "unix:" + Self.printable(path.prefix { $0 != 0 })
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

    private static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
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
