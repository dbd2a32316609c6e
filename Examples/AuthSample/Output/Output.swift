import AuthRPC
import AuthRPCXDS
import Foundation

/// The result of a successful call, as printed.
struct CallResult {
    var target: String
    var username: String
    var scope: String
    var credentialSource: String
    var refreshed: Bool
    var tokenExpiresAt: Date?
    var headers: Metadata
    var trailers: Metadata
    /// What each xDS client held after the call (`--xds-status`), nil without the flag.
    var xdsStatus: [XDSClientStatus]? = nil
}

/// Everything the tool prints: text for people, or one JSON object with --json.
///
/// These functions are the only way out to stdout and stderr. Text goes out line by line through
/// ``PrintableText``, so nothing a server or issuer sent (nor anything read from a file) can move
/// the cursor, recolour the terminal or forge a line; JSON is escaped the same way.
enum Output {
    /// The most metadata entries a text section lists (`--json` has them all).
    static let metadataLimit = 64

    /// One line on stdout, made printable and cut at `limit` characters.
    static func line(_ text: String, limit: Int = PrintableText.lineLimit) {
        print(PrintableText.escaping(text, limit: limit))
    }

    /// A line the user must copy whole (a URL to open): the same, with a longer limit.
    static func copyableLine(_ text: String) {
        line(text, limit: PrintableText.copyableLineLimit)
    }

    /// A warning on stderr that does not change the outcome.
    static func warning(_ text: String) {
        writeError(["auth_sample: warning: \(text)"])
    }

    /// One line of the library's log on stderr.
    static func logLine(_ text: String) {
        writeError([text])
    }

    static func printCall(_ result: CallResult, json: Bool) {
        if json {
            var object: [String: Any] = [
                "ok": true,
                "target": result.target,
                "username": result.username,
                "oauth_scope": result.scope,
                "credentials": result.credentialSource,
                "token_refreshed": result.refreshed,
                "headers": pairs(result.headers),
                "trailers": pairs(result.trailers),
            ]
            if let expiry = result.tokenExpiresAt {
                object["token_expires_at"] = ISO8601DateFormatter().string(from: expiry)
            }
            if let xds = result.xdsStatus { object["xds"] = xdsStatusJSON(xds) }
            printJSON(object)
            return
        }
        line(
            "Used scope: \(result.scope.isEmpty ? "(none)" : result.scope) on behalf of user \(result.username.isEmpty ? "(none)" : result.username)"
        )
        var token = "Credentials: \(result.credentialSource)"
        if result.refreshed { token += "; the access token had expired and was refreshed during this call" }
        if let expiry = result.tokenExpiresAt {
            token += "; token valid until \(ISO8601DateFormatter().string(from: expiry))"
        }
        line(token)
        printMetadata("Response headers", result.headers)
        printMetadata("Response trailers", result.trailers)
        for text in xdsStatusLines(result.xdsStatus ?? []) { line(text) }
    }

    /// A failure on stderr (text) or stdout (JSON).
    static func report(_ failure: ToolFailure, json: Bool) {
        if json {
            var object: [String: Any] = [
                "ok": false, "error": failure.message, "exit_code": Int(failure.status.rawValue),
                "class": failure.status.summary,
            ]
            if let code = failure.code { object["code"] = code.description }
            if let hint = failure.hint { object["hint"] = hint }
            if !failure.details.isEmpty { object["details"] = failure.details }
            printJSON(object)
            return
        }
        var lines = ["auth_sample: error: \(failure.message)"]
        if let code = failure.code { lines.append("gRPC status: \(code)") }
        lines += failure.details
        if let hint = failure.hint { lines.append("What to do: \(hint)") }
        writeError(lines)
    }

    /// One JSON object on stdout: valid JSON whose strings are exactly what was given, with every
    /// character a terminal would act on escaped.
    static func printJSON(_ object: [String: Any]) {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return }
        print(PrintableText.escapingJSON(String(decoding: data, as: UTF8.self)))
    }

    private static func printMetadata(_ title: String, _ metadata: Metadata) {
        line("\(title):")
        if metadata.isEmpty { line("  (none)") }
        for (key, value) in metadata.prefix(metadataLimit) {
            line("  \(key): \(value)")
        }
        if metadata.count > metadataLimit {
            line("  … and \(metadata.count - metadataLimit) more (--json lists them all)")
        }
    }

    private static func pairs(_ metadata: Metadata) -> [[String]] {
        metadata.map { [$0.key, $0.value.description] }
    }

    private static func writeError(_ lines: [String]) {
        fflush(nil)  // what was printed on stdout before comes first
        let text = lines.map { PrintableText.escaping($0) + "\n" }.joined()
        FileHandle.standardError.write(Data(text.utf8))
    }
}
