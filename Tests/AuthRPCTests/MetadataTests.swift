import AuthRPCSyntax
import Testing

@testable import AuthRPC

@Suite("Metadata")
struct MetadataTests {
    @Test(
        "valid keys and values pass",
        arguments: [
            ("x-request-id", Metadata.Value.string("42")),
            ("a.b_c-d0", .string("printable ~!@#$%^&*()")),
            ("trace-bin", .binary([0, 1, 255])),
            ("authorization", .string("Basic abc")),
        ]
    )
    func validPairs(key: String, value: Metadata.Value) throws {
        var metadata = Metadata()
        metadata.add(value, forKey: key)
        try metadata.validateForSending()
    }

    @Test(
        "invalid pairs are refused with a message naming the key and the rule",
        arguments: [
            ("X-Upper", Metadata.Value.string("v"), "lowercase"),
            ("", .string("v"), "empty"),
            ("sp ace", .string("v"), "lowercase"),
            (":path", .string("/x"), "lowercase"),
            ("grpc-custom", .string("v"), "reserved"),
            ("te", .string("trailers"), "managed"),
            ("content-type", .string("text/plain"), "managed"),
            ("connection", .string("close"), "managed"),
            ("user-agent", .string("me"), "userAgentPrefix"),
            ("x-text", .string("tab\there"), "printable ASCII"),
            ("x-text", .string("caf\u{E9}"), "printable ASCII"),
            ("x-text", .string(" leading"), "space"),
            ("x-text", .string("trailing "), "space"),
            ("x-bytes", .binary([1]), "-bin"),
            ("x-bytes-bin", .string("text"), "binary"),
        ]
    )
    func invalidPairs(key: String, value: Metadata.Value, reason: String) {
        var metadata = Metadata()
        metadata.add(value, forKey: key)
        #expect {
            try metadata.validateForSending()
        } throws: { error in
            let error = error as! RPCError
            return error.code == .invalidArgument && error.message.contains("'\(key)'")
                && error.message.contains(reason)
        }
    }

    @Test("order and duplicates are kept; accessors find values by kind")
    func multimap() {
        var metadata: Metadata = ["x-dup": "one", "x-other": "o"]
        metadata.addString("two", forKey: "x-dup")
        metadata.addBinary([9], forKey: "x-b-bin")
        #expect(metadata.strings(forKey: "x-dup") == ["one", "two"])
        #expect(metadata.map(\.key) == ["x-dup", "x-other", "x-dup", "x-b-bin"])
        #expect(metadata.firstBinary(forKey: "x-b-bin") == [9])
        #expect(metadata["x-dup"] == [.string("one"), .string("two")])
        metadata.replaceOrAddString("three", forKey: "x-dup")
        #expect(metadata.strings(forKey: "x-dup") == ["three"])
    }

    @Test("received -bin values: padded, unpadded and comma-separated all decode; bad base64 stays text")
    func receivedBinary() {
        let metadata = Metadata(receivedFields: [
            (name: "a-bin", value: "AAEC"),
            (name: "b-bin", value: "//4="),
            (name: "c-bin", value: "//4"),
            (name: "d-bin", value: "AAE,AgM="),
            (name: "e-bin", value: "not*base64"),
            (name: "plain", value: "text,with,commas"),
        ])
        #expect(metadata.binaries(forKey: "a-bin") == [[0, 1, 2]])
        #expect(metadata.binaries(forKey: "b-bin") == [[0xFF, 0xFE]])
        #expect(metadata.binaries(forKey: "c-bin") == [[0xFF, 0xFE]])
        #expect(metadata.binaries(forKey: "d-bin") == [[0, 1], [2, 3]])
        #expect(metadata.strings(forKey: "e-bin") == ["not*base64"])
        #expect(metadata.strings(forKey: "plain") == ["text,with,commas"])
    }

    @Test("binary values go on the wire as unpadded base64")
    func wireForm() {
        #expect(Metadata.wireValue(.binary([0xFF, 0xFE])) == "//4")
        #expect(Metadata.wireValue(.binary([0, 1, 2])) == "AAEC")
        #expect(Metadata.wireValue(.binary([])) == "")
        #expect(Metadata.wireValue(.string("v")) == "v")
    }

    @Test("description redacts credentials")
    func redaction() {
        let metadata: Metadata = ["authorization": "Bearer s3cret-token", "cookie": "sid=s3cret", "x-visible": "shown"]
        #expect(!metadata.description.contains("s3cret"))
        #expect(metadata.description.contains("x-visible: shown"))
    }
}

@Suite("Base64")
struct Base64Tests {
    @Test("round-trips every length, padded and unpadded")
    func roundTrip() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64Codec.standard.decode(Base64Codec.standard.encode(bytes, padded: true)) == bytes)
            #expect(Base64Codec.standard.decode(Base64Codec.standard.encode(bytes, padded: false)) == bytes)
        }
    }

    @Test("rejects what is not base64", arguments: ["A", "AB=C", "****", "AAAAA"])
    func rejects(text: String) {
        #expect(Base64Codec.standard.decode(text) == nil)
    }
}
