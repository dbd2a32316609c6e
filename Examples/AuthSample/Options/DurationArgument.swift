import ArgumentParser

/// A time limit on the command line: a number of seconds (`30`, `2.5`), or a number with a unit
/// (`500ms`, `3s`, `2m`, `1h`), from 1ms to 1h. Anything else is a usage error that says what is
/// accepted.
struct DurationArgument: Sendable, CustomStringConvertible {
    /// The time limit.
    let duration: Duration
    /// As written.
    let description: String

    /// The longest limit accepted, in milliseconds (an hour): a call or sign-in meant to wait
    /// longer is a mistake, and a bounded value keeps every later computation far from overflowing.
    static let longestMilliseconds: Double = 3_600_000

    private static let units: [(suffix: String, milliseconds: Double)] = [
        ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000),
    ]

    /// Parses `text` (for an option's `transform`).
    static func parse(_ text: String) throws(ValidationError) -> DurationArgument {
        let expected = "expected a duration such as 30 (seconds), 500ms, 3s, 2m or 1h"
        // Bounded before anything else is done with it; 32 characters hold every valid value.
        guard text.utf8.count <= 32 else { throw ValidationError(expected) }
        let unit = units.first { text.hasSuffix($0.suffix) && text.dropLast($0.suffix.count).last?.isNumber == true }
        let number = unit.map { String(text.dropLast($0.suffix.count)) } ?? text
        // Digits with an optional fraction only: no sign, exponent, hex, "nan" or "inf".
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count),
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let value = Double(number)
        else {
            throw ValidationError(expected)
        }
        let milliseconds = (value * (unit?.milliseconds ?? 1000)).rounded()
        guard milliseconds >= 1 else { throw ValidationError("shorter than the shortest limit, 1ms") }
        guard milliseconds <= longestMilliseconds else { throw ValidationError("longer than the longest limit, 1h") }
        return DurationArgument(duration: .milliseconds(Int64(milliseconds)), description: text)
    }

    /// A limit of `seconds`, for an option's default.
    init(seconds: Int64) {
        self.init(duration: .seconds(seconds), description: String(seconds))
    }

    private init(duration: Duration, description: String) {
        self.duration = duration
        self.description = description
    }
}
