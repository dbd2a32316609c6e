/// The call a token is asked for: what a provider that mints a token per service needs (a
/// self-signed JWT's audience is the service's host), and what lets a provider add request
/// metadata of its own.
public struct AuthTokenContext: Sendable, Hashable {
    /// The `:authority` the call is sent with (`host` or `host:port`): ``CallOptions/authority``,
    /// else the channel's.
    ///
    /// On a TLS channel this name has been verified before the provider is asked: either it is
    /// the name the handshake checked the server's certificate against, or the certificate's
    /// leaf was found valid for it too (as gRPC C++ checks a call's host); a call with any other
    /// authority fails `unauthenticated` without asking the provider. So a token minted for this
    /// audience (a self-signed JWT's `aud`) only goes to a server that proved it holds the name.
    /// On a plaintext channel nothing is verified (and credentials are refused there unless the
    /// call opts in with ``CallOptions/allowsInsecureCredentials``).
    public var authority: String
    /// The method called.
    public var method: MethodDescriptor

    /// Creates a context.
    public init(authority: String, method: MethodDescriptor) {
        self.authority = authority
        self.method = method
    }
}

extension AuthTokenProvider {
    /// Ignores the call: ``AuthTokenProvider/token()``.
    public func token(for context: AuthTokenContext) async throws -> String {
        try await token()
    }

    /// Ignores the call: ``AuthTokenProvider/cachedToken()``.
    public func cachedToken(for context: AuthTokenContext) -> String? {
        cachedToken()
    }

    /// No metadata of its own.
    public var requestMetadata: Metadata { Metadata() }
}

extension CallOptions {
    /// Adds the provider's ``AuthTokenProvider/requestMetadata`` after the caller's metadata,
    /// except keys the caller set (the caller's values win). The result is checked like any caller
    /// metadata before anything is sent. In place: the options are not copied when there is none.
    mutating func addProviderMetadata() {
        guard let provider = authTokenProvider else { return }
        let extra = provider.requestMetadata
        let callers = initialMetadata
        for (key, value) in extra where !callers.contains(key: key) {
            initialMetadata.add(value, forKey: key)
        }
    }
}
