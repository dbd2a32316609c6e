public import AuthRPC
public import SwiftProtobuf

/// A long-running operation (AIP-151) typed with the response and metadata messages its method
/// names in `google.longrunning.operation_info`.
///
/// Generated clients return one from `<method>Operation(_:options:)` for every method that
/// returns `google.longrunning.Operation` with an `operation_info`:
///
/// ```swift
/// var operation = try await client.createInstanceOperation(request, options: options)
/// print(try operation.metadata()?.progressPercent ?? 0)
/// let instance = try await operation.waitUntilDone()          // polls GetOperation with backoff
/// ```
///
/// It holds the operation as last seen (``operation``); ``refresh(options:)`` and
/// ``waitUntilDone(polling:options:)`` ask `google.longrunning.Operations` for a newer state on
/// the channel of ``operations``. A failed operation's `error` becomes an `RPCError` with its
/// code, message and details (``/AuthRPC/RPCError/decodedStatusDetails()``).
public struct LongRunningOperation<Response: SwiftProtobuf.Message, Metadata: SwiftProtobuf.Message>: Sendable {
    /// The operation as last seen: the method's answer, then each poll's.
    public private(set) var operation: Google_Longrunning_Operation
    /// The client that polls, cancels and deletes the operation.
    public let operations: Google_Longrunning_OperationsClient
    /// The options of polls, cancels and deletes that are given none: those of the call that
    /// started the operation (its credentials, and its timeout for each poll). `nil` uses the
    /// channel's defaults.
    public let options: CallOptions?

    /// Wraps `operation`, which `operations` can poll.
    ///
    /// - Parameters:
    ///   - operation: The operation as the method returned it.
    ///   - operations: `google.longrunning.Operations` on the API's channel.
    ///   - options: The options of later calls about the operation (see ``options``).
    public init(
        _ operation: Google_Longrunning_Operation,
        operations: Google_Longrunning_OperationsClient,
        options: CallOptions? = nil
    ) {
        self.operation = operation
        self.operations = operations
        self.options = options
    }

    /// The operation's name (`projects/p/locations/l/operations/o`).
    public var name: String { operation.name }

    /// The name as errors quote it: printable ASCII, at most 200 characters (it came from a
    /// server).
    private var quotedName: String { Self.printable(operation.name) }

    private static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(200).map { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F ? $0 : "?" }
            )
        )
    }

    /// Whether the operation had finished when last seen.
    public var isDone: Bool { operation.done }

    /// The metadata of the state last seen, unpacked; `nil` when it has none.
    ///
    /// - Throws: `RPCError` (`internalError`) when the metadata is not a `Metadata`.
    public func metadata() throws(RPCError) -> Metadata? {
        guard operation.hasMetadata else { return nil }
        return try unpack(operation.metadata, as: Metadata.self, field: "metadata")
    }

    /// The outcome of the state last seen: `nil` while the operation runs, its response once it
    /// succeeded.
    ///
    /// - Throws: `RPCError` for a failed operation: its `error` (code, message, and the status in
    ///   `grpc-status-details-bin`); `internalError` when the response is not a `Response`, or
    ///   when a finished operation has neither a response nor an error (unless `Response` is
    ///   `google.protobuf.Empty`, which a service may leave out).
    public func result() throws(RPCError) -> Response? {
        guard operation.done else { return nil }
        switch operation.result {
        case .error(let status)?:
            throw RPCError(status: status)
        case .response(let response)?:
            return try unpack(response, as: Response.self, field: "response")
        case nil:
            if Response.self == Google_Protobuf_Empty.self { return Response() }
            throw RPCError(
                code: .internalError,
                message: "operation \(quotedName) is done but has neither a response nor an error"
            )
        }
    }

    /// Asks for the operation's latest state (`GetOperation`).
    ///
    /// - Parameter options: The call's options; ``options`` when `nil`.
    /// - Throws: `RPCError` when the call fails.
    public mutating func refresh(options: CallOptions? = nil) async throws(RPCError) {
        var request = Google_Longrunning_GetOperationRequest()
        request.name = operation.name
        operation = try await operations.getOperation(request, options: options ?? self.options).message
    }

    /// Polls the operation until it is done, waiting between polls as `polling` says, and
    /// returns its response.
    ///
    /// Each poll is one `GetOperation` call with `options`; the first failure ends the wait
    /// with that error (the operation goes on on the server). An operation already done is not
    /// polled.
    ///
    /// - Parameters:
    ///   - polling: The waits between polls and how long to poll; ``OperationPolling/default``.
    ///   - options: The options of each poll; ``options`` when `nil`.
    /// - Returns: The operation's response.
    /// - Throws: `RPCError`: the operation's own error when it failed (see ``result()``), a
    ///   poll's error, `deadlineExceeded` when `polling.timeout` passes first, `cancelled` when
    ///   the task is cancelled, `invalidArgument` for a `polling` out of its ranges.
    public mutating func waitUntilDone(
        polling: OperationPolling = .default,
        options: CallOptions? = nil
    ) async throws(RPCError) -> Response {
        if let problem = polling.problem {
            throw RPCError(code: .invalidArgument, message: "invalid OperationPolling: \(problem)")
        }
        let clock = ContinuousClock()
        let deadline = polling.timeout.map { clock.now + $0 }
        var poll = 0
        while true {
            if let response = try result() { return response }
            var delay = polling.delay(beforePoll: poll)
            if let deadline {
                let left = deadline - clock.now
                guard left > .zero else {
                    throw RPCError(
                        code: .deadlineExceeded,
                        message: "operation \(quotedName) was not done after polling for \(polling.timeout ?? .zero)"
                    )
                }
                delay = min(delay, left)
            }
            do {
                try await Task.sleep(for: delay, clock: clock)
            } catch {
                throw RPCError(code: .cancelled, message: "waiting for operation \(quotedName) was cancelled")
            }
            try await refresh(options: options)
            poll += 1
        }
    }

    /// Asks the server to cancel the operation (`CancelOperation`); a cancelled operation ends
    /// with a `cancelled` error. Call ``refresh(options:)`` to see its new state.
    ///
    /// - Parameter options: The call's options; ``options`` when `nil`.
    /// - Throws: `RPCError` when the call fails.
    public func cancel(options: CallOptions? = nil) async throws(RPCError) {
        var request = Google_Longrunning_CancelOperationRequest()
        request.name = operation.name
        _ = try await operations.cancelOperation(request, options: options ?? self.options)
    }

    /// Tells the server the operation's result is no longer wanted (`DeleteOperation`); it does
    /// not cancel the operation.
    ///
    /// - Parameter options: The call's options; ``options`` when `nil`.
    /// - Throws: `RPCError` when the call fails.
    public func delete(options: CallOptions? = nil) async throws(RPCError) {
        var request = Google_Longrunning_DeleteOperationRequest()
        request.name = operation.name
        _ = try await operations.deleteOperation(request, options: options ?? self.options)
    }

    private func unpack<Message: SwiftProtobuf.Message>(
        _ any: Google_Protobuf_Any,
        as type: Message.Type,
        field: String
    ) throws(RPCError) -> Message {
        do {
            return try Message(unpackingAny: any)
        } catch {
            throw RPCError(
                code: .internalError,
                message:
                    "operation \(quotedName)'s \(field) is a \(Self.printable(any.typeURL)), not the \(Message.protoMessageName) its method names",
                cause: error
            )
        }
    }
}
