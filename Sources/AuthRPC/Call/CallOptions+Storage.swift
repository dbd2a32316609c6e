extension CallOptions {
    /// The options' values, shared by every copy of a `CallOptions` until one of them changes a
    /// value: copying options (the channel's defaults into a call, a call's options into each
    /// step of its pipeline) retains one reference, and an async frame that keeps options keeps
    /// one word.
    ///
    /// Copy-on-write: a `Storage` is changed only through `CallOptions.uniqueStorage()`, which
    /// first makes it referenced by the changing `CallOptions` alone, and that `CallOptions` is
    /// itself under the compiler's static exclusivity for the change. So no read ever overlaps a
    /// write. That invariant is why `Storage` is `Sendable` without a lock, and why its fields
    /// skip the run-time exclusivity checks every class property would otherwise pay per access.
    final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var timeout: Duration?
        // The credentials as their two kinds (at most one set): a call reads which it has without
        // copying a `CallCredentials`, whose existential payload is copied through its witness.
        @exclusivity(unchecked) var accessToken: String?
        @exclusivity(unchecked) var provider: (any AuthTokenProvider)?
        @exclusivity(unchecked) var initialMetadata: Metadata
        @exclusivity(unchecked) var authority: String?
        @exclusivity(unchecked) var userAgentPrefix: String?
        @exclusivity(unchecked) var maxResponseMessageBytes: Int?
        @exclusivity(unchecked) var maxRequestMessageBytes: Int?
        @exclusivity(unchecked) var retryPolicy: RetryPolicy?
        @exclusivity(unchecked) var interceptors: [any ClientInterceptor]
        @exclusivity(unchecked) var compression: CompressionAlgorithm?
        @exclusivity(unchecked) var allowsInsecureCredentials: Bool
        @exclusivity(unchecked) var retriesUnauthenticatedOnce: Bool
        @exclusivity(unchecked) var waitForReady: Bool?

        init(
            timeout: Duration?,
            accessToken: String?,
            provider: (any AuthTokenProvider)?,
            initialMetadata: Metadata,
            authority: String?,
            userAgentPrefix: String?,
            maxResponseMessageBytes: Int?,
            maxRequestMessageBytes: Int?,
            retryPolicy: RetryPolicy?,
            interceptors: [any ClientInterceptor],
            compression: CompressionAlgorithm?,
            allowsInsecureCredentials: Bool,
            retriesUnauthenticatedOnce: Bool,
            waitForReady: Bool?
        ) {
            self.timeout = timeout
            self.accessToken = accessToken
            self.provider = provider
            self.initialMetadata = initialMetadata
            self.authority = authority
            self.userAgentPrefix = userAgentPrefix
            self.maxResponseMessageBytes = maxResponseMessageBytes
            self.maxRequestMessageBytes = maxRequestMessageBytes
            self.retryPolicy = retryPolicy
            self.interceptors = interceptors
            self.compression = compression
            self.allowsInsecureCredentials = allowsInsecureCredentials
            self.retriesUnauthenticatedOnce = retriesUnauthenticatedOnce
            self.waitForReady = waitForReady
        }

        /// A new storage with the same values, for a `CallOptions` about to change one.
        func copy() -> Storage {
            Storage(
                timeout: timeout,
                accessToken: accessToken,
                provider: provider,
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

        /// The storage of options with every default: shared, so options made without a value
        /// (`CallOptions()`, a channel's defaults) allocate nothing until one is set.
        static let defaults = Storage(
            timeout: nil,
            accessToken: nil,
            provider: nil,
            initialMetadata: [:],
            authority: nil,
            userAgentPrefix: nil,
            maxResponseMessageBytes: nil,
            maxRequestMessageBytes: nil,
            retryPolicy: nil,
            interceptors: [],
            compression: nil,
            allowsInsecureCredentials: false,
            retriesUnauthenticatedOnce: true,
            waitForReady: nil
        )
    }
}
