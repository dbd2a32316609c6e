/// Why an xDS bootstrap was refused: the field at fault and what is wrong with it.
///
/// Thrown when the bootstrap is read (``XDSBootstrap/init(json:)``,
/// ``XDSBootstrap/fromEnvironment()``), before anything is sent to a control plane.
public struct XDSBootstrapError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is, as a path into the JSON (`xds_servers[0].server_uri`), or the
    /// environment variable at fault (`GRPC_XDS_BOOTSTRAP`); empty when the text is not a JSON
    /// object at all.
    public var field: String
    /// What is wrong, in words.
    public var problem: String

    /// Creates an error.
    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    /// `invalid xDS bootstrap: <field>: <problem>`.
    public var description: String {
        field.isEmpty ? "invalid xDS bootstrap: \(problem)" : "invalid xDS bootstrap: \(field): \(problem)"
    }
}
