import AuthRPCXDS
import Foundation

// BenchClient MODE --impl IMPL --transport h2c|tls --port PORT --ca CA.pem [--name value ...]
// (see Options.usage). Prints one JSON object on stdout. The driver (bench.py) also measures
// this process's CPU time and peak RSS from the outside, and preloads libMallocCounter.so when
// it wants allocation counts.

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { Options.fail("no mode") }
let mode = arguments[1]
let options = Options(arguments.dropFirst(2))
let implementation = options.string("impl")
let transport = options.string("transport")
guard ["h2c", "tls"].contains(transport) else { Options.fail("--transport must be h2c or tls") }
var setup = BenchSetup(
    tls: transport == "tls",
    port: options.int("port"),
    caPath: options.string("ca"),
    requestBytes: options.int("request-bytes", default: 100),
    responseBytes: options.int("response-bytes", default: 100)
)
if let ports = options.optionalString("ports") {
    let list = ports.split(separator: ",").compactMap { Int($0) }
    guard !list.isEmpty, list.count == ports.split(separator: ",").count else {
        Options.fail("--ports must be a comma-separated list of ports")
    }
    setup.ports = list
}
setup.loadBalancing = options.string("lb", default: "pick_first")
guard ["pick_first", "round_robin"].contains(setup.loadBalancing) else {
    Options.fail("--lb must be pick_first or round_robin")
}
if let target = options.optionalString("target") {
    guard !setup.tls, setup.ports.isEmpty else { Options.fail("--target takes neither --transport tls nor --ports") }
    if target.hasPrefix("xds:") {
        // The bootstrap comes from GRPC_XDS_BOOTSTRAP(_CONFIG), read when the channel is made.
        XDSScheme.register()
    }
    setup.target = target
}
let calls = options.int("calls")
let warmup = options.int("warmup", default: 200)

// The expiry mode's session: its token endpoint, and when the token was made.
let tokenEndpoint = DelayedTokenEndpoint(delay: .milliseconds(options.int("token-delay-ms", default: 500)))
let usableFor = Duration.milliseconds(options.int("usable-for-ms", default: 2500))
let sessionMadeAt = ContinuousClock.now

let caller: any UnaryCaller
switch implementation {
case "authrpc-expiring":
    let session = ExpiryRun.makeSession(
        usableFor: usableFor,
        staleWindow: .milliseconds(options.int("stale-window-ms")),
        endpoint: tokenEndpoint
    )
    caller = try AuthRPCCaller(setup, session: session)
case "authrpc", "baseline": caller = try AuthRPCCaller(setup, useSession: false)
case "authrpc-session": caller = try AuthRPCCaller(setup, useSession: true)
case "authrpc-io": caller = try AuthRPCCaller(setup, useSession: false, onChannelExecutor: true)
case "authrpc-retry": caller = try AuthRPCCaller(setup, useSession: false, retryPolicy: BenchSetup.retryPolicy)
case "grpc-swift": caller = try GRPCSwiftCaller(setup)
case "noop": caller = NoCaller()
default: Options.fail("unknown implementation \(implementation)")
}

/// Runs the mode. Nonisolated, so it runs on the caller's preferred executor rather than the main actor.
nonisolated func measure(_ caller: any UnaryCaller) async throws -> [String: Any] {
    switch mode {
    case "load":
        let concurrency = options.int("concurrency")
        return try await LoadRun.run(caller, calls: calls, concurrency: concurrency, warmup: warmup)
            .json(implementation: implementation, transport: transport, concurrency: concurrency)
    case "inflight":
        return try await InFlightRun.run(caller, calls: calls, warmup: warmup, baseline: implementation == "baseline")
    case "expiry":
        return try await ExpiryRun.run(
            caller,
            endpoint: tokenEndpoint,
            madeAt: sessionMadeAt,
            usableFor: usableFor,
            rate: options.int("rate", default: 500),
            seconds: options.int("seconds", default: 4),
            warmup: warmup
        )
    case "sequential":
        return try await SequentialRun.run(
            caller,
            calls: calls,
            sampleEvery: options.int("sample-every", default: 10_000),
            warmup: warmup
        )
    default:
        Options.fail("unknown mode \(mode)")
    }
}

do {
    // Every task of the run (warm-up, workers, parked calls) prefers the caller's executor.
    var result = try await withTaskExecutorPreference(caller.preferredExecutor) { try await measure(caller) }
    await caller.shutdown()
    result["impl"] = implementation
    result["transport"] = transport
    result["malloc_counter"] = MallocCounts.isAvailable
    let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("BenchClient \(mode) \(implementation): \(error)\n".utf8))
    exit(1)
}
