/// What a bidirectional stream receives, in the order the server sent it.
///
/// A stream yields one ``headers(status:fields:)``, then any number of ``message(_:)``, then one
/// ``trailers(_:)`` when the server ends its side. A trailers-only answer (one header block that
/// ends the stream, as gRPC servers send for an immediate error) yields `headers` with no fields
/// and `trailers` with all of them, so a reader finds `grpc-status` in `trailers` either way.
package enum HTTP2StreamEvent: Sendable, Hashable {
    /// The final (non-1xx) response header block: its `:status` and regular fields.
    case headers(status: Int, fields: [HTTP2HeaderField])
    /// One length-prefixed message's payload (the 5-byte gRPC prefix removed).
    case message([UInt8])
    /// The server ended its side; the trailing block's fields (empty when none came).
    case trailers([HTTP2HeaderField])
}
