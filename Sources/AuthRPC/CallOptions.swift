/// Options for one call, or a channel's defaults for every call.
///
/// Modelled on gRPC Objective-C's `GRPCCallOptions`. Credentials are one value
/// (``credentials``); ``oauth2AccessToken`` and ``authTokenProvider`` are views of it, so
/// setting one clears the other.
///
/// Copies share their values until one of them changes a value, so handing options around (the
/// channel's defaults to each call, a call's options through its interceptors and attempts)
/// costs one reference, not a copy of every value.
public struct CallOptions: Sendable {
    /// How long the call may take, from the moment it starts (resolving the token included, and
    /// every attempt of a retried call). `nil` means the service config's timeout for the method,
    /// else no deadline; zero or less means the call fails `deadlineExceeded` before
    /// anything is sent; more than 99,999,999 hours (the most `grpc-timeout` can carry) counts as
    /// that.
    public var timeout: Duration? {
        get { storage.timeout }
        set { uniqueStorage().timeout = newValue }
    }

    /// The call's credentials, sent as `authorization: Bearer <token>`.
    public var credentials: CallCredentials? {
        get {
            if let token = storage.accessToken { return .accessToken(token) }
            return storage.provider.map { .provider($0) }
        }
        set {
            let storage = uniqueStorage()
            storage.accessToken = newValue?.accessToken
            storage.provider = newValue?.provider
        }
    }

    /// Metadata sent with the request, after the headers the library writes.
    public var initialMetadata: Metadata {
        get { storage.initialMetadata }
        _modify { yield &uniqueStorage().initialMetadata }
    }

    /// The `:authority` to send instead of the channel's: `host[:port]` (an IPv6 address in
    /// brackets), without userinfo. Anything else fails the call with `invalidArgument` before
    /// it is sent.
    public var authority: String? {
        get { storage.authority }
        set { uniqueStorage().authority = newValue }
    }

    /// Put before the library's user agent (`myapp/1.2 grpc-swift-authrpc/0.1.0`). Printable
    /// ASCII without a space at either end; anything else fails the call with `invalidArgument`
    /// before it is sent.
    public var userAgentPrefix: String? {
        get { storage.userAgentPrefix }
        set { uniqueStorage().userAgentPrefix = newValue }
    }

    /// The largest response message accepted (after decompression); larger ones fail the call
    /// with `resourceExhausted` without being buffered whole. Default 4 MiB, or the service
    /// config's `maxResponseMessageBytes` for the method while this is not set; `Int.max` lifts
    /// the limit (a gRPC message is still at most 4 GiB); a negative value fails the call with
    /// `invalidArgument`.
    public var maxResponseMessageBytes: Int {
        get { explicitMaxResponseMessageBytes ?? Self.defaultMaxResponseMessageBytes }
        set { explicitMaxResponseMessageBytes = newValue }
    }

    /// The largest request message (serialized, after compression) the call may send; a larger
    /// one fails the call with `resourceExhausted` before anything is sent. `nil` (the default)
    /// means the service config's `maxRequestMessageBytes` for the method, else no limit beyond
    /// gRPC's 4 GiB; a negative value fails the call with `invalidArgument`.
    public var maxRequestMessageBytes: Int? {
        get { storage.maxRequestMessageBytes }
        set { uniqueStorage().maxRequestMessageBytes = newValue }
    }

    /// How the call is retried when it fails (gRFC A6); see ``RetryPolicy`` for what stops
    /// retrying whatever the policy says. `nil` (the default) means the service config's policy
    /// for the method, else no retries; ``RetryPolicy/disabled`` turns off a service config's
    /// retries for this call. An invalid policy fails the call with `invalidArgument` before
    /// anything is sent. Independently of it, requests the server never processed are retried
    /// transparently, and ``retriesUnauthenticatedOnce`` applies.
    public var retryPolicy: RetryPolicy? {
        get { storage.retryPolicy }
        set { uniqueStorage().retryPolicy = newValue }
    }

    /// Interceptors of this call, run after the channel's (``Channel/interceptors``), the first
    /// outermost. They see the call before the service config's defaults are applied and before
    /// its token is resolved: each call of their `next` runs the whole retry executor once,
    /// resolving the token for each attempt. Empty by default, and a call without interceptors
    /// (here and on the channel) costs nothing for them. See ``ClientInterceptor``.
    public var interceptors: [any ClientInterceptor] {
        get { storage.interceptors }
        _modify { yield &uniqueStorage().interceptors }
    }

    /// Compress the request message with this algorithm; `nil` sends it uncompressed.
    public var compression: CompressionAlgorithm? {
        get { storage.compression }
        set { uniqueStorage().compression = newValue }
    }

