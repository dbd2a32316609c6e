extension String {
    /// The text in a NUL-terminated C character buffer filled by a C call.
    package init(nulTerminated buffer: [CChar]) {
        let end = buffer.firstIndex(of: 0) ?? buffer.endIndex
        self = String(decoding: buffer[..<end].lazy.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
