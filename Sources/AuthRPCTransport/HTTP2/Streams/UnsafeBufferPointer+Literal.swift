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

    /// Whether these bytes are exactly `text`'s UTF-8: one `memcmp` against the string's own
    /// storage (every string the loop keeps is native, or a literal, and has it).
    func equals(utf8Of text: String) -> Bool {
        let matched = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard count == utf8.count else { return false }
            guard let baseAddress, count > 0 else { return true }
            return memcmp(baseAddress, utf8.baseAddress!, count) == 0
        }
        return matched ?? elementsEqual(text.utf8)
    }
}
