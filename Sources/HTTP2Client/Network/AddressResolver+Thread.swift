import AuthRPCSystem
import Foundation

extension AddressResolver {
    /// Resolves `target` on a thread of its own and answers when done: getaddrinfo(3) blocks for
    /// as long as the system's resolver takes (seconds when a DNS server does not answer), which
    /// must hold no thread of the cooperative pool and no caller.
    package static func resolveOffThread(_ target: HTTP2Target) async -> Result<[SocketAddress], HTTP2Error> {
        await withUnsafeContinuation { continuation in
            let thread = Thread {
                CurrentThread.setName(threadName)
                continuation.resume(returning: Result { () throws(HTTP2Error) in try resolve(target) })
            }
            thread.name = threadName
            thread.start()
        }
    }

    /// What `top -H`, perf and debuggers call a resolution's thread.
    static let threadName = "authrpc-resolve"
}
