import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP listener on 127.0.0.1 that answers its first connection with fixed bytes and then keeps
/// it open until the client closes it: a server that does not speak HTTP/2 and does not hang up,
/// so what the client concludes cannot depend on a close arriving in the same read.
final class RawAnswerServer: Sendable {
    let port: Int
    private let listener: Int32

    init(answer: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = fd
        let bytes = Array(answer.utf8)
        Thread.detachNewThread {
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            // Read until the client closes (or the listener is shut down), never answering more.
            var sink = [UInt8](repeating: 0, count: 4096)
            while recv(connection, &sink, sink.count, 0) > 0 {}
            close(connection)
        }
    }

    /// Stops accepting; a connection already answered ends when its client closes it.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
