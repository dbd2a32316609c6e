#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking TCP connection to a 127.0.0.1 port, for talking to test peers by hand.
public struct LoopbackSocket: Sendable {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port`, with a receive timeout of `timeoutSeconds`.
    public init(port: Int, timeoutSeconds: Int = 10) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw PeerError("socket failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            closeDescriptor(fd)
            throw PeerError("cannot connect to 127.0.0.1:\(port)")
        }
        self.fd = fd
    }

    /// Whether something accepts connections on 127.0.0.1:`port` now.
    public static func isListening(port: Int) -> Bool {
        guard let socket = try? LoopbackSocket(port: port) else { return false }
        socket.close()
        return true
    }

    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, bytes.count - sent) }
            guard count > 0 else { throw PeerError("write failed") }
            sent += count
        }
    }

    /// Everything until the peer closes (or the receive timeout passes).
    public func receiveAll(limit: Int = 16 << 20) throws -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while data.count < limit {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            data += buffer[0..<count]
        }
        return data
    }

    public func close() {
        closeDescriptor(fd)
    }
}

private func closeDescriptor(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}
