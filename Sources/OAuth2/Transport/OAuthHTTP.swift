import AuthRPC
import Foundation

/// The one place OAuth requests go out, so every request obeys the same rules and every failure
/// below HTTP is classified the same way.
enum OAuthHTTP {
    /// Sends `request`.
    ///
    /// Before anything is sent, the URL must be https (or http on loopback), or plain http to
    /// the place `plaintext` names for a request that carries no secret (``EndpointSecurity``).
    /// The answer must not be a redirect, and its body must fit the request's limit, whatever the
    /// transport did.
    ///
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` for a URL the request may not go to or
    ///   a redirect; ``OAuthError/Kind/transient`` for no answer, a timeout or an oversized body.
    static func send(
        _ request: OAuthHTTPRequest,
        transport: any OAuthTransport,
        purpose: String,
        plaintext: PlaintextAllowance = .none
    ) async throws(OAuthError) -> OAuthHTTPResponse {
        try EndpointSecurity.require(request, plaintext: plaintext, for: "the \(purpose) endpoint")
        // The transport needs the allowance too: the metadata servers it names are never proxied.
        var request = request
        request.plaintext = plaintext
        let response: OAuthHTTPResponse
        do {
            response = try await transport.send(request)
        } catch is CancellationError {
            throw OAuthError(
                .transient,
                "\(purpose) request to \(request.url.redacted) was cancelled",
                underlying: CancellationError()
            )
        } catch let error as OAuthError {
            // The transport's own configuration (an unusable proxy setting, say).
            throw error
        } catch let error as TransportError {
            // Below HTTP: connecting, the proxy, TLS, or the server's bytes.
            throw OAuthError(
                .transient,
                "\(purpose) request to \(request.url.redacted) failed: \(error.message)",
                underlying: error
            )
        } catch let error as OAuthTransportError {
            throw OAuthError(
                .transient,
                "the \(purpose) endpoint \(request.url.redacted) sent no usable answer: \(error)",
                underlying: error
            )
        } catch {
            throw OAuthError(
                .transient,
                "\(purpose) request to \(request.url.redacted) failed: \(error.localizedDescription)",
                underlying: SendableDescription(error)
            )
        }
        if (300..<400).contains(response.statusCode) {
            throw OAuthError(
                .invalidConfiguration,
                "the \(purpose) endpoint \(request.url.redacted) answered with a redirect (HTTP \(response.statusCode)); redirects are not followed, so name the endpoint it moved to"
            )
        }
        guard response.body.count <= request.maximumResponseBodySize else {
            let error = OAuthTransportError.responseTooLarge(limit: request.maximumResponseBodySize)
            throw OAuthError(
                .transient,
                "the \(purpose) endpoint \(request.url.redacted) sent no usable answer: \(error)",
                underlying: error
            )
        }
        return response
    }

    /// A form POST: `Content-Type` and `Accept` set, the client authenticated as it is configured.
    static func formRequest(to url: URL, parameters: [(String, String)], client: OAuthClient?) -> OAuthHTTPRequest {
        var parameters = parameters
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ]
        if let client {
            switch client.authentication.wrapped {
            case .none:
                parameters.append(("client_id", client.id))
            case .clientSecretPost:
                parameters.append(("client_id", client.id))
                parameters.append(("client_secret", client.secret ?? ""))
            case .clientSecretBasic:
                // RFC 6749 section 2.3.1: form-encode id and secret before joining them.
                let credentials =
                    "\(FormEncoding.percentEncode(client.id)):\(FormEncoding.percentEncode(client.secret ?? ""))"
                headers.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
            }
        }
        return OAuthHTTPRequest(
            url: url,
            method: "POST",
            headers: headers,
            body: Data(FormEncoding.encode(parameters).utf8)
        )
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
