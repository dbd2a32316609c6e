/// Why an ADS stream ended: the client then starts another after a backoff.
struct XDSADSFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
