/// gRPC's status codes by name, as service configs spell them (`"UNAVAILABLE"`): the name of code
/// `n` is `all[n]`.
package enum GRPCStatusCodeName {
    /// The seventeen names, from `OK` (0) to `UNAUTHENTICATED` (16).
    package static let all = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
        "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]
}
