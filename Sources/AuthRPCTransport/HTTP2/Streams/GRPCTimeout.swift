/// A `grpc-timeout` value: at most eight ASCII digits and a unit (`H M S m u n`).
///
/// Held as its count and unit, not as text: the I/O thread writes the digits straight into the
/// header block it lays a request out in, so a call with a deadline builds no `String` for it
/// (that took about 200 instructions a call, in the standard library's small-string initializer).
package struct GRPCTimeout: Sendable, Equatable, CustomStringConvertible {
    private static let maxCount: Int64 = 99_999_999

    /// The count, 0 to 99,999,999.
    private let count: Int32
    /// The unit's ASCII letter.
    private let unit: UInt8

    private init(_ count: Int64, _ unit: Unicode.Scalar) {
        self.count = Int32(truncatingIfNeeded: count)
        self.unit = UInt8(ascii: unit)
    }

    /// The longest timeout the header can carry (99,999,999 hours): what a call sends whose
    /// deadline is beyond its clock's range.
    package static let longest = GRPCTimeout(maxCount, "H")

    /// The time remaining in the finest unit whose count fits in eight digits, rounded up so the
    /// server never sees less time than the client allows. A non-positive time is `1n`. `Int64`
    /// nanoseconds (292 years) always fit in hours.
    package init(nanoseconds: Int64) {
        guard nanoseconds > 0 else {
            self.init(1, "n")
            return
        }
        // Each division is by a constant, on 64 bits.
        let rest = nanoseconds - 1
        if nanoseconds <= Self.maxCount {
            self.init(nanoseconds, "n")
        } else if rest / 1_000 < Self.maxCount {
            self.init(rest / 1_000 + 1, "u")
        } else if rest / 1_000_000 < Self.maxCount {
            self.init(rest / 1_000_000 + 1, "m")
        } else if rest / 1_000_000_000 < Self.maxCount {
            self.init(rest / 1_000_000_000 + 1, "S")
        } else if rest / 60_000_000_000 < Self.maxCount {
            self.init(rest / 60_000_000_000 + 1, "M")
        } else {
            self.init(rest / 3_600_000_000_000 + 1, "H")
        }
    }

    /// The value as it goes on the wire, such as `100000u`.
    package var description: String {
        String(unsafeUninitializedCapacity: byteCount) { write(to: UnsafeMutableRawPointer($0.baseAddress!)) }
    }

    /// How many bytes the value takes: its digits and the unit.
    var byteCount: Int {
        // Comparisons, not a division per digit: the count has at most eight.
        let digits =
            count < 10_000
            ? (count < 100 ? (count < 10 ? 1 : 2) : (count < 1_000 ? 3 : 4))
            : (count < 1_000_000 ? (count < 100_000 ? 5 : 6) : (count < 10_000_000 ? 7 : 8))
        return digits + 1
    }

    /// Writes the digits and the unit to `destination`, which has room for ``byteCount`` bytes,
    /// and returns how many it wrote.
    @discardableResult
    func write(to destination: UnsafeMutableRawPointer) -> Int {
        let byteCount = byteCount
        var value = count
        for index in stride(from: byteCount - 2, through: 0, by: -1) {
            let digit = UInt8(truncatingIfNeeded: value % 10) &+ UInt8(ascii: "0")
            destination.storeBytes(of: digit, toByteOffset: index, as: UInt8.self)
            value /= 10
        }
        destination.storeBytes(of: unit, toByteOffset: byteCount - 1, as: UInt8.self)
        return byteCount
    }
}
