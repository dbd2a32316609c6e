/// `count` bytes, byte `i` being `i * step` modulo 256: a message in which a byte out of place
/// shows.
///
/// Made by copying its first 256 bytes over (the pattern repeats with that period), not with a
/// closure per byte: in a debug build that holds one of the cooperative pool's threads (one per
/// core) for a good part of a second per megabyte, while every other test waits for it.
func patternBytes(count: Int, step: Int) -> [UInt8] {
    let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* step) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
        bytes.append(contentsOf: period.prefix(count - bytes.count))
    }
    return bytes
}
