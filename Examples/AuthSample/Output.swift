import AuthRPC
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
}

/// Everything the tool prints: text for people, or one JSON object with --json.
enum Output {
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
            if let expiry = result.tokenExpiresAt { object["token_expires_at"] = ISO8601DateFormatter().string(from: expiry) }
            printJSON(object)
            return
        }
        print("Used scope: \(result.scope.isEmpty ? "(none)" : result.scope) on behalf of user \(result.username.isEmpty ? "(none)" : result.username)")
        var token = "Credentials: \(result.credentialSource)"
        if result.refreshed { token += "; the access token had expired and was refreshed during this call" }
        if let expiry = result.tokenExpiresAt { token += "; token valid until \(ISO8601DateFormatter().string(from: expiry))" }
        print(token)
        printMetadata("Response headers", result.headers)
        printMetadata("Response trailers", result.trailers)
    }

    /// A failure on stderr (text) or stdout (JSON).
    static func report(_ failure: ToolFailure, json: Bool) {
        if json {
            var object: [String: Any] = ["ok": false, "error": failure.message, "exit_code": Int(failure.status.rawValue), "class": failure.status.summary]
            if let hint = failure.hint { object["hint"] = hint }
            if !failure.details.isEmpty { object["details"] = failure.details }
            printJSON(object)
            return
        }
        var text = "auth_sample: error: \(failure.message)\n"
        for line in failure.details { text += "\(line)\n" }
        if let hint = failure.hint { text += "What to do: \(hint)\n" }
        FileHandle.standardError.write(Data(text.utf8))
    }

    private static func printMetadata(_ title: String, _ metadata: Metadata) {
        print("\(title):")
        if metadata.isEmpty { print("  (none)") }
        for (key, value) in metadata {
            print("  \(key): \(value)")
        }
    }

    private static func pairs(_ metadata: Metadata) -> [[String]] {
        metadata.map { [$0.key, $0.value.description] }
    }

    static func printJSON(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        print(String(decoding: data, as: UTF8.self))
    }
}
