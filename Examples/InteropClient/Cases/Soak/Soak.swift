import AuthRPC
import AuthSampleService
import Foundation

/// rpc_soak and channel_soak (Go's): `--soak_iterations` large unary calls, on the case's channel
/// or each on a channel of its own, shared by `--soak_num_threads` workers. An iteration fails
/// when its call fails, its answer is wrong, or it takes longer than
/// `--soak_per_iteration_max_acceptable_latency_ms`. The case fails when more iterations failed
/// than `--soak_max_failures`, or when `--soak_overall_timeout_seconds` ended it before every
/// iteration ran.
struct Soak: InteropCase {
    /// Whether each iteration makes (and shuts down) a channel of its own.
    let resetsChannel: Bool

    func run(_ context: CaseContext) async throws {
        let flags = context.flags
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .seconds(flags.soakOverallTimeoutSeconds)
        let perWorker = flags.soakIterations / flags.soakNumThreads
        let results = try await withThrowingTaskGroup(of: SoakResults.self) { group in
            for worker in 0..<flags.soakNumThreads {
                group.addTask {
                    try await runWorker(worker, iterations: perWorker, context: context, deadline: deadline)
                }
            }
            var all = SoakResults()
            for try await results in group { all.merge(results) }
            return all
        }
        let summary =
            "soak test ran: \(results.iterationsRun) / \(flags.soakIterations) iterations. Total failures: "
            + "\(results.failures). Latencies in milliseconds: \(results.latencySummary)"
        print(summary)
        if results.iterationsRun < flags.soakIterations {
            throw CaseFailure(
                what: "soak iterations run within --soak_overall_timeout_seconds=\(flags.soakOverallTimeoutSeconds)",
                expected: "\(flags.soakIterations)",
                seen: "\(results.iterationsRun)"
            )
        }
        if results.failures > flags.soakMaxFailures {
            throw CaseFailure(
                what: "failed soak iterations",
                expected: "at most \(flags.soakMaxFailures) (--soak_max_failures)",
                seen: "\(results.failures)"
            )
        }
    }

    private func runWorker(
        _ worker: Int,
        iterations: Int,
        context: CaseContext,
        deadline: ContinuousClock.Instant
    ) async throws -> SoakResults {
        let flags = context.flags
        let clock = ContinuousClock()
        let maxLatency = Duration.milliseconds(flags.soakPerIterationMaxAcceptableLatencyMs)
        let request = Payloads.request(requestSize: flags.soakRequestSize, responseSize: flags.soakResponseSize)
        var results = SoakResults()
        for iteration in 0..<iterations {
            let start = clock.now
            guard start < deadline else {
                printError("worker \(worker): the overall timeout ended the soak before iteration \(iteration)")
                break
            }
            let earliestNext = start + .milliseconds(flags.soakMinTimeMsBetweenRPCs)
            results.iterationsRun += 1
            let channel = resetsChannel ? try context.channels.makeChannel() : context.channel
            let outcome = await Self.iteration(
                on: channel,
                request: request,
                responseSize: flags.soakResponseSize,
                options: context.options,
                deadline: deadline
            )
            if resetsChannel { await channel.shutdown() }
            let latency = clock.now - start
            let milliseconds = Int((latency / .milliseconds(1)).rounded(.up))
            let line = "worker \(worker): soak iteration: \(iteration) elapsed_ms: \(milliseconds)"
            if let failure = outcome {
                results.failures += 1
                printError("\(line) failed: \(failure)")
            } else if latency > maxLatency {
                results.failures += 1
                printError("\(line) exceeds max acceptable latency: \(flags.soakPerIterationMaxAcceptableLatencyMs)")
            } else {
                results.latenciesMilliseconds.append(milliseconds)
                printError("\(line) succeeded")
            }
            let now = clock.now
            if now < earliestNext { try await Task.sleep(for: earliestNext - now) }
        }
        return results
    }

    /// One large unary call, its answer checked; the failure, or nil.
    private static func iteration(
        on channel: Channel,
        request: Grpc_Testing_SimpleRequest,
        responseSize: Int,
        options: CallOptions,
        deadline: ContinuousClock.Instant
    ) async -> CaseFailure? {
        var options = options
        options.timeout = deadline - ContinuousClock.now
        do {
            let response = try await Grpc_Testing_TestServiceClient(channel: channel).unaryCall(
                request,
                options: options
            )
            try Payloads.check(response.message, size: responseSize)
            return nil
        } catch let failure as CaseFailure {
            return failure
        } catch let error as RPCError {
            return .callFailed("UnaryCall", error)
        } catch {
            return CaseFailure(what: "UnaryCall", expected: "OK", seen: "\(error)")
        }
    }
}
