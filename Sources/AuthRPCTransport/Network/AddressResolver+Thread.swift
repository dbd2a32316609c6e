import AuthRPCSystem
import Foundation

extension AddressResolver {
    /// Resolves `target` on a thread of its own and calls `completion` there with the result:
    /// getaddrinfo(3) blocks for as long as the system's resolver takes (seconds when a DNS
    /// server does not answer), which must hold no caller and no thread of the cooperative pool.
    /// `completion` must not block.
    package static func resolveOffThread(
        _ target: HostAndPort,
        completion: @escaping @Sendable (Result<[SocketAddress], TransportFailure>) -> Void
    ) {
        let thread = Thread {
            CurrentThread.setName(threadName)
            completion(Result { () throws(TransportFailure) in try resolve(target) })
        }
        thread.name = threadName
        thread.start()
    }

    /// What `top -H`, perf and debuggers call a resolution's thread.
    static let threadName = "authrpc-resolve"
}
