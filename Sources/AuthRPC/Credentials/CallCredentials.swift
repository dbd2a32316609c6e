/// Where a call's OAuth 2.0 access token comes from: a fixed token, or a provider asked at call
/// start. One value, so a call can never carry both.
public enum CallCredentials: Sendable {
    /// Send this access token.
    case accessToken(String)
    /// Ask this provider once per call, when the call starts.
    case provider(any AuthTokenProvider)
}

extension CallCredentials: CustomStringConvertible {
    /// Names the kind of credentials, never the token.
    public var description: String {
        switch self {
        case .accessToken: return "accessToken(<redacted>)"
        case .provider(let provider): return "provider(\(type(of: provider)))"
        }
    }
}
