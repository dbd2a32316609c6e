/// Why ``ServiceConfigValidator`` refused a document: the field at fault, as a path into the JSON
/// (`methodConfig[2].retryPolicy.maxAttempts`, empty for the document itself), and what is wrong
/// with it, in words. Each caller wraps it in its own error.
package struct ServiceConfigProblem: Error, Sendable, Equatable {
    /// The path of the field at fault; empty for the whole document.
    package var field: String
    /// What is wrong with it.
    package var problem: String

    /// Creates a problem.
    package init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }
}
