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
        equals(literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// Whether these bytes are exactly `text`'s UTF-8: one `memcmp` against the string's own
    /// storage (every string the loop keeps is native, or a literal, and has it).
    func equals(utf8Of text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { equals($0.baseAddress, count: $0.count) }
            ?? elementsEqual(text.utf8)
    }

    /// Whether these bytes are the `byteCount` bytes at `bytes`, length first.
    private func equals(_ bytes: UnsafePointer<UInt8>?, count byteCount: Int) -> Bool {
        guard count == byteCount else { return false }
        guard count > 0 else { return true }
        // Both are non-empty, so both have an address.
        return memcmp(baseAddress!, bytes!, count) == 0
    }
}
