import Foundation

// Usage: BenchClient IMPL h2c|tls PORT CA.pem CALLS CONCURRENCY PAYLOAD
//   IMPL: authrpc (static token), authrpc-session (AuthSession with a cached token), grpc-swift
// Makes CALLS unary calls to grpc.testing.TestService/UnaryCall with CONCURRENCY in flight on one
// connection (after a warm-up), and prints one JSON line: calls/s and latency percentiles. The
// driver (bench.py) measures this process's CPU time and peak RSS from the outside.

let arguments = CommandLine.arguments
guard arguments.count == 8, let port = Int(arguments[3]), let calls = Int(arguments[5]),
      let concurrency = Int(arguments[6]), let payload = Int(arguments[7]), ["h2c", "tls"].contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: BenchClient authrpc|authrpc-session|grpc-swift h2c|tls PORT CA.pem CALLS CONCURRENCY PAYLOAD\n".utf8))
    exit(2)
}
let setup = BenchSetup(tls: arguments[2] == "tls", port: port, caPath: arguments[4], payload: payload)

let caller: any UnaryCaller
switch arguments[1] {
case "authrpc": caller = try AuthRPCCaller(setup, useSession: false)
case "authrpc-session": caller = try await AuthRPCCaller(setup, useSession: true)
case "grpc-swift": caller = try GRPCSwiftCaller(setup)
default:
    FileHandle.standardError.write(Data("unknown implementation \(arguments[1])\n".utf8))
    exit(2)
}

do {
    let result = try await LoadRun.run(caller, calls: calls, concurrency: concurrency)
    await caller.shutdown()
    print(result.json(implementation: arguments[1], transport: arguments[2], concurrency: concurrency))
} catch {
    FileHandle.standardError.write(Data("BenchClient \(arguments[1]): a call failed: \(error)\n".utf8))
    exit(1)
}
