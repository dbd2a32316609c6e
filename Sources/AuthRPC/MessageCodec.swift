import Foundation
import SwiftProtobuf

/// Turns request messages into bytes.
public protocol MessageSerializer<Message>: Sendable {
    /// The message type.
    associatedtype Message
    /// The message's wire bytes.
    func serialize(_ message: Message) throws -> [UInt8]
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

    public func serialize(_ message: Message) throws -> [UInt8] {
        try message.serializedBytes()
    }
}

/// Parses swift-protobuf messages from the binary format.
public struct ProtobufDeserializer<Message: SwiftProtobuf.Message>: MessageDeserializer {
    /// Creates a deserializer.
    public init() {}

    public func deserialize(_ bytes: ArraySlice<UInt8>) throws -> Message {
        // Parse in place: a Data view over the response buffer, valid only inside this closure
        // (swift-protobuf copies what it keeps), so a large message is not copied first.
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return try Message(serializedBytes: [UInt8]()) }
            let view = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: raw.count, deallocator: .none)
            return try Message(serializedBytes: view)
        }
    }
}

/// Passes bytes through unchanged: for calls whose messages are already serialized.
public struct RawBytesCodec: MessageSerializer, MessageDeserializer {
    /// Creates the codec.
    public init() {}

    public func serialize(_ message: [UInt8]) throws -> [UInt8] { message }

    public func deserialize(_ bytes: ArraySlice<UInt8>) throws -> [UInt8] { Array(bytes) }
}
