import AuthRPCTransport
import Testing

@testable import AuthRPC

/// Metadata received on a unary call keeps its header block's field array (`Metadata.Storage`);
/// it must read, compare, hash, print, iterate and change exactly as metadata built pair by pair.
@Suite("Metadata that keeps a received header block's fields")
struct MetadataStorageTests {
    /// A response's trailers.
    static let fields = [
        HTTP2HeaderField(name: "grpc-status", value: "0"),
        HTTP2HeaderField(name: "x-trace", value: "abc"),
        HTTP2HeaderField(name: "x-trace", value: "def"),
        HTTP2HeaderField(name: "authorization", value: "Bearer s3cret"),
    ]

    /// The same fields built the eager way, pair by pair.
    static func eager(_ fields: [HTTP2HeaderField]) -> Metadata {
        Metadata(receivedFields: fields.lazy.map { (name: $0.name, value: $0.value) })
    }

    @Test("it reads as the eager metadata: lookups, count, equality, hash, description, order")
    func readsAsEager() {
        for fields in [Self.fields, Array(Self.fields.prefix(1)), []] {
            let shared = Metadata(received: fields)
            let eager = Self.eager(fields)
            if case .received = shared.storage {
            } else {
                #expect(fields.isEmpty, "text fields are kept, not copied")
            }
            #expect(shared == eager)
            #expect(shared.hashValue == eager.hashValue)
            #expect(shared.description == eager.description)
            #expect(shared.count == fields.count)
            #expect(shared.isEmpty == fields.isEmpty)
            #expect(shared.map(\.key) == fields.map(\.name))
            #expect(shared.strings(forKey: "x-trace") == eager.strings(forKey: "x-trace"))
            #expect(shared.firstString(forKey: "grpc-status") == eager.firstString(forKey: "grpc-status"))
            #expect(shared["x-trace"] == eager["x-trace"])
            #expect(shared.contains(key: "x-trace") == fields.contains { $0.name == "x-trace" })
        }
        #expect(!Metadata(received: Self.fields).description.contains("s3cret"))
    }

    @Test("a change copies the pairs out: the metadata it was copied from stays as received")
    func changeCopiesOut() {
        let received = Metadata(received: Self.fields)
        var changed = received
        changed.addString("added", forKey: "x-new")
        changed.removeAll(forKey: "authorization")
        #expect(changed.map(\.key) == ["grpc-status", "x-trace", "x-trace", "x-new"])
        #expect(received == Self.eager(Self.fields))
        if case .received = received.storage {} else { Issue.record("the original was copied out too") }
        var emptied = Metadata(received: Array(Self.fields.prefix(1)))
        emptied.removeAll(forKey: "grpc-status")
        #expect(emptied.isEmpty && emptied == Metadata())
    }

    @Test("a -bin field is decoded when received, never kept: one field can make several pairs")
    func binaryFieldsDecodeAtOnce() {
        let metadata = Metadata(received: [
            HTTP2HeaderField(name: "grpc-status", value: "0"),
            HTTP2HeaderField(name: "d-bin", value: "AAE,AgM="),
        ])
        if case .received = metadata.storage { Issue.record("a -bin field was kept undecoded") }
        #expect(metadata.binaries(forKey: "d-bin") == [[0, 1], [2, 3]])
        #expect(metadata.count == 3)
    }

    @Test("metadata is one word: it sits in every call's async frames, whose size is memory per call in flight")
    func oneWord() {
        #expect(MemoryLayout<Metadata>.size == MemoryLayout<Int>.size)
    }

    @Test("a -bin key is told by its last four bytes, at any length, in any storage")
    func binaryKeys() {
        let long = String(repeating: "x", count: 40)
        for key in ["-bin", "a-bin", "x-trace-bin", "\(long)-bin", "é-bin"] {
            #expect(Metadata.isBinaryKey(key), "\(key)")
        }
        for key in ["", "bin", "-bi", "a-bi", "a-bin ", "a-BIN", "a_bin", "a-binx", "\(long)-bix", long] {
            #expect(!Metadata.isBinaryKey(key), "\(key)")
        }
        // A name past a small string's 15 bytes, received: decoded as binary, so not kept.
        let received = Metadata(received: [HTTP2HeaderField(name: "x-a-long-metadata-key-bin", value: "AAE")])
        #expect(received.binaries(forKey: "x-a-long-metadata-key-bin") == [[0, 1]])
        #expect(received.firstString(forKey: "x-a-long-metadata-key-bin") == nil)
    }
}
