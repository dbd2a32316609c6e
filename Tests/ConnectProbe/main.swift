import AuthRPCSystem
import AuthRPCTransport
import COpenSSL
// connect-probe: connects with AuthRPCTransport and makes one request, for tests that must run the
// client where the test runner cannot go (inside a network namespace, under a private hosts
// file). Prints one JSON object: {"ok": true, "elapsed_ms": N, "body": "..."} or
// {"ok": false, "elapsed_ms": N, "error": "...", "kind": "..."}; exits 0 or 1.
//
//   ConnectProbe (--host NAME | --address IP ...) --port PORT [--connect-timeout-ms N] [--scenario Echo]
//   ConnectProbe --openssl-at-exit
import Foundation

/// `--openssl-at-exit`: makes a TLS context (the transport's first use of OpenSSL) and exits;
/// an exit handler then prints whether OpenSSL still works: {"openssl_at_exit": "usable"}, or
/// "cleaned up" when OpenSSL's own clean-up at exit ran before it. (Handlers run in the reverse
/// order of their registration, and this one is registered before OpenSSL's could be.)
func checkOpenSSLAtExit() -> Never {
    atexit {
        // After OPENSSL_cleanup this answers 0 at once, touching nothing it freed.
        let usable = OPENSSL_init_crypto(0, nil) == 1
        let line = Array("{\"openssl_at_exit\": \"\(usable ? "usable" : "cleaned up")\"}\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
    do {
        _ = try TLSContext(TLSClientConfiguration())
    } catch {
        FileHandle.standardError.write(Data("the TLS context failed: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

var host: String?
var addresses: [String] = []
var port = 0
var timeout = 2000
var scenario = "Echo"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--host": host = arguments.next()
    case "--address": arguments.next().map { addresses.append($0) }
    case "--port": port = Int(arguments.next() ?? "") ?? 0
    case "--connect-timeout-ms": timeout = Int(arguments.next() ?? "") ?? timeout
    case "--scenario": scenario = arguments.next() ?? scenario
    case "--openssl-at-exit": checkOpenSSLAtExit()
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

func report(_ object: [String: Any]) -> Never {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
    exit(object["ok"] as? Bool == true ? 0 : 1)
}

var configuration = HTTP2ConnectionConfiguration()
configuration.connectTimeout = .milliseconds(timeout)
let started = ContinuousClock.now
func elapsed() -> Int {
    let (seconds, attoseconds) = (ContinuousClock.now - started).components
    return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
}
do {
    let route: ConnectionRoute
    if let host {
        route = .resolving(HostAndPort(host: host, port: port))
    } else {
        route = .addresses(try addresses.map { try SocketAddress(ipAddress: $0, port: port) })
    }
    let connection = try await HTTP2Connection.connect(
        via: route,
        serverName: host ?? "probe",
        configuration: configuration
    )
    let connectedAfter = elapsed()
    let message = Array("probe".utf8)
    let response = try await connection.send(
        HTTP2Request(
            scheme: "http",
            authority: "probe",
            path: "/fault.Fault/\(scenario)",
            headers: [
                HTTP2HeaderField(name: "content-type", value: "application/grpc"),
                HTTP2HeaderField(name: "te", value: "trailers"),
            ],
            body: [0, 0, 0, 0, UInt8(message.count)] + message,
            deadline: ContinuousTime.now.advanced(by: 10_000_000_000),
            maxResponseBodyBytes: 1 << 20
        )
    )
    connection.close()
    report([
        "ok": true, "connected_ms": connectedAfter, "elapsed_ms": elapsed(),
        "body": String(decoding: response.body.dropFirst(5), as: UTF8.self),
    ])
} catch let error as TransportFailure {
    var kind = "other"
    if case .connectFailed(_, _, let failure) = error { kind = "\(failure)" }
    report(["ok": false, "elapsed_ms": elapsed(), "error": error.description, "kind": kind])
}
