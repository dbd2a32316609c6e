/// A message compression algorithm (`grpc-encoding`).
///
/// A struct rather than an enum so that later versions can add algorithms without breaking code
/// that names or compares them.
public struct CompressionAlgorithm: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// How the messages are coded.
    let coding: ContentCoding

    private init(_ coding: ContentCoding) {
        self.coding = coding
    }

    /// gzip (RFC 1952).
    public static let gzip = Self(.gzip)
    /// zlib-wrapped deflate (RFC 1950).
    public static let deflate = Self(.deflate)

    /// The algorithm's name in `grpc-encoding`: `gzip`, `deflate`.
    public var rawValue: String { coding.rawValue }

    /// The algorithm named `rawValue` in `grpc-encoding`, or `nil` when this version does not
    /// support it (`identity` is no compression, so it is not an algorithm here either).
    public init?(rawValue: String) {
        guard let coding = ContentCoding(rawValue: rawValue) else { return nil }
        self.init(coding)
    }

    /// Every algorithm this version supports; later versions may support more.
    public static var allCases: [CompressionAlgorithm] { ContentCoding.allCases.map(Self.init) }

    /// The name in `grpc-encoding`.
    public var description: String { rawValue }

    /// What the client accepts in responses (`grpc-accept-encoding`).
    static let acceptEncodingHeader = "identity,deflate,gzip"
}
