#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Human-readable errno values ("connection refused").
package enum Errno {
    /// The text for `code`, lowercased to sit inside a sentence.
    package static func describe(_ code: Int32) -> String {
        switch code {
        case ECONNREFUSED: return "connection refused"
        case ETIMEDOUT: return "timed out"
        case ENETUNREACH: return "network unreachable"
        case EHOSTUNREACH: return "host unreachable"
        case ECONNRESET: return "connection reset by peer"
        case EPIPE: return "broken pipe"
        default: return String(cString: strerror(code)).lowercased()
        }
    }
}
