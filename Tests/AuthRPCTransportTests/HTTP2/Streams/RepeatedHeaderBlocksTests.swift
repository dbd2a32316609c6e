import Testing

@testable import AuthRPCTransport

@Suite("A response's header blocks that repeat the connection's last ones are shared, not rebuilt")
struct RepeatedHeaderBlocksTests {
    typealias Field = (name: String, value: String)

    static let grpcHeaders: [Field] = [
        ("content-type", "application/grpc"), ("grpc-accept-encoding", "identity, deflate, gzip"),
    ]
    static let okTrailers: [Field] = [("grpc-status", "0")]

    /// One block received field by field and ended, as the session callbacks drive it; returns
    /// the block's fields and how many were still repeated just before it ended.
    static func receive(
        _ block: [Field],
        _ kind: RepeatedHeaderBlocks.Kind,
        into blocks: inout RepeatedHeaderBlocks,
        fields: [HTTP2HeaderField] = []
    ) -> (fields: [HTTP2HeaderField], repeatedBeforeEnd: Int) {
        var fields = fields
        var repeated = 0
        for field in block {
            Array(field.name.utf8).withUnsafeBufferPointer { name in
                Array(field.value.utf8).withUnsafeBufferPointer { value in
                    blocks.append(name: name, value: value, to: &fields, repeated: &repeated, kind: kind)
                }
            }
        }
        let repeatedBeforeEnd = repeated
        blocks.end(&fields, repeated: &repeated, kind: kind)
        #expect(repeated == 0, "ready for the next block")
        return (fields, repeatedBeforeEnd)
    }

    static func pairs(_ fields: [HTTP2HeaderField]) -> [String] {
        fields.map { "\($0.name): \($0.value)" }
    }

    static func pairs(_ fields: [Field]) -> [String] {
        fields.map { "\($0.name): \($0.value)" }
    }

    static func sameStorage(_ a: [HTTP2HeaderField], _ b: [HTTP2HeaderField]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    @Test("the first block is built; a block that repeats it whole shares its array and stores no field")
    func repeatedBlockIsShared() {
        var blocks = RepeatedHeaderBlocks()
        let first = Self.receive(Self.grpcHeaders, .headers, into: &blocks)
        #expect(first.repeatedBeforeEnd == -1)
        #expect(Self.pairs(first.fields) == Self.pairs(Self.grpcHeaders))

        let second = Self.receive(Self.grpcHeaders, .headers, into: &blocks)
        #expect(second.repeatedBeforeEnd == Self.grpcHeaders.count, "no field was copied while they repeated")
        #expect(Self.pairs(second.fields) == Self.pairs(Self.grpcHeaders))
        #expect(Self.sameStorage(first.fields, second.fields))
    }

    @Test("a field that differs copies the repeated ones out, in order, and the block becomes the last one")
    func differingField() {
        var blocks = RepeatedHeaderBlocks()
        _ = Self.receive(Self.grpcHeaders + [("x-request", "1")], .headers, into: &blocks)

        let changed: [Field] = Self.grpcHeaders + [("x-request", "2"), ("x-more", "yes")]
        let second = Self.receive(changed, .headers, into: &blocks)
        #expect(second.repeatedBeforeEnd == -1)
        #expect(Self.pairs(second.fields) == Self.pairs(changed))

        // The changed block is now the one compared with.
        let third = Self.receive(changed, .headers, into: &blocks)
        #expect(third.repeatedBeforeEnd == changed.count)
        #expect(Self.sameStorage(second.fields, third.fields))

        let reordered = Array(Self.grpcHeaders.reversed())
        #expect(Self.pairs(Self.receive(reordered, .headers, into: &blocks).fields) == Self.pairs(reordered))
    }

    @Test("a block that repeats only the last one's start, or adds to it, keeps exactly its own fields")
    func prefixAndExtension() {
        var blocks = RepeatedHeaderBlocks()
        _ = Self.receive(Self.grpcHeaders, .headers, into: &blocks)

        let shorter = Array(Self.grpcHeaders.prefix(1))
        let prefix = Self.receive(shorter, .headers, into: &blocks)
        #expect(prefix.repeatedBeforeEnd == 1)
        #expect(Self.pairs(prefix.fields) == Self.pairs(shorter))

        // A repeated prefix does not replace the last block.
        #expect(Self.receive(Self.grpcHeaders, .headers, into: &blocks).repeatedBeforeEnd == 2)

        let longer = Self.grpcHeaders + [("x-extra", "1")]
        #expect(Self.pairs(Self.receive(longer, .headers, into: &blocks).fields) == Self.pairs(longer))
        #expect(Self.receive([], .headers, into: &blocks).fields.isEmpty)
    }

    @Test("headers and trailers are compared with the last block of their own kind")
    func kindsApart() {
        var blocks = RepeatedHeaderBlocks()
        _ = Self.receive(Self.grpcHeaders, .headers, into: &blocks)
        let trailers = Self.receive(Self.okTrailers, .trailers, into: &blocks)
        #expect(trailers.repeatedBeforeEnd == -1, "the trailers are not compared with the headers")
        #expect(Self.pairs(trailers.fields) == Self.pairs(Self.okTrailers))
        #expect(Self.receive(Self.okTrailers, .trailers, into: &blocks).repeatedBeforeEnd == 1)
        #expect(Self.receive(Self.grpcHeaders, .headers, into: &blocks).repeatedBeforeEnd == 2)
    }

    @Test("fields already held stay first, whether the block repeats the last one or not")
    func fieldsAlreadyHeld() {
        var blocks = RepeatedHeaderBlocks()
        _ = Self.receive(Self.okTrailers, .trailers, into: &blocks)
        let held = [HTTP2HeaderField(name: "grpc-status", value: "0")]
        let repeated = Self.receive(Self.okTrailers, .trailers, into: &blocks, fields: held)
        #expect(Self.pairs(repeated.fields) == Self.pairs(Self.okTrailers + Self.okTrailers))
        let differing: [Field] = [("grpc-status", "13")]
        let other = Self.receive(differing, .trailers, into: &blocks, fields: held)
        #expect(Self.pairs(other.fields) == Self.pairs(Self.okTrailers + differing))
    }

    @Test("whatever the order of blocks, each keeps exactly the fields received")
    func randomBlocks() {
        var generator = SystemRandomNumberGenerator()
        let names = ["content-type", "grpc-status", "grpc-message", "x-a", "x-b", ""]
        let values = ["application/grpc", "0", "", "13", "v", String(repeating: "é", count: 20)]
        var blocks = RepeatedHeaderBlocks()
        var last: [[Field]] = [[], []]
        for _ in 0..<400 {
            let kind = Int(generator.next() % 2)
            // Often the last block again, sometimes changed at one field, sometimes new.
            var block = last[kind]
            switch generator.next() % 4 {
            case 0:
                block = (0..<Int(generator.next() % 4)).map { _ in
                    (names[Int(generator.next() % 6)], values[Int(generator.next() % 6)])
                }
            case 1 where !block.isEmpty:
                block[Int(generator.next() % UInt64(block.count))].value = values[Int(generator.next() % 6)]
            case 2 where !block.isEmpty:
                block.removeLast()
            default:
                break
            }
            let received = Self.receive(block, kind == 0 ? .headers : .trailers, into: &blocks)
            #expect(Self.pairs(received.fields) == Self.pairs(block), "after \(Self.pairs(last[kind]))")
            if received.repeatedBeforeEnd < 0 { last[kind] = block }
        }
    }
}
