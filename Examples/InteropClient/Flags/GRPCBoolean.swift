import ArgumentParser

/// Boolean flag values as gRPC's interop clients take them (`--use_tls=true`): Go's spellings
/// `true`/`false`, `1`/`0`, `t`/`f`, in any case.
enum GRPCBoolean {
    /// The value `text` spells; a usage error naming it otherwise.
    static func parse(_ text: String) throws -> Bool {
        switch text.lowercased() {
        case "true", "t", "1": return true
        case "false", "f", "0": return false
        default: throw ValidationError("'\(text)' is not a boolean (true or false)")
        }
    }
}
