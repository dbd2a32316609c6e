/// Where a call's OAuth 2.0 access token comes from: a fixed token, or a provider asked at call
/// start. One value, so a call can never carry both.
///
/// A struct rather than an enum so that later versions can add kinds of credentials without
/// breaking code that names them. Read what it holds with ``accessToken`` and ``provider``.
public struct CallCredentials: Sendable {
    enum Wrapped: Sendable {
        case accessToken(String)
        case provider(any AuthTokenProvider)
    }

    let wrapped: Wrapped

    private init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    /// Send this access token.
    public static func accessToken(_ token: String) -> Self {
        Self(.accessToken(token))
    }

    /// Ask this provider once per call, when the call starts.
    public static func provider(_ provider: any AuthTokenProvider) -> Self {
        Self(.provider(provider))
    }

    /// The fixed access token, for credentials made with ``accessToken(_:)``; `nil` otherwise.
    public var accessToken: String? {
        if case .accessToken(let token) = wrapped { return token }
        return nil
    }

    /// The provider, for credentials made with ``provider(_:)``; `nil` otherwise.
    public var provider: (any AuthTokenProvider)? {
        if case .provider(let provider) = wrapped { return provider }
        return nil
    }
}

extension CallCredentials: CustomStringConvertible {
    /// Names the kind of credentials, never the token.
    public var description: String {
        switch wrapped {
        case .accessToken: return "accessToken(<redacted>)"
        case .provider(let provider): return "provider(\(type(of: provider)))"
        }
    }
}
