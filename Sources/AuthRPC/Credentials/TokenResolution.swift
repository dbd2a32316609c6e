/// Turns a call's credentials into the token to send, under the call's deadline and cancellation.
enum TokenResolution {
    /// A token known without waiting, or the provider that must be asked.
    enum Lookup {
        /// The token to send; nil for a call without credentials.
        case resolved(String?)
        /// The provider has no fresh cached token: ``ask(_:call:deadline:)`` it.
        case ask(any AuthTokenProvider)
    }

    /// The token to send for the call `context` describes when it is known now: a static token,
    /// or a provider's cached one (no task, no hop).
    static func lookup(_ options: CallOptions, call context: AuthTokenContext) throws(RPCError) -> Lookup {
        if let token = options.oauth2AccessToken {
            return .resolved(try checked(token))
        }
        guard let provider = options.authTokenProvider else { return .resolved(nil) }
        if let token = provider.cachedToken(for: context) {
            return .resolved(try checked(token))
        }
        return .ask(provider)
    }

    /// Asks the provider, in a task of its own raced against the deadline and cancellation.
    // Never inlined: its frame exists only while a provider is asked.
    @inline(never)
    nonisolated(nonsending) static func ask(
        _ provider: any AuthTokenProvider,
        call context: AuthTokenContext,
        deadline: ContinuousClock.Instant?
    ) async throws(RPCError) -> String {
        switch await race(deadline: deadline, { try await provider.token(for: context) }) {
        case .value(let token):
            return try checked(token)
        case .failed(let error):
            throw rpcError(forProviderFailure: error)
        case .deadlineExceeded:
            throw RPCError(code: .deadlineExceeded, message: "deadline exceeded while waiting for the access token")
        case .cancelled:
            throw RPCError(code: .cancelled, message: "cancelled while waiting for the access token")
        }
    }

    /// Tells the provider a server rejected `token`, in a task of its own raced against the
    /// deadline and cancellation: a provider that is slow to take the news (an actor busy with a
    /// refresh, a lock) cannot keep the call past its deadline.
    // Never inlined: its frame exists only while a rejected token is invalidated.
    @inline(never)
    nonisolated(nonsending) static func invalidate(
        _ token: String,
        of provider: any InvalidatableAuthTokenProvider,
        deadline: ContinuousClock.Instant?
    ) async throws(RPCError) {
        switch await race(deadline: deadline, { await provider.invalidate(token: token) }) {
        case .value, .failed:
            return
        case .deadlineExceeded:
            throw RPCError(
                code: .deadlineExceeded,
                message: "deadline exceeded while the token provider invalidated a rejected token"
            )
        case .cancelled:
            throw RPCError(code: .cancelled, message: "cancelled while the token provider invalidated a rejected token")
        }
    }

    /// A token goes into a header: it must be non-empty printable ASCII without spaces
    /// (RFC 6750's b64token is stricter still). The token itself never appears in the error.
    private static func checked(_ token: String) throws(RPCError) -> String {
        // Over the contiguous bytes (every native string's): a view's iterator costs about ten
        // times as much per byte, on every call.
        let printable =
            token.utf8.withContiguousStorageIfAvailable(isTokenText)
            ?? token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        guard !token.isEmpty, printable else {
            throw RPCError(
                code: .unauthenticated,
                message: "the access token is empty or has characters a header cannot carry"
            )
        }
        return token
    }

    /// Whether every byte is printable ASCII other than space (0x21-0x7E). Eight bytes at a time:
    /// the check runs on every call, and a Google access token is a few hundred bytes.
    static func isTokenText(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let high: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // With every byte below 0x80, adding 0x5F or 0x01 to each carries into no other
            // byte: +0x5F sets a byte's top bit exactly when it is at least 0x21, +0x01 exactly
            // when it is 0x7F.
            guard word & high == 0, (word &+ 0x5F5F_5F5F_5F5F_5F5F) & high == high,
                (word &+ 0x0101_0101_0101_0101) & high == 0
            else { return false }
            offset += 8
        }
        while offset < bytes.count {
            guard bytes[offset] > 0x20, bytes[offset] < 0x7F else { return false }
            offset += 1
        }
        return true
    }

    /// A provider's failure as the call's status, keeping the error as the cause.
    static func rpcError(forProviderFailure error: any Error) -> RPCError {
        if let rpcError = error as? RPCError { return rpcError }
        let cause: (any Error)? = error
        if error is CancellationError {
            return RPCError(code: .cancelled, message: "the token provider was cancelled", cause: cause)
        }
        if let classified = error as? any AuthTokenProviderError, classified.isTransient {
            return RPCError(
                code: .unavailable,
                message: "could not get an access token (temporary failure): \(error)",
                cause: cause
            )
        }
        return RPCError(code: .unauthenticated, message: "could not get an access token: \(error)", cause: cause)
    }
}
