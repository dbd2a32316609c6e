import Testing

@testable import AuthRPCTransport

/// What OpenSSL reads through the session's BIO: bytes kept from before, then bytes lent for one
/// read of the socket, in order, a record at a time, and never a lent byte after its loan ended.
@Suite("The TLS session's BIO: kept and lent ciphertext, read in order, a record at a time")
struct CiphertextBIOTests {
    /// A TLS 1.3 application-data record around `fragment`.
    static func record(_ fragment: [UInt8]) -> [UInt8] {
        [23, 3, 3, UInt8(fragment.count >> 8), UInt8(fragment.count & 0xff)] + fragment
    }

    /// Up to `capacity` bytes, as one of OpenSSL's reads would take them.
    private static func read(_ bio: CiphertextBIO, _ capacity: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = bio.read(into: buffer.baseAddress!, capacity: capacity)
        }
    }

    @Test("kept bytes come first, then the lent ones, each read ending with a record; an empty BIO reads nothing")
    func keptThenLent() {
        let bio = CiphertextBIO(output: ByteQueue(capacity: 64))
        #expect(Self.read(bio, 64).isEmpty)
        let first = Self.record([1, 2, 3])
        let second = Self.record([4, 5])
        // The first record's header arrived before the session began; the rest arrives lent.
        Array(first[0..<3]).withUnsafeBytes { bio.keep($0) }
        let lent = Array(first[3...]) + second
        let taken = lent.withUnsafeBytes { bytes in
            bio.lending(bytes) { [Self.read(bio, 64), Self.read(bio, 64), Self.read(bio, 64)] }
        }
        #expect(taken == [first, second, []])
        #expect(Self.read(bio, 64).isEmpty)
    }

    @Test("a read as small as OpenSSL asks (a header, then a fragment) gets just that")
    func smallReads() {
        let bio = CiphertextBIO(output: ByteQueue(capacity: 64))
        let stream = Self.record([9, 8, 7]) + Self.record([6])
        let taken = stream.withUnsafeBytes { bytes in
            bio.lending(bytes) { [Self.read(bio, 5), Self.read(bio, 3), Self.read(bio, 5), Self.read(bio, 64)] }
        }
        #expect(taken == [[23, 3, 3, 0, 3], [9, 8, 7], [23, 3, 3, 0, 1], [6]])
    }

    @Test("lent bytes OpenSSL did not read are kept when the loan ends, and read first next time")
    func unreadLoanIsKept() {
        let bio = CiphertextBIO(output: ByteQueue(capacity: 64))
        let first = Self.record(Array(0..<10))
        let second = Self.record([10, 11])
        var lender = first + second
        let head = lender.withUnsafeBytes { bytes in bio.lending(bytes) { Self.read(bio, 4) } }
        #expect(head == Array(first[0..<4]))
        // The lender reuses its buffer: what was kept is a copy, not a view of it.
        for index in lender.indices { lender[index] = 0xEE }
        let third = Self.record([12])
        let rest = third.withUnsafeBytes { bytes in
            bio.lending(bytes) { [Self.read(bio, 64), Self.read(bio, 64), Self.read(bio, 64), Self.read(bio, 64)] }
        }
        #expect(rest == [Array(first[4...]), second, third, []])
    }

    @Test("any stream, in any pieces, read in any sizes: every byte once, in order, no read past a record's end")
    func anyPiecesAndReads() {
        var random = TestRandom(seed: 0x7EC0_2D5)
        for round in 0..<400 {
            // Half the streams are records of small fragments; half are any bytes (any lengths).
            var stream: [UInt8] = []
            if round.isMultiple(of: 2) {
                for _ in 0..<random.next(upTo: 8) {
                    stream += Self.record((0..<random.next(upTo: 300)).map { _ in UInt8(random.next(upTo: 256)) })
                }
                stream += (0..<random.next(upTo: 8)).map { _ in UInt8(random.next(upTo: 256)) }
            } else {
                stream = (0..<random.next(upTo: 2000)).map { _ in UInt8(random.next(upTo: 256)) }
            }
            // Where each record ends, read from the headers alone.
            var ends = Set<Int>()
            var start = 0
            while start + 5 <= stream.count {
                start += 5 + (Int(stream[start + 3]) << 8 | Int(stream[start + 4]))
                ends.insert(start)
            }
            let bio = CiphertextBIO(output: ByteQueue(capacity: 64))
            var out: [UInt8] = []
            func readSome(_ times: Int) {
                for _ in 0..<times {
                    let taken = Self.read(bio, 1 + random.next(upTo: 600))
                    let crossed = ends.filter { $0 > out.count && $0 < out.count + taken.count }
                    #expect(
                        crossed.isEmpty,
                        "round \(round): a read of \(taken.count) at \(out.count) crosses \(crossed)"
                    )
                    out += taken
                }
            }
            var offset = 0
            var first = true
            while offset < stream.count {
                let piece = Array(stream[offset..<min(offset + 1 + random.next(upTo: 700), stream.count)])
                offset += piece.count
                if first, random.next(upTo: 2) == 0 {
                    piece.withUnsafeBytes { bio.keep($0) }
                } else {
                    // Some loans end with bytes unread, as a failed pass would leave them.
                    piece.withUnsafeBytes { bytes in bio.lending(bytes) { readSome(random.next(upTo: 5)) } }
                }
                first = false
            }
            while case let before = out.count, before < stream.count {
                readSome(1)
                if out.count == before { break }
            }
            #expect(out == stream, "round \(round): \(out.count) of \(stream.count) bytes, or not in order")
        }
    }
}

/// A small deterministic generator (xorshift64), so a failing round replays the same way.
struct TestRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    /// A value in `0..<bound`.
    mutating func next(upTo bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
