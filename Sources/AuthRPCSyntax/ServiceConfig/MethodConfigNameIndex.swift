/// Which method config each name of a service config selects, and gRPC's rules for names: a
/// method needs its service, and no name (nor the default, which has neither) appears twice.
/// The runtime looks calls up in it; the validator and configs built in code fill it the same way.
package struct MethodConfigNameIndex: Sendable {
    /// By `:path` (`/service/method`), by service, and the default.
    private var byPath: [String: Int] = [:]
    private var byService: [String: Int] = [:]
    private var defaultEntry: Int?

    /// An empty index.
    package init() {}

    /// Records that method config `entry` has the name `service`/`method` (either may be empty:
    /// see ``ServiceConfigValidator``), whose path in the document is `field`.
    ///
    /// - Throws: a problem when the method has no service, or the name is already recorded.
    package mutating func insert(
        service: String,
        method: String,
        entry: Int,
        field: String
    ) throws(ServiceConfigProblem) {
        if service.isEmpty {
            guard method.isEmpty else {
                throw ServiceConfigProblem(field: "\(field).method", problem: "a method needs its service")
            }
            guard defaultEntry == nil else {
                throw ServiceConfigProblem(field: field, problem: "the default name (no service) appears twice")
            }
            defaultEntry = entry
        } else if method.isEmpty {
            guard byService.updateValue(entry, forKey: service) == nil else {
                throw ServiceConfigProblem(field: field, problem: "\(service)/* appears twice")
            }
        } else {
            guard byPath.updateValue(entry, forKey: "/\(service)/\(method)") == nil else {
                throw ServiceConfigProblem(field: field, problem: "\(service)/\(method) appears twice")
            }
        }
    }

    /// The method config for the method at `path` (`/service/method`) of `service`: the one naming
    /// it, else the one naming its service, else the default; nil when none applies.
    package func entry(path: String, service: String) -> Int? {
        byPath[path] ?? byService[service] ?? defaultEntry
    }
}
