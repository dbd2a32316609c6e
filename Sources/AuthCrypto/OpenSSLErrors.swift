import AuthRPCSystem
internal import COpenSSL

/// OpenSSL's thread-local error queue as text.
package enum OpenSSLErrors {
    /// The most entries a message names; the queue holds up to 16.
    static let maximumEntries = 4

    /// Empties the queue and joins its entries (``summary(_:)``); empty when nothing was queued.
    package static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(nulTerminated: buffer))
        }
        return summary(messages)
    }

    /// The queue's entries joined, each once, in the order OpenSSL queued them (the deepest cause
    /// first). A peer's malformed input can fill the queue, mostly with one entry again and again
    /// ("nested asn1 error" for each enclosing structure), so past ``maximumEntries`` distinct
    /// entries the message keeps the first ones and the last (the outermost step that failed),
    /// and says how many it left out.
    static func summary(_ messages: [String]) -> String {
        var distinct: [String] = []
        for message in messages where !distinct.contains(message) {
            distinct.append(message)
        }
        guard distinct.count > maximumEntries, let last = distinct.last else {
            return distinct.joined(separator: "; ")
        }
        let left = distinct.count - maximumEntries
        return (distinct.prefix(maximumEntries - 1) + ["(\(left) more)", last]).joined(separator: "; ")
    }
}
