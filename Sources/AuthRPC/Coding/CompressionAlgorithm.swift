import HTTP2Client

/// A message compression algorithm (`grpc-encoding`).
public enum CompressionAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// gzip (RFC 1952).
    case gzip
    /// zlib-wrapped deflate (RFC 1950).
    case deflate

    var coding: ContentCoding {
        switch self {
        case .gzip: return .gzip
        case .deflate: return .deflate
        }
    }

    /// What the client accepts in responses (`grpc-accept-encoding`).
    static let acceptEncodingHeader = "identity,deflate,gzip"
}
