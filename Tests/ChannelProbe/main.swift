// A client for the channel tests that must run where the test runner cannot: in a mount
// namespace whose /etc/hosts names the test's backends (NameResolutionTests starts it under
// `unshare -m`). It keeps one channel and makes the calls it is told to on standard input:
//
//   ChannelProbe --target dns:///backend.default.svc.cluster.local:PORT --policy pick_first|round_robin
//                [--resolution-interval-ms N]
//
//   calls PREFIX COUNT CONCURRENCY   COUNT calls of grpc.testing.TestService/UnaryCall, each with
//                                    x-call-id PREFIX-i; answers
//                                    `DONE PREFIX ok=N failed=M servers=NAME:N,... codes=CODE:N,...`
//   state                            answers `STATE <connectivity state>`
//   quit                             closes the channel and exits
//
// Standard output: `READY` once the channel exists, then one line per command.
import AuthRPC
import AuthSampleService
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// How one batch of calls went.
struct Tally: Sendable {
    var ok = 0
    var failed = 0
    var servers: [String: Int] = [:]
    var codes: [String: Int] = [:]

    var line: String {
        "ok=\(ok) failed=\(failed) servers=\(Self.list(servers)) codes=\(Self.list(codes))"
    }

    private static func list(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }
}

func runCalls(_ channel: Channel, prefix: String, count: Int, concurrency: Int) async -> Tally {
    let client = Grpc_Testing_TestServiceClient(channel: channel)
    return await withTaskGroup(of: Result<String, RPCError>.self) { group in
        var next = 0
        func start() {
            let id = "\(prefix)-\(next)"
            next += 1
            group.addTask {
                var options = CallOptions(timeout: .seconds(20))
                options.initialMetadata.addString(id, forKey: "x-call-id")
                do throws(RPCError) {
                    return .success(
                        try await client.unaryCall(Grpc_Testing_SimpleRequest(), options: options).message.username
                    )
                } catch {
                    return .failure(error)
                }
            }
        }
        for _ in 0..<min(concurrency, count) { start() }
        var tally = Tally()
        while let result = await group.next() {
            switch result {
            case .success(let server):
                tally.ok += 1
                tally.servers[server, default: 0] += 1
            case .failure(let error):
                tally.failed += 1
                tally.codes["\(error.code)", default: 0] += 1
                FileHandle.standardError.write(Data("ChannelProbe: \(error)\n".utf8))
            }
            if next < count { start() }
        }
        return tally
    }
}

@main
enum ChannelProbe {
    static func main() async {
        let arguments = CommandLine.arguments
        let channel: Channel
        do {
            guard let target = option("--target", in: arguments) else {
                throw UsageError(description: "--target is required")
            }
            let policy: LoadBalancingPolicy
            switch option("--policy", in: arguments) ?? "pick_first" {
            case "pick_first": policy = .pickFirst
            case "round_robin": policy = .roundRobin
            case let other: throw UsageError(description: "unknown --policy \(other)")
            }
            var backoff = ConnectionBackoff.default
            backoff.initial = .milliseconds(100)
            backoff.maximum = .seconds(1)
            channel = try Channel(
                target: target,
                transportSecurity: .plaintext,
                connectionBackoff: backoff,
                loadBalancing: policy
            )
            if let text = option("--resolution-interval-ms", in: arguments) {
                guard let millis = Int(text), millis > 0 else {
                    throw UsageError(description: "bad --resolution-interval-ms")
                }
                channel.setResolutionInterval(.milliseconds(millis))
            }
        } catch {
            FileHandle.standardError.write(Data("ChannelProbe: \(error)\n".utf8))
            exit(64)
        }
        emit("READY")
        while let line = readLine() {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "calls" where words.count == 4:
                guard let count = Int(words[2]), let concurrency = Int(words[3]), count > 0, concurrency > 0 else {
                    emit("ERROR bad calls command")
                    continue
                }
                let tally = await runCalls(channel, prefix: words[1], count: count, concurrency: concurrency)
                emit("DONE \(words[1]) \(tally.line)")
            case "state":
                emit("STATE \(channel.connectivityState)")
            case "quit":
                channel.close()
                return
            default:
                emit("ERROR unknown command")
            }
        }
        channel.close()
    }
}
