import AuthRPC
import Foundation
import GoogleAPICore
import SwiftProtobuf
import TestSupport
import Testing

/// Typed long-running operations (AIP-151) from a generated client, polled through the sandbox's
/// google.longrunning.Operations: its Jobs service steps a job each time a poll looks at it.
@Suite("Long-running operations against the sandbox")
struct LongRunningOperationTests {
    typealias Jobs = Authrpc_Testing_Googleapi_JobsClient

    /// Short waits, so the tests take milliseconds; each poll is a step of the job.
    static let quick = OperationPolling(initialDelay: .milliseconds(5), multiplier: 2, maxDelay: .milliseconds(40))

    static func job(steps: Int32, fail: Bool = false) -> Authrpc_Testing_Googleapi_RunJobRequest {
        var request = Authrpc_Testing_Googleapi_RunJobRequest()
        request.parent = "projects/p\(UUID().uuidString.lowercased().prefix(8))/locations/us-east1"
        request.jobID = "job-\(UUID().uuidString.lowercased().prefix(8))"
        request.steps = steps
        request.fail = fail
        return request
    }

    @Test("waitUntilDone polls until done and unpacks the response named by operation_info; metadata on the way")
    func succeeds() async throws {
        let jobs = Jobs(channel: try await SandboxChannel.tls())
        let request = Self.job(steps: 3)
        var operation = try await jobs.runJobOperation(request)
        #expect(operation.name == "\(request.parent)/operations/\(request.jobID)")
        #expect(!operation.isDone)
        #expect(try operation.result() == nil)
        #expect(try operation.metadata()?.stepsTotal == 3)
        try await operation.refresh()
        #expect(try operation.metadata()?.stepsDone == 1)
        let result = try await operation.waitUntilDone(polling: Self.quick)
        #expect(result.job == request.jobID && result.stepsRun == 3)
        #expect(operation.isDone)
        #expect(try operation.metadata()?.stepsDone == 3)
        // Already done: no further poll.
        #expect(try await operation.waitUntilDone(polling: Self.quick) == result)
    }

    @Test("A failed operation's error becomes an RPCError with its code, message and details")
    func fails() async throws {
        let jobs = Jobs(channel: try await SandboxChannel.tls())
        let request = Self.job(steps: 2, fail: true)
        var operation = try await jobs.runJobOperation(request)
        let error = await #expect(throws: RPCError.self) { try await operation.waitUntilDone(polling: Self.quick) }
        #expect(error?.code == .failedPrecondition)
        #expect(error?.message == "job \(request.jobID) failed at step 2")
        let status = try #require(try error?.decodedStatusDetails())
        let info = try Google_Rpc_ErrorInfo(unpackingAny: try #require(status.details.first))
        #expect(info.reason == "JOB_FAILED" && info.metadata["job"] == operation.name)
    }

    @Test("Polling gives up with deadlineExceeded after its timeout; the operation goes on")
    func timesOut() async throws {
        let jobs = Jobs(channel: try await SandboxChannel.tls())
        var operation = try await jobs.runJobOperation(Self.job(steps: 100))
        var polling = Self.quick
        polling.timeout = .milliseconds(60)
        let error = await #expect(throws: RPCError.self) { try await operation.waitUntilDone(polling: polling) }
        #expect(error?.code == .deadlineExceeded)
        let done = try #require(try operation.metadata()?.stepsDone)
        #expect(done >= 1 && done < 100)
    }

    @Test("A cancelled task stops polling with cancelled; cancel() ends the operation on the server")
    func cancellation() async throws {
        let jobs = Jobs(channel: try await SandboxChannel.tls())
        let operation = try await jobs.runJobOperation(Self.job(steps: 100))
        let waiting = Task {
            var copy = operation
            return try await copy.waitUntilDone(polling: OperationPolling(initialDelay: .seconds(30)))
        }
        waiting.cancel()
        let error = await #expect(throws: RPCError.self) { try await waiting.value }
        #expect(error?.code == .cancelled)

        try await operation.cancel()
        var cancelled = operation
        try await cancelled.refresh()
        #expect(cancelled.isDone)
        #expect(throws: RPCError.self) { try cancelled.result() }
        try await cancelled.delete()
        let gone = await #expect(throws: RPCError.self) { try await cancelled.refresh() }
        #expect(gone?.code == .notFound)
    }

    @Test("A polling policy out of its ranges is refused before any poll")
    func badPolicy() async throws {
        let jobs = Jobs(channel: try await SandboxChannel.tls())
        var operation = try await jobs.runJobOperation(Self.job(steps: 1))
        let error = await #expect(throws: RPCError.self) {
            try await operation.waitUntilDone(polling: OperationPolling(multiplier: 0.5))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == "invalid OperationPolling: multiplier must be a finite number of at least 1")
    }

    @Test("Polling waits grow by the multiplier up to the maximum (googleapis' defaults: 5 s, x1.5, 45 s, 5 min)")
    func waits() {
        let polling = OperationPolling.default
        #expect(
            polling.initialDelay == .seconds(5) && polling.maxDelay == .seconds(45) && polling.timeout == .seconds(300)
        )
        #expect(
            (0..<7).map { polling.delay(beforePoll: $0) } == [
                .seconds(5), .seconds(7.5), .seconds(11.25), .seconds(16.875), .seconds(25.3125), .seconds(37.96875),
                .seconds(45),
            ]
        )
        #expect(polling.delay(beforePoll: 1000) == .seconds(45))
    }

    @Test("An operation whose response is of another type fails internalError instead of unpacking garbage")
    func wrongResponseType() throws {
        var message = Google_Longrunning_Operation()
        message.name = "operations/x"
        message.done = true
        message.response = try Google_Protobuf_Any(message: Google_Protobuf_Duration(seconds: 1))
        let channel = try Channel(target: "127.0.0.1:1", transportSecurity: .plaintext)
        let operation = LongRunningOperation<
            Authrpc_Testing_Googleapi_JobResult, Authrpc_Testing_Googleapi_JobProgress
        >(
            message,
            operations: Google_Longrunning_OperationsClient(channel: channel)
        )
        let error = #expect(throws: RPCError.self) { try operation.result() }
        #expect(error?.code == .internalError)
        #expect(
            error?.message
                == "operation operations/x's response is a type.googleapis.com/google.protobuf.Duration, not the authrpc.testing.googleapi.JobResult its method names"
        )
        var empty = message
        empty.result = nil
        let emptyResponse = LongRunningOperation<Google_Protobuf_Empty, Google_Protobuf_Empty>(
            empty,
            operations: Google_Longrunning_OperationsClient(channel: channel)
        )
        #expect(try emptyResponse.result() == Google_Protobuf_Empty())
    }
}
