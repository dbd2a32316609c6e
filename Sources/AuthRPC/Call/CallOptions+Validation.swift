extension CallOptions {
    /// The longest timeout a call honours: the most `grpc-timeout` can carry (99,999,999 hours).
    /// A longer one (up to `Duration`'s own range) is treated as this.
    static let longestTimeout = Duration.seconds(99_999_999 * 3600)

    /// Checks everything the options put into the request, as a call does before sending
    /// anything: a bad value is `invalidArgument` saying what is wrong, never a malformed header.
    func validateForSending() throws(RPCError) {
        guard maxResponseMessageBytes >= 0 else {
            throw RPCError(
                code: .invalidArgument,
                message: "maxResponseMessageBytes must not be negative (it is \(maxResponseMessageBytes))"
            )
        }
        if let maxRequestMessageBytes, maxRequestMessageBytes < 0 {
            throw RPCError(
                code: .invalidArgument,
                message: "maxRequestMessageBytes must not be negative (it is \(maxRequestMessageBytes))"
            )
        }
        if let problem = retryPolicy?.problem {
            throw RPCError(code: .invalidArgument, message: "invalid retryPolicy: \(problem)")
        }
        if let userAgentPrefix, let problem = Self.userAgentProblem(in: userAgentPrefix) {
            throw RPCError(code: .invalidArgument, message: "invalid userAgentPrefix: \(problem)")
        }
        if let authority, let problem = Authority.problem(in: authority) {
            throw RPCError(code: .invalidArgument, message: "invalid authority (expected host[:port]): \(problem)")
        }
        try initialMetadata.validateForSending()
    }

    /// A user agent goes into a header value: printable ASCII, no space at either end.
    private static func userAgentProblem(in text: String) -> String? {
        guard !text.isEmpty else { return "it is empty" }
        for (offset, byte) in text.utf8.enumerated() where byte < 0x20 || byte > 0x7E {
            return Authority.describe(byte, at: offset, "(printable ASCII only, 0x20-0x7E)")
        }
        guard text.utf8.first != 0x20, text.utf8.last != 0x20 else { return "it starts or ends with a space" }
        return nil
    }
}
