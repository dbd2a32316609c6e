/// The `grpc-timeout` header: at most eight ASCII digits and a unit (`H M S m u n`).
enum GRPCTimeout {
    private static let maxValue: Int64 = 99_999_999

    /// A nanosecond and a second in attoseconds, a `Duration`'s own count.
    private static let nanosecond: Int128 = 1_000_000_000
    private static let second: Int128 = 1_000_000_000_000_000_000

    /// Encodes the time remaining in the finest unit whose count fits in eight digits, rounding
    /// up so the server never sees less time than the client allows. Non-positive times become `1n`.
    static func encode(_ remaining: Duration) -> String {
        // On the attosecond count: comparisons pick the unit, and one division by it counts.
        let attoseconds = remaining.attoseconds
        guard attoseconds > 0 else { return "1n" }
        if let text = counted(attoseconds, in: nanosecond, "n") ?? counted(attoseconds, in: 1_000 * nanosecond, "u")
            ?? counted(attoseconds, in: 1_000_000 * nanosecond, "m") ?? counted(attoseconds, in: second, "S")
            ?? counted(attoseconds, in: 60 * second, "M") ?? counted(attoseconds, in: 3_600 * second, "H")
        {
            return text
        }
        return text(maxValue, "H")
    }

    /// `attoseconds` counted in `unit`s, rounded up, with the unit's symbol; nil when the count
    /// takes more than eight digits. Inlined, so each division is by a constant.
    @inline(__always)
    private static func counted(_ attoseconds: Int128, in unit: Int128, _ symbol: Unicode.Scalar) -> String? {
        guard attoseconds <= Int128(maxValue) * unit else { return nil }
        return text(Int64((attoseconds - 1) / unit + 1), symbol)
    }

    /// `count` (0...99,999,999) in decimal, then `symbol`. Written out by hand: it is part of
    /// every call with a deadline, and nine ASCII bytes make a small string (no allocation),
    /// where an interpolation costs several hundred instructions.
    private static func text(_ count: Int64, _ symbol: Unicode.Scalar) -> String {
        var digits = 1
        var rest = count / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return String(unsafeUninitializedCapacity: digits + 1) { buffer in
            var value = count
            for index in stride(from: digits - 1, through: 0, by: -1) {
                buffer[index] = UInt8(truncatingIfNeeded: value % 10) &+ UInt8(ascii: "0")
                value /= 10
            }
            buffer[digits] = UInt8(ascii: symbol)
            return digits + 1
        }
    }
}