    /// Allow credentials on a plaintext channel. Off by default: without it, a call with
    /// credentials (or an `authorization` entry in its metadata) on a plaintext channel fails
    /// with `unauthenticated` before anything is sent. Turn it on only for a local test server.
    public var allowsInsecureCredentials: Bool {
        get { storage.allowsInsecureCredentials }
        set { uniqueStorage().allowsInsecureCredentials = newValue }
    }

    /// When the server answers `unauthenticated` and the token came from an
    /// ``InvalidatableAuthTokenProvider``, invalidate that token and retry once with a fresh one,
    /// within the same deadline. On by default.
    public var retriesUnauthenticatedOnce: Bool {
        get { storage.retriesUnauthenticatedOnce }
        set { uniqueStorage().retriesUnauthenticatedOnce = newValue }
    }

    /// Wait for the channel to connect rather than fail at once. Off by default, as in gRPC: a
    /// call then fails with `unavailable` (naming the last failure) while the channel is in
    /// ``ConnectivityState/transientFailure``, that is, while every connection waits out its
    /// backoff after failed attempts. With it, the call waits through the backoff and the next
    /// attempts until a connection is ready, bounded by its ``timeout`` (it then fails with
    /// `deadlineExceeded`, naming the last failure) or its cancellation. Either way a call waits
    /// while the channel is connecting, and fails at once when the channel is closed. While
    /// this is not set, the service config's `waitForReady` for the method applies.
    public var waitForReady: Bool {
        get { explicitWaitForReady ?? false }
        set { explicitWaitForReady = newValue }
    }

    /// Creates options; every parameter has the default described on its property.
    public init(
        timeout: Duration? = nil,
        credentials: CallCredentials? = nil,
        initialMetadata: Metadata = [:],
        authority: String? = nil,
        userAgentPrefix: String? = nil,
        maxResponseMessageBytes: Int? = nil,
        compression: CompressionAlgorithm? = nil,
        allowsInsecureCredentials: Bool = false,
        retriesUnauthenticatedOnce: Bool = true,
        maxRequestMessageBytes: Int? = nil,
        retryPolicy: RetryPolicy? = nil,
        interceptors: [any ClientInterceptor] = [],
        waitForReady: Bool? = nil
    ) {
        // Options with every default share one storage, so making them allocates nothing.
        if timeout == nil, credentials == nil, initialMetadata.isEmpty, authority == nil, userAgentPrefix == nil,
            maxResponseMessageBytes == nil, compression == nil, !allowsInsecureCredentials,
            retriesUnauthenticatedOnce, maxRequestMessageBytes == nil, retryPolicy == nil, interceptors.isEmpty,
            waitForReady == nil
        {
            self.storage = .defaults
            return
        }
        self.storage = Storage(
            timeout: timeout,
            accessToken: credentials?.accessToken,
            provider: credentials?.provider,
            initialMetadata: initialMetadata,
            authority: authority,
            userAgentPrefix: userAgentPrefix,
            maxResponseMessageBytes: maxResponseMessageBytes,
            maxRequestMessageBytes: maxRequestMessageBytes,
            retryPolicy: retryPolicy,
            interceptors: interceptors,
            compression: compression,
            allowsInsecureCredentials: allowsInsecureCredentials,
            retriesUnauthenticatedOnce: retriesUnauthenticatedOnce,
            waitForReady: waitForReady
        )
    }

    /// ``maxResponseMessageBytes`` when the caller set it; nil lets a service config's apply.
    var explicitMaxResponseMessageBytes: Int? {
        get { storage.maxResponseMessageBytes }
        set { uniqueStorage().maxResponseMessageBytes = newValue }
    }

    /// ``waitForReady`` when the caller set it; nil lets a service config's apply.
    var explicitWaitForReady: Bool? {
        get { storage.waitForReady }
        set { uniqueStorage().waitForReady = newValue }
    }

    /// Every value, shared with copies of these options until one changes (copy-on-write; see
    /// `Storage`).
    private(set) var storage: Storage

    /// The storage, made unique to these options first (copied when another `CallOptions` shares
    /// it): the one way to a `Storage` that may be changed.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy()
        }
        return storage
    }

    /// gRPC's default limit on a response message: 4 MiB.
    static let defaultMaxResponseMessageBytes = 4 << 20

    /// A fixed OAuth 2.0 access token. Setting it replaces any ``authTokenProvider``.
    public var oauth2AccessToken: String? {
        get { storage.accessToken }
        set {
            let storage = uniqueStorage()
            storage.accessToken = newValue
            storage.provider = nil
        }
    }

    /// A provider asked for a token at the start of each call. Setting it replaces any
    /// ``oauth2AccessToken``.
    public var authTokenProvider: (any AuthTokenProvider)? {
        get { storage.provider }
        set {
            let storage = uniqueStorage()
            storage.provider = newValue
            storage.accessToken = nil
        }
    }

    /// Whether the options carry credentials of either kind.
    var hasCredentials: Bool {
        storage.accessToken != nil || storage.provider != nil
    }
}
