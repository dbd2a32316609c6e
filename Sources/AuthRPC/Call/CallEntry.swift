/// What a unary call's entry needs of its options before it frames the request
/// (`Channel.entry(for:)`): a few words, so the generic entry holds no copy of the options.
@usableFromInline
struct CallEntry: Sendable {
    /// The call runs through interceptors (the channel's or its own).
    @usableFromInline let intercepted: Bool
    /// The compression the request is framed with; nil for none.
    @usableFromInline let compression: CompressionAlgorithm?
}
