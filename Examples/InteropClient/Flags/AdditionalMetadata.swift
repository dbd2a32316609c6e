import ArgumentParser

/// Go's `--additional_metadata`: `key:value` pairs separated by `;`, sent with every call. A
/// value runs to the next `;` (it may hold `:`); a key ending in `-bin` takes the value's bytes.
struct AdditionalMetadata: Sendable {
    /// The pairs, in the order given.
    var pairs: [(key: String, value: String)]

    /// Parses the flag's text; a pair without `:` or with an empty key is a usage error.
    init(parsing text: String) throws {
        pairs = []
        for item in text.split(separator: ";", omittingEmptySubsequences: true) {
            guard let colon = item.firstIndex(of: ":"), colon != item.startIndex else {
                throw ValidationError("--additional_metadata: '\(item)' is not key:value")
            }
            pairs.append((key: String(item[..<colon]).lowercased(), value: String(item[item.index(after: colon)...])))
        }
    }
}
