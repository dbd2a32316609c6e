// The chaos soak's client: many unary calls on one channel through a proxy that cuts connections,
// recording how each call ended. Driven by Tests/Peers/chaos_soak.py, which checks the results.
//
//   ChaosSoak --target 127.0.0.1:PORT --calls 100000 --concurrency 100 --deadline-ms 5000 \
//             --outcomes-file FILE
//
// Standard output: `PROGRESS <n>` every 1,000 finished calls, `SAMPLE <n> <rss KiB> <open fds>`
// every 10,000 (and at 0), then `DONE`. The outcomes file gets one line per call:
// `<id> <status code> <elapsed µs>`.
import AuthRPC
import AuthSampleService
import Foundation
import Logging
import SwiftProtobuf

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var target = ""
    var calls = 100_000
    var concurrency = 100
    var deadline = Duration.milliseconds(5000)
    var outcomesFile = ""

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { throw UsageError("\(flag) needs a value") }
            switch flag {
            case "--target": target = value
            case "--calls": calls = try Self.positive(value, flag)
            case "--concurrency": concurrency = try Self.positive(value, flag)
            case "--deadline-ms": deadline = .milliseconds(try Self.positive(value, flag))
            case "--outcomes-file": outcomesFile = value
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard !target.isEmpty, !outcomesFile.isEmpty else {
            throw UsageError("--target and --outcomes-file are required")
        }
    }

    private static func positive(_ text: String, _ flag: String) throws -> Int {
        guard let value = Int(text), value > 0, value <= 10_000_000 else {
            throw UsageError("\(flag) must be a positive integer")
        }
        return value
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// How one call ended.
struct Outcome: Sendable {
    var id: Int
    var code: StatusCode
    var elapsed: Duration
}

/// Resident memory in KiB and the number of open descriptors, from /proc.
func processSample() -> (rssKiB: Int, fds: Int) {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    return (pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024, fds)
}

/// One line on standard output, written at once (the driver reads it as it comes).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

@main
enum ChaosSoak {
    static let method = MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")

    static func main() async {
        let options: Options
        do {
            options = try Options(CommandLine.arguments)
        } catch {
            FileHandle.standardError.write(Data("ChaosSoak: \(error)\n".utf8))
            exit(64)
        }
        let channel: Channel
        do {
            // Connection failures are the point of the soak: log only errors.
            var logger = Logger(label: "chaos-soak")
            logger.logLevel = .error
            channel = try Channel(target: options.target, transportSecurity: .plaintext, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("ChaosSoak: \(error)\n".utf8))
            exit(64)
        }
        let request = Grpc_Testing_SimpleRequest.with {
            $0.responseSize = 100
            $0.payload.body = Data(repeating: 7, count: 100)
        }

        guard FileManager.default.createFile(atPath: options.outcomesFile, contents: nil),
            let outcomes = FileHandle(forWritingAtPath: options.outcomesFile)
        else {
            FileHandle.standardError.write(Data("ChaosSoak: cannot write \(options.outcomesFile)\n".utf8))
            exit(73)
        }
        var pending = ""
        var finished = 0
        let sample = processSample()
        emit("SAMPLE 0 \(sample.rssKiB) \(sample.fds)")

        await withTaskGroup(of: Outcome.self) { group in
            var next = 0
            func start() {
                let id = next
                next += 1
                group.addTask {
                    var callOptions = CallOptions(timeout: options.deadline)
                    callOptions.initialMetadata.addString(String(id), forKey: "x-soak-id")
                    let started = ContinuousClock.now
                    let code: StatusCode
                    do throws(RPCError) {
                        _ = try await channel.unary(
                            method,
                            request: request,
                            responseType: Grpc_Testing_SimpleResponse.self,
                            options: callOptions
                        )
                        code = .ok
                    } catch {
                        code = error.code
                    }
                    return Outcome(id: id, code: code, elapsed: ContinuousClock.now - started)
                }
            }
            for _ in 0..<min(options.concurrency, options.calls) { start() }
            while let outcome = await group.next() {
                finished += 1
                let (seconds, attoseconds) = outcome.elapsed.components
                pending +=
                    "\(outcome.id) \(outcome.code.rawValue) \(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)\n"
                if finished % 1000 == 0 {
                    outcomes.write(Data(pending.utf8))
                    pending = ""
                    emit("PROGRESS \(finished)")
                }
                if finished % 10_000 == 0 {
                    let sample = processSample()
                    emit("SAMPLE \(finished) \(sample.rssKiB) \(sample.fds)")
                }
                if next < options.calls { start() }
            }
        }
        outcomes.write(Data(pending.utf8))
        try? outcomes.close()
        channel.close()
        emit("DONE")
    }
}
