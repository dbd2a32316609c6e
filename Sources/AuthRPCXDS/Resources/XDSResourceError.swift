/// Why a resource from the control plane was refused: the reason the client NACKs it with (in the
/// request's `error_detail`), keeping the last good version.
struct XDSResourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the resource the problem is (`virtual_hosts[0].routes[2].match.headers[0]`).
    var field: String
    /// What is wrong, in words.
    var problem: String

    init(_ field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    var description: String { field.isEmpty ? problem : "\(field): \(problem)" }

    /// The same error, its field placed under `parent`.
    func under(_ parent: String) -> XDSResourceError {
        XDSResourceError(field.isEmpty ? parent : "\(parent).\(field)", problem)
    }
}
