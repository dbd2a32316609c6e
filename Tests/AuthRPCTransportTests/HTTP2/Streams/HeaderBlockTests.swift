import Testing

@testable import AuthRPCTransport

@Suite("A header block lays fields out as nghttp2 reads them, and a copy never sees later writes")
struct HeaderBlockTests {
    struct Field: Equatable, CustomStringConvertible {
        var name: String
        var value: String
        var sensitive: Bool
        var description: String { "\(name): \(value)\(sensitive ? " (sensitive)" : "")" }
    }

    static func fields(of block: HTTP2HeaderBlock) -> (fields: [Field], count: Int) {
        block.withFields { fields in
            let read = fields.map {
                Field(
                    name: String(decoding: $0.name, as: UTF8.self),
                    value: String(decoding: $0.value, as: UTF8.self),
                    sensitive: $0.sensitive
                )
            }
            return (read, block.fieldCount)
        }
    }

    @Test("fields come back in order with their values, suffixes and sensitivity")
    func roundTrip() {
        var block = HTTP2HeaderBlock()
        block.append(name: ":method", value: "POST")
        block.append(name: "authorization", value: "Bearer ", valueSuffix: "abc")
        block.append(name: "cookie", value: "a=b")
        block.append(name: "x-empty", value: "")
        var room = HTTP2HeaderBlock.Room()
        room.add(name: "grpc-timeout", valueCount: 2)
        room.add(name: "authorization", valueCount: 12)
        block.append(room) { fields in
            fields.append(name: "grpc-timeout", value: "5S", sensitive: false)
            fields.append(name: "authorization", value: "Bearer ", valueSuffix: "token", sensitive: true)
        }
        // Names and values past a small string's 15 bytes, non-ASCII included.
        block.append(name: "x-a-rather-long-metadata-key", value: String(repeating: "é", count: 40))
        let (fields, count) = Self.fields(of: block)
        #expect(
            fields == [
                Field(name: ":method", value: "POST", sensitive: false),
                Field(name: "authorization", value: "Bearer abc", sensitive: true),
                Field(name: "cookie", value: "a=b", sensitive: true),
                Field(name: "x-empty", value: "", sensitive: false),
                Field(name: "grpc-timeout", value: "5S", sensitive: false),
                Field(name: "authorization", value: "Bearer token", sensitive: true),
                Field(name: "x-a-rather-long-metadata-key", value: String(repeating: "é", count: 40), sensitive: false),
            ]
        )
        #expect(count == 7)
    }

    @Test("a block grows past its buffer, field by field and by copying whole blocks")
    func growth() {
        var shared = HTTP2HeaderBlock()
        for index in 0..<50 { shared.append(name: "x-field-\(index)", value: String(repeating: "v", count: index * 7)) }
        var block = HTTP2HeaderBlock()
        block.reserveCapacity(fields: 1, byteCount: 4)
        var room = HTTP2HeaderBlock.Room()
        room.add(name: ":path", valueCount: 6)
        room.add(shared)
        room.add(HTTP2HeaderBlock())
        room.add(name: "authorization", valueCount: 5007)
        block.append(room) { fields in
            fields.append(name: ":path", value: "/a.B/C", sensitive: false)
            fields.append(contentsOf: shared)
            fields.append(contentsOf: HTTP2HeaderBlock())
            fields.append(
                name: "authorization",
                value: "Bearer ",
                valueSuffix: String(repeating: "t", count: 5000),
                sensitive: true
            )
        }
        let (fields, count) = Self.fields(of: block)
        #expect(count == 52)
        #expect(fields.first == Field(name: ":path", value: "/a.B/C", sensitive: false))
        #expect(fields[1...50].map(\.value.count) == (0..<50).map { $0 * 7 })
        #expect(fields.last?.value.count == 5007)
        #expect(block.capacity >= 5007 + 50 * 7 * 25)
    }

    @Test(
        "fields written past the room counted for them, or short of it, stop the process instead of corrupting memory"
    )
    func roomIsEnforced() async {
        await #expect(processExitsWith: .failure) {
            var block = HTTP2HeaderBlock()
            var room = HTTP2HeaderBlock.Room()
            room.add(name: ":path", valueCount: 2)
            block.append(room) { $0.append(name: ":path", value: "/a.B/C", sensitive: false) }
        }
        await #expect(processExitsWith: .failure) {
            var block = HTTP2HeaderBlock()
            var room = HTTP2HeaderBlock.Room()
            room.add(name: ":path", valueCount: 20)
            block.append(room) { $0.append(name: ":path", value: "/a.B/C", sensitive: false) }
        }
    }

    @Test("a block is one word: a waiting call's stream keeps three")
    func oneWord() {
        #expect(MemoryLayout<HTTP2HeaderBlock>.size == MemoryLayout<Int>.size)
    }

    @Test("a copy keeps its fields when the original is emptied and written again")
    func copyOnWrite() {
        var block = HTTP2HeaderBlock()
        block.append(name: "x-one", value: "1")
        let copy = block
        block.removeAll(keepingCapacity: true)
        #expect(Self.fields(of: block).count == 0)
        block.append(name: "x-two", value: "2")
        #expect(Self.fields(of: copy).fields == [Field(name: "x-one", value: "1", sensitive: false)])
        #expect(Self.fields(of: block).fields == [Field(name: "x-two", value: "2", sensitive: false)])
        block.removeAll(keepingCapacity: false)
        #expect(block.capacity == 0)
        #expect(Self.fields(of: block).count == 0)
    }
}
