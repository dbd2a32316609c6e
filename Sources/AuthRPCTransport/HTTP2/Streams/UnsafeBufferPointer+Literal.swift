extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are exactly `literal`'s: a compare of two byte buffers, where a
    /// compare with a `String`'s UTF-8 view would walk the view one code unit at a time (on the
    /// hot path, for every response's `:status` and every request's credential fields).
    func equals(_ literal: StaticString) -> Bool {
        count == literal.utf8CodeUnitCount
            && elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
