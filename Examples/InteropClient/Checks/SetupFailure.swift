/// The case could not start: a file that cannot be read, credentials that cannot be made, a
/// channel the flags do not allow. Reported apart from a failed check.
struct SetupFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
