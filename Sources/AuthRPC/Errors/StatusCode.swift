import AuthRPCSyntax

/// A gRPC status code (the `grpc-status` trailer).
public enum StatusCode: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not an error.
    case ok = 0
    /// The call was cancelled, typically by the caller.
    case cancelled = 1
    /// An error with no better code, including a `grpc-status` that did not parse.
    case unknown = 2
    /// The caller sent something invalid (including invalid metadata, refused before sending).
    case invalidArgument = 3
    /// The deadline passed before the call completed.
    case deadlineExceeded = 4
    /// The requested entity was not found.
    case notFound = 5
    /// The entity the caller tried to create already exists.
    case alreadyExists = 6
    /// The caller is authenticated but not allowed to do this.
    case permissionDenied = 7
    /// A resource ran out (a message over the size limit, a quota).
    case resourceExhausted = 8
    /// The system is not in a state the operation needs.
    case failedPrecondition = 9
    /// The operation was aborted (a concurrency conflict).
    case aborted = 10
    /// The operation went past a valid range.
    case outOfRange = 11
    /// The method is not implemented, or a unary response had the wrong number of messages.
    case unimplemented = 12
    /// An internal error: a broken invariant, a protocol error, a message that did not parse.
    case internalError = 13
    /// The service is unavailable now; retrying later (with backoff) may succeed.
    case unavailable = 14
    /// Unrecoverable data loss or corruption.
    case dataLoss = 15
    /// The call has no valid credentials.
    case unauthenticated = 16

    /// The canonical upper-case name (`UNAUTHENTICATED`).
    public var description: String {
        GRPCStatusCodeName.all[rawValue]
    }

    /// Parses a `grpc-status` value: ASCII digits only, 0 through 16; anything else is `nil`.
    init?(grpcStatus value: String) {
        // "0" is on nearly every response: one compare of two small strings. Anything else is
        // read digit by digit (`Int(_:)` would parse a sign and any length first).
        if value == "0" {
            self = .ok
            return
        }
        var number = 0
        var digits = 0
        for byte in value.utf8 {
            guard digits < 3, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            number = number * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0, let code = StatusCode(rawValue: number) else { return nil }
        self = code
    }
}
