import Foundation

/// The members of a JSON object from a peer, read strictly: a member of the wrong type is an
/// error, never silently absent, and booleans are never taken for numbers.
struct JSONFields {
    private let members: [String: Any]

    /// The object in `data`; `nil` when `data` is not a JSON object.
    init?(parsing data: Data) {
        guard let members = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        self.members = members
    }

    /// A member of the wrong type (the caller names it; its value is never quoted).
    struct Mismatch: Error {}

    /// Whether the member is present and not `null`.
    func contains(_ key: String) -> Bool {
        members[key].map { !($0 is NSNull) } ?? false
    }

    /// The string member `key`; `nil` when absent or `null`.
    func string(_ key: String) throws(Mismatch) -> String? {
        guard contains(key) else { return nil }
        guard let text = members[key] as? String else { throw Mismatch() }
        return text
    }

    /// The numeric member `key` (a JSON number, or a decimal number sent as a string, as some
    /// servers send `expires_in` and `interval`); `nil` when absent or `null`.
    func number(_ key: String) throws(Mismatch) -> Double? {
        guard contains(key) else { return nil }
        guard let number = JSONNumber.value(of: members[key]) else { throw Mismatch() }
        return number
    }
}

/// JSON numbers as servers send them.
package enum JSONNumber {
    /// The number in `value`: a JSON number (not `true` or `false`), or a string holding a decimal
    /// number (`"3600"`, `"1.5e2"`); `nil` otherwise, including for `"NaN"`, `"inf"` and `"0x10"`,
    /// which a decimal grammar does not produce. A decimal too large for a `Double` is infinite.
    package static func value(of value: Any?) -> Double? {
        if let text = value as? String {
            return isDecimal(text) ? Double(text) : nil
        }
        guard let number = value as? NSNumber,
            // JSONSerialization hands booleans over as NSNumbers whose type is `char`.
            String(cString: number.objCType) != "c"
        else { return nil }
        return number.doubleValue
    }

    /// `-?digits(.digits)?([eE][+-]?digits)?`, at most 64 characters.
    private static func isDecimal(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        var index = 0
        func digits() -> Bool {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index > start
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digits() else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() else { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() else { return false }
        }
        return index == bytes.count
    }
}
