import AuthRPCSyntax
import Foundation

/// A gRPC service config file (gRFC A6's JSON, as Google publishes `*_grpc_service_config.json`
/// with each API), read and checked when the generator starts, so that a client embeds only text
/// a `ServiceConfig` parser will accept.
///
/// It is checked by the runtime's own rules (`ServiceConfigValidator`, which `ServiceConfig(json:)`
/// uses too), strictly: each `methodConfig` entry must also have names, and a name only the keys
/// `service` and `method`.
struct ServiceConfigFile {
    /// The path the file was read from, as given.
    let path: String
    /// The file's text, unchanged.
    let text: String
    /// The services its `methodConfig` names.
    let services: Set<String>
    /// Whether an entry has a name without a service: the default for every service.
    let configuresEveryService: Bool

    /// Whether the config has something for `service`.
    func configures(_ service: String) -> Bool {
        configuresEveryService || services.contains(service)
    }

    /// Reads and checks the file at `path`.
    init(path: String) throws(GeneratorError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableServiceConfig(path: path, reason: "\(error.localizedDescription)")
        }
        try self.init(path: path, data: data)
    }

    /// Checks `data`, the contents of the file at `path`.
    init(path: String, data: Data) throws(GeneratorError) {
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidServiceConfig(path: path, problem: "is not UTF-8 text")
        }
        let document: DecodedJSON
        do {
            document = try JSONDecoder().decode(DecodedJSON.self, from: data)
        } catch {
            throw .invalidServiceConfig(path: path, problem: "is not JSON")
        }
        let valid: ValidServiceConfig
        do {
            valid = try ServiceConfigValidator.validate(document.value, strictness: .authored)
        } catch {
            let place = error.field.isEmpty ? "" : "\(error.field): "
            throw .invalidServiceConfig(path: path, problem: "is not a valid service config: \(place)\(error.problem)")
        }
        self.path = path
        self.text = text
        self.services = valid.services
        self.configuresEveryService = valid.configuresEveryService
    }
}
