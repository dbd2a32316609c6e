import AuthRPC
import OAuth2

/// The transport of every OAuth request the tool makes (discovery, device authorization, token,
/// revocation, Google's token endpoints): the library's own HTTP/1.1 client, trusting the
/// system's roots (`SSL_CERT_FILE` and `SSL_CERT_DIR` replace them, as for OpenSSL's tools) and
/// the `--ca-cert` CA besides, and going through the proxy the environment names, as the
/// channel does.
enum OAuthTrust {
    static func transport(caCert: String?) throws(ToolFailure) -> any OAuthTransport {
        guard let caCert else { return HTTP1OAuthTransport.standard }
        let pem = try LocalFile.text(
            at: caCert,
            option: "--ca-cert",
            limit: LocalFile.certificateLimit,
            what: "CA certificates"
        )
        do throws(OAuthError) {
            return try HTTP1OAuthTransport(tls: TLSConfiguration(trustRoots: .systemAndCertificates(pem: pem)))
        } catch {
            throw ToolFailure(status: .usage, message: "--ca-cert \(caCert): \(error.message)")
        }
    }
}
