import Foundation

/// The one place OAuth requests go out, so every failure below HTTP is classified the same way.
enum OAuthHTTP {
    /// Sends `request`; a failure to get any answer is ``OAuthError/Kind/transient``.
    static func send(_ request: OAuthHTTPRequest, transport: any OAuthTransport, purpose: String) async throws(OAuthError) -> OAuthHTTPResponse {
        do {
            return try await transport.send(request)
        } catch is CancellationError {
            throw OAuthError(.transient, "\(purpose) request to \(request.url.redacted) was cancelled", underlying: CancellationError())
        } catch {
            throw OAuthError(.transient, "\(purpose) request to \(request.url.redacted) failed: \(error.localizedDescription)", underlying: SendableDescription(error))
        }
    }

    /// A form POST: `Content-Type` and `Accept` set, the client authenticated as it is configured.
    static func formRequest(to url: URL, parameters: [(String, String)], client: OAuthClient?) -> OAuthHTTPRequest {
        var parameters = parameters
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ]
        if let client {
            switch client.authentication {
            case .none:
                parameters.append(("client_id", client.id))
            case .clientSecretPost:
                parameters.append(("client_id", client.id))
                parameters.append(("client_secret", client.secret ?? ""))
            case .clientSecretBasic:
                // RFC 6749 section 2.3.1: form-encode id and secret before joining them.
                let credentials = "\(FormEncoding.percentEncode(client.id)):\(FormEncoding.percentEncode(client.secret ?? ""))"
                headers.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
            }
        }
        return OAuthHTTPRequest(url: url, method: "POST", headers: headers, body: Data(FormEncoding.encode(parameters).utf8))
    }
}

/// An error's text, kept without the error itself (which may not be `Sendable`).
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = String(describing: error) }
}

extension URL {
    /// The URL without its query and fragment, which may carry codes or tokens.
    var redacted: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return "<url>" }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "<url>"
    }
}
