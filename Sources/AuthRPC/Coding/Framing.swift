/// gRPC's length-prefixed messages: one byte compressed flag, four bytes big-endian length,
/// then the message.
enum Framing {
    static let prefixLength = messagePrefixLength

    /// One framed message, ready to be the request body.
    static func frame(_ message: [UInt8], compressed: Bool) -> [UInt8] {
        var body = [UInt8]()
        body.reserveCapacity(prefixLength + message.count)
        let length = UInt32(message.count)
        body.append(compressed ? 1 : 0)
        body.append(UInt8(truncatingIfNeeded: length >> 24))
        body.append(UInt8(truncatingIfNeeded: length >> 16))
        body.append(UInt8(truncatingIfNeeded: length >> 8))
        body.append(UInt8(truncatingIfNeeded: length))
        body.append(contentsOf: message)
        return body
    }

    /// Writes the prefix into the first ``prefixLength`` bytes of `body`, which hold room for it
    /// and then the message (as ``MessageSerializer/serializeBehindPrefix(_:)`` leaves them).
    static func fillPrefix(of body: inout [UInt8], compressed: Bool) {
        let length = UInt32(body.count - prefixLength)
        body[0] = compressed ? 1 : 0
        body[1] = UInt8(truncatingIfNeeded: length >> 24)
        body[2] = UInt8(truncatingIfNeeded: length >> 16)
        body[3] = UInt8(truncatingIfNeeded: length >> 8)
        body[4] = UInt8(truncatingIfNeeded: length)
    }

    /// One message found in a response body.
    struct Message {
        var compressed: Bool
        var bytes: ArraySlice<UInt8>
    }

    /// Why a response body is not exactly one well-formed message.
    enum Problem: Error, Equatable {
        case noMessage
        case moreThanOneMessage
        /// The body ends inside a message prefix or a message.
        case truncated(expected: Int, received: Int)
        /// The declared length is over the limit.
        case tooLarge(length: Int, limit: Int)
        /// A compressed flag other than 0 or 1.
        case invalidFlag(UInt8)
    }

    /// The single message a unary response carries.
    static func singleMessage(in body: [UInt8], limit: Int) -> Result<Message, Problem> {
        guard !body.isEmpty else { return .failure(.noMessage) }
        guard body.count >= prefixLength else {
            return .failure(.truncated(expected: prefixLength, received: body.count))
        }
        let flag = body[0]
        guard flag <= 1 else { return .failure(.invalidFlag(flag)) }
        let length = Int(body[1]) << 24 | Int(body[2]) << 16 | Int(body[3]) << 8 | Int(body[4])
        guard length <= limit else { return .failure(.tooLarge(length: length, limit: limit)) }
        let end = prefixLength + length
        guard body.count >= end else {
            return .failure(.truncated(expected: length, received: body.count - prefixLength))
        }
        guard body.count == end else { return .failure(.moreThanOneMessage) }
        return .success(Message(compressed: flag == 1, bytes: body[prefixLength..<end]))
    }
}
