#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns received header names and values into `String`s.
///
/// Text up to 15 UTF-8 bytes fits in a small `String` and costs no allocation; the longer
/// names and values that gRPC servers send on every response are matched against literals
/// (which are never allocated or reference-counted) instead of being copied into new storage.
enum ReceivedHeaderText {
    /// Longer than a small string, and on (nearly) every gRPC response.
    private static let common: [String] = [
        "application/grpc", "application/grpc+proto", "grpc-accept-encoding",
        "identity, deflate, gzip", "identity,deflate,gzip", "identity,gzip,deflate",
    ]

    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if bytes.count > 15 {
            for candidate in common where candidate.utf8.count == bytes.count {
                // Literals are contiguous UTF-8, so this compares memory, not element by element.
                if candidate.utf8.withContiguousStorageIfAvailable({
                    memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0
                }) == true {
                    return candidate
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
