import Foundation
import TestSupport

/// What one run of `auth_sample` did.
struct CLIResult: Sendable, CustomStringConvertible {
    let arguments: [String]
    /// The exit status, or the signal number when `signalled`.
    let status: Int32
    let signalled: Bool
    let timedOut: Bool
    let stdout: String
    let stderr: String
    /// The exact bytes the tool wrote on each stream.
    let stdoutBytes: [UInt8]
    let stderrBytes: [UInt8]

    /// Exit status and both streams, for failure messages (never contains more than the tool
    /// printed). Control characters other than line feeds are shown as `\u{..}`, so output a
    /// test finds unsafe does not act on the terminal of whoever reads the test log.
    var description: String {
        Self.visible(
            "auth_sample \(arguments.joined(separator: " "))\n  "
                + (timedOut ? "TIMED OUT, " : "") + (signalled ? "signal \(status)" : "exit \(status)")
                + "\n--- stdout\n\(stdout)--- stderr\n\(stderr)---"
        )
    }

    private static func visible(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A, 0x20..<0x7F, 0xA0..<0x2028, 0x2030..<0x2066, 0x206A...: result.unicodeScalars.append(scalar)
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }

    /// stdout parsed as exactly one JSON object, or `nil`.
    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
}

/// Runs the real `auth_sample` executable built next to the test bundle.
enum CLIRunner {
    /// The built executable.
    static let executable = PackageRoot.builtProduct("auth_sample")

    /// Runs `auth_sample arguments` with exactly `environment`, its stdout and stderr captured
    /// separately (through files, so neither stream can fill a pipe and stall the child). A run
    /// still going after `timeout` is terminated (then killed) and reported as `timedOut`. With
    /// `hosts`, the tool runs in a private mount namespace with that text as its /etc/hosts
    /// (production-shaped names for peers on loopback; needs root).
    static func run(
        _ arguments: [String],
        environment: [String: String],
        hosts: String? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> CLIResult {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw PeerError("auth_sample is not built at \(executable.path)")
        }
        // The hosts file outlives the run: it is removed after the child is waited for.
        let hostsFile = FileManager.default.temporaryDirectory.appendingPathComponent("auth-sample-hosts-\(UUID())")
        defer { try? FileManager.default.removeItem(at: hostsFile) }
        let program: URL
        let programArguments: [String]
        if let hosts {
            try hosts.write(to: hostsFile, atomically: true, encoding: .utf8)
            program = URL(fileURLWithPath: "/usr/bin/unshare")
            programArguments =
                ["-m", "sh", "-c", #"mount --bind "$1" /etc/hosts && shift && exec "$@""#, "sh", hostsFile.path]
                + [executable.path] + arguments
        } else {
            program = executable
            programArguments = arguments
        }
        let capture = try await ChildProcess.capture(
            program,
            programArguments,
            environment: environment,
            timeout: timeout
        )
        return CLIResult(
            arguments: arguments,
            status: capture.exit?.code ?? -1,
            signalled: capture.exit?.signalled ?? false,
            timedOut: capture.timedOut,
            stdout: String(validating: capture.stdout, as: UTF8.self) ?? "<stdout not UTF-8>",
            stderr: String(validating: capture.stderr, as: UTF8.self) ?? "<stderr not UTF-8>",
            stdoutBytes: capture.stdout,
            stderrBytes: capture.stderr
        )
    }

    /// The test process's environment minus everything that would change the tool's behaviour
    /// (Google's Application Default Credentials, proxies, OpenSSL's trust locations), with the
    /// session directory set to `configHome`.
    static func environment(configHome: URL) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = configHome.path
        for name in [
            "AUTH_SAMPLE_ACCESS_TOKEN", "AUTH_SAMPLE_CLIENT_SECRET", "DISPLAY", "WAYLAND_DISPLAY",
            "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "GCE_METADATA_HOST", "GOOGLE_CLOUD_QUOTA_PROJECT",
            "SSL_CERT_FILE", "SSL_CERT_DIR", "grpc_proxy", "GRPC_PROXY", "https_proxy", "HTTPS_PROXY", "http_proxy",
            "HTTP_PROXY", "no_grpc_proxy", "NO_GRPC_PROXY", "no_proxy", "NO_PROXY",
        ] {
            environment.removeValue(forKey: name)
        }
        return environment
    }
}
