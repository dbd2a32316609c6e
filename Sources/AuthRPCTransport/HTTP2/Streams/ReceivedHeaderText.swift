#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns received header names and values into `String`s.
///
/// The names and values gRPC servers send on (nearly) every response are matched against
/// literals, which are never allocated or reference-counted: a match costs a length check and a
/// `memcmp`, where making a `String` validates the bytes as UTF-8 first (and allocates past 15
/// bytes). Anything else is copied into a new `String`.
enum ReceivedHeaderText {
    /// gRPC's own vocabulary, by UTF-8 length: `common[n]` holds the texts of `n` bytes.
    private static let common: [[String]] = {
        let texts = [
            "content-type", "application/grpc", "application/grpc+proto", "grpc-accept-encoding",
            "identity, deflate, gzip", "identity,deflate,gzip", "identity,gzip,deflate", "grpc-encoding",
            "identity", "gzip", "deflate", "grpc-status", "grpc-message", "0",
        ]
        var byLength = [[String]](repeating: [], count: texts.map(\.utf8.count).max()! + 1)
        for text in texts { byLength[text.utf8.count].append(text) }
        return byLength
    }()

    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if bytes.count < common.count, let base = bytes.baseAddress {
            for candidate in common[bytes.count] {
                // Literals are contiguous UTF-8, so this compares memory, not element by element.
                if candidate.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, base, bytes.count) == 0 })
                    == true
                {
                    return candidate
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
