#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are exactly `literal`'s: one `memcmp` of two byte buffers, where a
    /// compare with a `String`'s UTF-8 view would walk the view one code unit at a time (on the
    /// hot path, for every response's `:status` and every request's credential fields).
    func equals(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        guard let baseAddress, count > 0 else { return true }
        return memcmp(baseAddress, literal.utf8Start, count) == 0
    }
}
