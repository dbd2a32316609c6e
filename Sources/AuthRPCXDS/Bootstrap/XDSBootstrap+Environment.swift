internal import AuthRPCSystem
internal import Foundation

extension XDSBootstrap {
    /// The largest bootstrap read, from a file or the environment: a real one is a few hundred
    /// bytes, and the file may be anything.
    static let maximumBytes = 1 << 20

    /// Reads the bootstrap as gRPC does: from the file `GRPC_XDS_BOOTSTRAP` names if it is set,
    /// else from the JSON in `GRPC_XDS_BOOTSTRAP_CONFIG`.
    ///
    /// - Throws: ``XDSBootstrapError`` naming the variable when neither is set or the file cannot
    ///   be read (missing, not a regular file, over 1 MiB), and naming the field when the JSON is
    ///   refused (``init(json:)``).
    public static func fromEnvironment() throws(XDSBootstrapError) -> XDSBootstrap {
        try fromEnvironment(ProcessInfo.processInfo.environment)
    }

    /// ``fromEnvironment()`` on the variables given.
    static func fromEnvironment(_ environment: [String: String]) throws(XDSBootstrapError) -> XDSBootstrap {
        if let path = environment["GRPC_XDS_BOOTSTRAP"], !path.isEmpty {
            let bytes: SecretBytes
            do {
                bytes = try BoundedFile.read(path, limit: maximumBytes)
            } catch {
                throw XDSBootstrapError(field: "GRPC_XDS_BOOTSTRAP", problem: "cannot read '\(path)': \(error)")
            }
            let text = bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            return try XDSBootstrap(json: text)
        }
        if let text = environment["GRPC_XDS_BOOTSTRAP_CONFIG"], !text.isEmpty {
            guard text.utf8.count <= maximumBytes else {
                throw XDSBootstrapError(
                    field: "GRPC_XDS_BOOTSTRAP_CONFIG",
                    problem: "longer than \(maximumBytes) bytes"
                )
            }
            return try XDSBootstrap(json: text)
        }
        throw XDSBootstrapError(
            field: "GRPC_XDS_BOOTSTRAP",
            problem: "neither GRPC_XDS_BOOTSTRAP (a file) nor GRPC_XDS_BOOTSTRAP_CONFIG (JSON) is set"
        )
    }
}
