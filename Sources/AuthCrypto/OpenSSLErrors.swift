import AuthRPCSystem
internal import COpenSSL

/// OpenSSL's thread-local error queue as text.
package enum OpenSSLErrors {
    /// Empties the queue and joins its entries; empty when nothing was queued.
    package static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(nulTerminated: buffer))
        }
        return messages.joined(separator: "; ")
    }
}
