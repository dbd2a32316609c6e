/// Options for one call, or a channel's defaults for every call.
///
/// Modelled on gRPC Objective-C's `GRPCCallOptions`. Credentials are one value
/// (``credentials``); ``oauth2AccessToken`` and ``authTokenProvider`` are views of it, so
/// setting one clears the other.
public struct CallOptions: Sendable {
    /// How long the call may take, from the moment it starts (resolving the token included).
    /// `nil` means no deadline; zero or less means the call fails `deadlineExceeded` before
    /// anything is sent; more than 99,999,999 hours (the most `grpc-timeout` can carry) counts as
    /// that.
    public var timeout: Duration?

    /// The call's credentials, sent as `authorization: Bearer <token>`.
    public var credentials: CallCredentials?

    /// Metadata sent with the request, after the headers the library writes.
    public var initialMetadata: Metadata

    /// The `:authority` to send instead of the channel's: `host[:port]` (an IPv6 address in
    /// brackets), without userinfo. Anything else fails the call with `invalidArgument` before
    /// it is sent.
    public var authority: String?

    /// Put before the library's user agent (`myapp/1.2 grpc-swift-authrpc/0.1.0`). Printable
    /// ASCII without a space at either end; anything else fails the call with `invalidArgument`
    /// before it is sent.
    public var userAgentPrefix: String?

    /// The largest response message accepted (after decompression); larger ones fail the call
    /// with `resourceExhausted` without being buffered whole. Default 4 MiB; `Int.max` lifts the
    /// limit (a gRPC message is still at most 4 GiB); a negative value fails the call with
    /// `invalidArgument`.
    public var maxResponseMessageBytes: Int

    /// Compress the request message with this algorithm; `nil` sends it uncompressed.
    public var compression: CompressionAlgorithm?

    /// Allow credentials on a plaintext channel. Off by default: without it, a call with
    /// credentials (or an `authorization` entry in its metadata) on a plaintext channel fails
    /// with `unauthenticated` before anything is sent. Turn it on only for a local test server.
    public var allowsInsecureCredentials: Bool

    /// When the server answers `unauthenticated` and the token came from an
    /// ``InvalidatableAuthTokenProvider``, invalidate that token and retry once with a fresh one,
    /// within the same deadline. On by default.
    public var retriesUnauthenticatedOnce: Bool

    /// Creates options; every parameter has the default described on its property.
    public init(
        timeout: Duration? = nil,
        credentials: CallCredentials? = nil,
        initialMetadata: Metadata = [:],
        authority: String? = nil,
        userAgentPrefix: String? = nil,
        maxResponseMessageBytes: Int = 4 << 20,
        compression: CompressionAlgorithm? = nil,
        allowsInsecureCredentials: Bool = false,
        retriesUnauthenticatedOnce: Bool = true
    ) {
        self.timeout = timeout
        self.credentials = credentials
        self.initialMetadata = initialMetadata
        self.authority = authority
        self.userAgentPrefix = userAgentPrefix
        self.maxResponseMessageBytes = maxResponseMessageBytes
        self.compression = compression
        self.allowsInsecureCredentials = allowsInsecureCredentials
        self.retriesUnauthenticatedOnce = retriesUnauthenticatedOnce
    }

    /// A fixed OAuth 2.0 access token. Setting it replaces any ``authTokenProvider``.
    public var oauth2AccessToken: String? {
        get { credentials?.accessToken }
        set { credentials = newValue.map { .accessToken($0) } }
    }

    /// A provider asked for a token at the start of each call. Setting it replaces any
    /// ``oauth2AccessToken``.
    public var authTokenProvider: (any AuthTokenProvider)? {
        get { credentials?.provider }
        set { credentials = newValue.map { .provider($0) } }
    }
}
