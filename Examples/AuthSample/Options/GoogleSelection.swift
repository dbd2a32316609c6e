import GoogleAuth
import Logging
import OAuth2

/// Google credentials read from the command line or the environment, and what to say about them.
struct GoogleSelection {
    let credentials: GoogleCredentials
    /// How they were found: `--service-account-key PATH`, `--authorized-user PATH`, or
    /// `Application Default Credentials: ` and ADC's origin.
    let origin: String
    /// How tokens are made.
    let tokens: String
    /// The metadata server, when the credentials are the instance's.
    var metadataHost: String? = nil
    /// For identity federation: `audience`, `source_kind`, `source_location` and
    /// `impersonated_account` (when there is one); empty for the other kinds.
    var federation: [String: String] = [:]

    /// The account the metadata server names (for `status`; a call's server reports it itself).
    func metadataPrincipal(logger: Logger) async -> Result<String, OAuthError>? {
        guard let metadataHost else { return nil }
        do throws(OAuthError) {
            return .success(
                try await ComputeEngineTokenSource(host: metadataHost, logger: logger).serviceAccountEmail()
            )
        } catch {
            return .failure(error)
        }
    }

    /// The universe the metadata server says the instance belongs to, for Compute Engine
    /// credentials; `nil` for the others.
    func metadataUniverse(logger: Logger) async -> Result<String, OAuthError>? {
        guard let metadataHost else { return nil }
        do throws(OAuthError) {
            return .success(try await ComputeEngineTokenSource(host: metadataHost, logger: logger).universeDomain())
        } catch {
            return .failure(error)
        }
    }
}
