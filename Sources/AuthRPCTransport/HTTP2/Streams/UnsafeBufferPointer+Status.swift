extension UnsafeBufferPointer<UInt8> {
    /// The HTTP status these bytes spell (`:status`: three ASCII digits), or 0 when they are not
    /// one: read in place, without a `String` for each response.
    var httpStatus: Int {
        guard count == 3 else { return 0 }
        var status = 0
        for byte in self {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return 0 }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return status
    }
}
