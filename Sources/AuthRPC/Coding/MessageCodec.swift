import AuthRPCSystem
public import SwiftProtobuf

/// Turns request messages into bytes.
public protocol MessageSerializer<Message>: Sendable {
    /// The message type.
    associatedtype Message
    /// The message's wire bytes.
    func serialize(_ message: Message) throws -> [UInt8]
    /// The message's wire bytes behind ``messagePrefixLength`` bytes of room, in one buffer: gRPC
    /// writes its message prefix there, so the message is not copied into a second buffer. The
    /// default implementation calls ``serialize(_:)`` and copies.
    func serializeBehindPrefix(_ message: Message) throws -> [UInt8]
}

/// The room ``MessageSerializer/serializeBehindPrefix(_:)`` leaves in front of the message: gRPC's
/// compressed flag and four-byte length.
public let messagePrefixLength = 5

extension MessageSerializer {
    /// Serializes with ``serialize(_:)``, then copies the bytes behind the prefix's room.
    public func serializeBehindPrefix(_ message: Message) throws -> [UInt8] {
        let bytes = try serialize(message)
        var framed = [UInt8]()
        framed.reserveCapacity(messagePrefixLength + bytes.count)
        framed.append(contentsOf: repeatElement(0, count: messagePrefixLength))
        framed.append(contentsOf: bytes)
        return framed
    }
}

/// Turns response bytes into messages.
public protocol MessageDeserializer<Message>: Sendable {
    /// The message type.
    associatedtype Message
    /// The message these bytes encode; throws when they do not parse.
    func deserialize(_ bytes: ArraySlice<UInt8>) throws -> Message
}

/// Serializes swift-protobuf messages in the binary format.
public struct ProtobufSerializer<Message: SwiftProtobuf.Message>: MessageSerializer {
    /// Creates a serializer.
    public init() {}

    /// The message in the protobuf binary format.
    ///
    /// - Throws: swift-protobuf's `BinaryEncodingError` (a proto2 required field missing, an `Any`
    ///   that cannot be encoded).
    public func serialize(_ message: Message) throws -> [UInt8] {
        try message.serializedBytes()
    }

    /// Encodes straight into a buffer sized once for the prefix and the message.
    public func serializeBehindPrefix(_ message: Message) throws -> [UInt8] {
        let bytes: BytesBehindPrefix = try message.serializedBytes()
        return bytes.framed
    }
}

/// A byte buffer whose first ``messagePrefixLength`` bytes are kept out of swift-protobuf's view:
/// it sizes and fills only the rest, so the encoded message lands behind the prefix's room.
private struct BytesBehindPrefix: SwiftProtobufContiguousBytes {
    /// The prefix's room, then the message.
    var framed: [UInt8]

    init(repeating byte: UInt8, count: Int) {
        // A buffer the thread kept from its last call when one fits (ThreadBufferCache).
        // Not `Array(repeating:count:)` otherwise: that allocates through the standard
        // library's unspecialized path, which looks `_ContiguousArrayStorage<UInt8>`'s metadata
        // up at run time (about 300 instructions a call); `reserveCapacity` is specialized here.
        framed = ThreadBufferCache.take(minimumCapacity: messagePrefixLength + count)
        framed.reserveCapacity(messagePrefixLength + count)
        framed.append(contentsOf: repeatElement(byte, count: messagePrefixLength + count))
    }

    init<S: Sequence>(_ sequence: S) where S.Element == UInt8 {
        framed = [UInt8](repeating: 0, count: messagePrefixLength)
        framed.append(contentsOf: sequence)
    }

    var count: Int { framed.count - messagePrefixLength }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try framed.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[messagePrefixLength...])) }
    }

    mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try framed.withUnsafeMutableBytes {
            try body(UnsafeMutableRawBufferPointer(rebasing: $0[messagePrefixLength...]))
        }
    }
}

/// Parses swift-protobuf messages from the binary format.
public struct ProtobufDeserializer<Message: SwiftProtobuf.Message>: MessageDeserializer {
    /// Creates a deserializer.
    public init() {}

    /// The message these bytes encode in the protobuf binary format; unknown fields are kept.
    ///
    /// - Throws: swift-protobuf's `BinaryDecodingError` when they do not parse.
    public func deserialize(_ bytes: ArraySlice<UInt8>) throws -> Message {
        // Parse in place, through a span over the response buffer (swift-protobuf copies what
        // it keeps): neither the bytes nor a Data box around them are allocated per call.
        try Message(serializedBytes: bytes.span.bytes)
    }
}

/// Passes bytes through unchanged: for calls whose messages are already serialized.
public struct RawBytesCodec: MessageSerializer, MessageDeserializer {
    /// Creates the codec.
    public init() {}

    /// The bytes as they are.
    public func serialize(_ message: [UInt8]) throws -> [UInt8] { message }

    /// The bytes as they are, copied out of the response buffer.
    public func deserialize(_ bytes: ArraySlice<UInt8>) throws -> [UInt8] { Array(bytes) }
}
