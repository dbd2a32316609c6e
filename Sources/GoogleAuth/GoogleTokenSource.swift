public import OAuth2

/// An ``/OAuth2/AccessTokenSource`` for a Google credential, which can say who it acts as.
public protocol GoogleTokenSource: AccessTokenSource {
    /// Who the tokens act as and where the credential came from (no secrets).
    var identity: GoogleCredentialIdentity { get }
}
