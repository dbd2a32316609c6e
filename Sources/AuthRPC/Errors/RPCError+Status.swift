import SwiftProtobuf

extension RPCError {
    /// The error a `google.rpc.Status` describes, as if a server had answered a call with it:
    /// its code (`unknown` for a code outside 1...16, and for 0, which is no error), its message,
    /// and the status itself in the trailers' `grpc-status-details-bin`, so that
    /// ``decodedStatusDetails()`` gives back its details.
    ///
    /// For the statuses that arrive inside messages rather than as a call's end: the `error` of
    /// a failed long-running operation, the per-item errors of batch responses.
    public init(status: Google_Rpc_Status) {
        let code = StatusCode(rawValue: Int(status.code)).flatMap { $0 == .ok ? nil : $0 } ?? .unknown
        var trailers = Metadata()
        trailers.addString("\(code.rawValue)", forKey: "grpc-status")
        if let details: [UInt8] = try? status.serializedBytes() {
            trailers.addBinary(details, forKey: "grpc-status-details-bin")
        }
        self.init(code: code, message: status.message, trailers: trailers)
    }
}
