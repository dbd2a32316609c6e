/// Turns a call's credentials into the token to send, under the call's deadline and cancellation.
enum TokenResolution {
    /// The token to send for the call `context` describes, or `nil` for a call without credentials.
    nonisolated(nonsending) static func token(for credentials: CallCredentials?, call context: AuthTokenContext, deadline: ContinuousClock.Instant?) async throws(RPCError) -> String? {
        switch credentials {
        case nil:
            return nil
        case .accessToken(let token):
            return try checked(token)
        case .provider(let provider):
            // The fast path: a provider with a fresh cached token answers without a task or a hop.
            if let token = provider.cachedToken(for: context) {
                return try checked(token)
            }
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
    }

    /// A token goes into a header: it must be non-empty printable ASCII without spaces
    /// (RFC 6750's b64token is stricter still). The token itself never appears in the error.
    private static func checked(_ token: String) throws(RPCError) -> String {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw RPCError(code: .unauthenticated, message: "the access token is empty or has characters a header cannot carry")
        }
        return token
    }

    /// A provider's failure as the call's status, keeping the error as the cause.
    static func rpcError(forProviderFailure error: any Error) -> RPCError {
        if let rpcError = error as? RPCError { return rpcError }
        let cause: (any Error)? = error
        if error is CancellationError {
            return RPCError(code: .cancelled, message: "the token provider was cancelled", cause: cause)
        }
        if let classified = error as? any AuthTokenProviderError, classified.isTransient {
            return RPCError(code: .unavailable, message: "could not get an access token (temporary failure): \(error)", cause: cause)
        }
        return RPCError(code: .unauthenticated, message: "could not get an access token: \(error)", cause: cause)
    }
}
