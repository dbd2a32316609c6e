import Foundation

/// `--name value` pairs from the command line, read by name; a missing or malformed value ends
/// the process with a usage message (exit code 2).
struct Options {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) {
        var remaining = arguments[...]
        while let name = remaining.popFirst() {
            guard name.hasPrefix("--"), let value = remaining.popFirst() else {
                Self.fail("expected --name value, got \(name)")
            }
            values[String(name.dropFirst(2))] = value
        }
    }

    func string(_ name: String, default fallback: String? = nil) -> String {
        guard let value = values[name] ?? fallback else { Self.fail("--\(name) is required") }
        return value
    }

    /// The value, or nil when the option is not given.
    func optionalString(_ name: String) -> String? {
        values[name]
    }

    func int(_ name: String, default fallback: Int? = nil) -> Int {
        guard let text = values[name] else {
            guard let fallback else { Self.fail("--\(name) is required") }
            return fallback
        }
        guard let value = Int(text), value >= 0 else {
            Self.fail("--\(name) must be a non-negative integer, got \(text)")
        }
        return value
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("BenchClient: \(message)\n\(usage)".utf8))
        exit(2)
    }

    static let usage = """
        usage: BenchClient MODE --impl IMPL --transport h2c|tls --port PORT --ca CA.pem [--name value ...]
          IMPL: authrpc (static token), authrpc-io (static token, tasks prefer the channel's
                executor: its connection's I/O thread), authrpc-session (AuthSession, cached token), grpc-swift, noop,
                authrpc-expiring (AuthSession whose token expires during the run: --stale-window-ms S
                [--usable-for-ms U] [--token-delay-ms D]; for the expiry mode)
          load        --calls N --concurrency C [--warmup W] [--request-bytes B] [--response-bytes B]
                      [--ports P1,P2,... --lb pick_first|round_robin | --target xds:///NAME]
                      N calls with C in flight on one connection (swift-authrpc with --ports: one
                      channel to those servers on 127.0.0.1, balanced by --lb; with --target: a
                      channel to that target, h2c, an xds:/// one bootstrapped from
                      GRPC_XDS_BOOTSTRAP(_CONFIG)); calls/s, latency, CPU and (when
                      libMallocCounter.so is preloaded) allocations per call over the timed calls
          inflight    --calls N   N calls parked by the server at once (x-bench-hold), against
                      IMPL baseline: N tasks waiting on a bare continuation; RSS and heap growth
          expiry      --calls 0 [--rate R] [--seconds T]   R calls a second for T seconds, each timed from
                      when it was due, across the token's expiry; p50, p99, max, calls over 100 ms
          sequential  --calls N --sample-every K   N calls one after another; RSS, heap and open
                      descriptors every K calls

        """
}
