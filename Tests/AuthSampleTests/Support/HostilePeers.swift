import Foundation
import TestSupport
import Testing

/// Peers that send text a terminal would act on, each started once per test process: the fault
/// server (its `HostileText` scenario) and a sandbox whose issuer runs with `--hostile-text`.
actor HostilePeers {
    private static let shared = HostilePeers()
    private var faults: Task<PeerProcess, any Error>?
    private var sandbox: Task<SandboxInfo, any Error>?

    /// The fault server's plaintext (h2c) port.
    static func faultServerPort() async throws -> Int {
        let process = try await shared.startFaults()
        guard let port = (process.info["ports"] as? [String: any Sendable])?["h2c"] as? Int else {
            throw PeerError("the fault server named no h2c port")
        }
        return port
    }

    /// A sandbox whose user codes, verification URIs, OAuth error descriptions and ID-token
    /// emails carry escape sequences and a forged line.
    static func hostileSandbox() async throws -> SandboxInfo { try await shared.startSandbox() }

    private func startFaults() async throws -> PeerProcess {
        if let faults { return try await faults.value }
        let task = Task.detached {
            try await PeerProcess.launch(script: "Tests/Peers/h2_fault_server.py", name: "faults-cli")
        }
        faults = task
        return try await task.value
    }

    private func startSandbox() async throws -> SandboxInfo {
        if let sandbox { return try await sandbox.value }
        let task = Task.detached {
            try await Peers.launchSandbox(
                ["--hostile-text", "--auto-approve-device-after", "1"],
                name: "sandbox-hostile"
            )
        }
        sandbox = task
        return try await task.value
    }
}

/// What the hostile peers' text looks like once the tool has made it printable.
enum HostileText {
    /// The forged line the peers try to slip in.
    static let forgedLine = "auth_sample: error: FORGED LINE"
    /// The fault server's field text (C1 controls, bidi controls, separators, a tab), as shown.
    static let shownFieldText =
        #"c1\u{9B}31m\u{85} bidi\u{202E}gnp.exe\u{202C}\u{2066}iso\u{2069} sep\u{2028}\u{2029} tab\tend"#
    /// The fault server's full text (escape sequences, BEL, backspaces, DEL, the field text, CR LF,
    /// NUL and the forged line twice), as shown.
    static let shownText =
        #"esc\x1b[2J\x1b[31mred\x1b]0;title\x07 link\x1b]8;;http://evil.example/\x1b\here\x1b]8;;\x1b\ bs\x08\x08 del\x7f "#
        + shownFieldText + #"\r\n"# + forgedLine + #"\n\x00"# + forgedLine
    /// The sandbox's text, as shown.
    static let shownIssuerText =
        #"\x1b[2J\x1b[31m\x1b]0;title\x07\u{9B}31m\u{202E}evil\u{202C}\u{2066}\u{2069}\u{2028}\x7f\x08\tend\r\n"#
        + forgedLine + #"\n\x00"#

    /// Expects `bytes` to be text a terminal shows as it is: UTF-8 whose only control character
    /// is the line feed ending each line, with no C1 control, bidirectional control, or line or
    /// paragraph separator; and no line the peer forged.
    static func expectPrintable(
        _ bytes: [UInt8],
        _ stream: String,
        of result: CLIResult,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            bytes.firstIndex(of: 0x1B) == nil,
            "\(stream) has an ESC byte:\n\(result)",
            sourceLocation: sourceLocation
        )
        guard let text = String(validating: bytes, as: UTF8.self) else {
            Issue.record("\(stream) is not UTF-8:\n\(result)", sourceLocation: sourceLocation)
            return
        }
        // Named as U+XXXX, so that a failure report does not act on the terminal either.
        let unsafe = text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0x00..<0x20, 0x7F, 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E,
                0x2066...0x2069:
                true
            default: false
            }
        }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
        #expect(unsafe.isEmpty, "\(stream) has unsafe characters:\n\(result)", sourceLocation: sourceLocation)
        let forged = text.split(separator: "\n").filter { $0.hasPrefix(forgedLine) }
        #expect(forged.isEmpty, "\(stream) has a forged line:\n\(result)", sourceLocation: sourceLocation)
    }

    /// `expectPrintable` for both streams.
    static func expectPrintable(_ result: CLIResult, sourceLocation: SourceLocation = #_sourceLocation) {
        expectPrintable(result.stdoutBytes, "stdout", of: result, sourceLocation: sourceLocation)
        expectPrintable(result.stderrBytes, "stderr", of: result, sourceLocation: sourceLocation)
    }
}
