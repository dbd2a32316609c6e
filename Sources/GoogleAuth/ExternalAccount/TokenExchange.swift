import Foundation
import OAuth2

/// The RFC 8693 token exchange at Google's Security Token Service, as a value: the form that
/// trades a subject token for a Google access token.
///
/// `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `audience` (the pool
/// provider), `scope` (space-separated), `requested_token_type` (an access token),
/// `subject_token`, `subject_token_type`, and for a workforce pool without client
/// authentication `options={"userProject":"..."}` (JSON, as Google's Security Token Service
/// documents it). The client, when the file names one, authenticates with HTTP Basic.
struct TokenExchange: Sendable, Equatable {
    static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let requestedTokenType = "urn:ietf:params:oauth:token-type:access_token"

    var audience: String
    var subjectTokenType: String
    var scopes: [String]
    /// `workforce_pool_user_project`, sent only when no client authenticates (the client says
    /// which project is billed then).
    var workforcePoolUserProject: String?
    var hasClient: Bool

    /// The form, in google-auth's order.
    func parameters(subjectToken: String) -> [(String, String)] {
        var form: [(String, String)] = [
            ("grant_type", Self.grantType),
            ("audience", audience),
        ]
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
        form += [
            ("requested_token_type", Self.requestedTokenType),
            ("subject_token", subjectToken),
            ("subject_token_type", subjectTokenType),
        ]
        if let options { form.append(("options", options)) }
        return form
    }

    /// The `options` JSON, when there is one.
    var options: String? {
        guard let project = workforcePoolUserProject, !hasClient else { return nil }
        return "{\"userProject\":\(AWSSignedRequest.jsonString(project))}"
    }
}
