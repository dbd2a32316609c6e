import Foundation
import GoogleAuth

extension GoogleCredentialOptions {
    /// The IAM Credentials URL of `method` for `email`: under --iam-endpoint, else Google's.
    func iamURL(_ email: String, _ method: String) throws(ToolFailure) -> URL? {
        guard let iamEndpoint else { return nil }
        guard let base = URL(string: iamEndpoint), base.scheme != nil, base.host != nil, base.query == nil else {
            throw ToolFailure(status: .usage, message: "--iam-endpoint \(iamEndpoint) is not an absolute URL")
        }
        return base.appendingPathComponent("v1/projects/-/serviceAccounts/\(email):\(method)")
    }

    /// The token endpoint of authorized-user refreshes: under --user-token-endpoint, else Google's.
    func userEndpoint() throws(ToolFailure) -> URL {
        guard let userTokenEndpoint else { return AuthorizedUserTokenSource.googleTokenEndpoint }
        guard let url = URL(string: userTokenEndpoint), url.scheme != nil, url.host != nil else {
            throw ToolFailure(
                status: .usage,
                message: "--user-token-endpoint \(userTokenEndpoint) is not an absolute URL"
            )
        }
        return url
    }
}
