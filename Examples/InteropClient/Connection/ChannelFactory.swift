import AuthRPC
import Foundation

/// Makes the channels a case calls on, from the flags: the target, plaintext or TLS (with the
/// test CA and the name override), the service config, the additional metadata, and the
/// credentials the case puts on the whole channel.
struct ChannelFactory: Sendable {
    let flags: InteropFlags
    /// Sent with every call that names no credentials of its own (a channel's credentials).
    let channelCredentials: CallCredentials?
    /// TLS whatever `--use_tls` says: for credentials that choose the transport themselves.
    let forcesTLS: Bool

    /// `host:port`, an IPv6 address in brackets.
    var target: String {
        let host = flags.serverHost
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(bracketed):\(flags.serverPort)"
    }

    var usesTLS: Bool { flags.useTLS || forcesTLS }

    /// The options every call starts from: the channel's credentials, the `:authority` override
    /// on plaintext, and a minute for the call (a server that never answers cannot hang a case).
    var baseOptions: CallOptions {
        var options = CallOptions(timeout: .seconds(60))
        options.credentials = channelCredentials
        if !usesTLS { options.authority = flags.serverHostOverride }
        return options
    }

    /// A new channel.
    func makeChannel() throws -> Channel {
        let security: TransportSecurity
        if usesTLS {
            var tls = TLSConfiguration()
            if flags.useTestCA, let path = flags.caFile {
                let pem: String
                do {
                    pem = try String(contentsOfFile: path, encoding: .utf8)
                } catch {
                    throw SetupFailure("cannot read --ca_file \(path): \(error.localizedDescription)")
                }
                tls.trustRoots = .certificates(pem: pem)
            }
            tls.serverHostnameOverride = flags.serverHostOverride
            security = .tls(tls)
        } else {
            security = .plaintext
        }
        let serviceConfig: ServiceConfig?
        do {
            serviceConfig = try flags.serviceConfigJSON.map { try ServiceConfig(json: $0) }
        } catch {
            throw SetupFailure("--service_config_json: \(error)")
        }
        let interceptors: [any ClientInterceptor] =
            try flags.additionalMetadata.map {
                [AdditionalMetadataInterceptor(metadata: try AdditionalMetadata(parsing: $0))]
            }
            ?? []
        do {
            return try Channel(
                target: target,
                transportSecurity: security,
                defaultCallOptions: baseOptions,
                interceptors: interceptors,
                serviceConfig: serviceConfig
            )
        } catch {
            throw SetupFailure("cannot make a channel to \(target): \(error.message)")
        }
    }
}
