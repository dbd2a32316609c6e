/// Why a service config was refused: the field at fault and what is wrong with it.
///
/// Thrown when the config is loaded (``ServiceConfig/init(json:)`` or
/// ``ServiceConfig/init(methodConfigs:retryThrottling:)``), never when a call uses it.
public struct ServiceConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is, as a path into the JSON: `methodConfig[2].retryPolicy.maxAttempts`;
    /// empty when the text is not JSON at all.
    public var field: String
    /// What is wrong, in words.
    public var problem: String

    /// Creates an error.
    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    /// `invalid service config: <field>: <problem>`.
    public var description: String {
        field.isEmpty ? "invalid service config: \(problem)" : "invalid service config: \(field): \(problem)"
    }
}
