import Foundation
import TestSupport
import Testing

/// One default transport: every public initializer and function of OAuth2 and GoogleAuth that
/// takes an OAuth transport defaults to ``HTTP1OAuthTransport/standard`` (the system's roots with
/// `SSL_CERT_FILE`, metadata servers never proxied, plain http never through a proxy), so a
/// caller who leaves it out gets what the product uses.
@Suite("One default OAuth transport across the public API")
struct DefaultTransportTests {
    /// A public declaration with a `transport:` parameter: where it is and what it defaults to.
    struct Declaration: CustomStringConvertible {
        let place: String
        let defaultValue: String?
        var description: String { "\(place): \(defaultValue ?? "no default")" }
    }

    /// Every public `init` or `func` in `Sources/<module>` whose parameters include a transport.
    static func declarations(in modules: [String]) throws -> [Declaration] {
        let pattern = try NSRegularExpression(
            pattern:
                #"public\s+(?:(?:static|convenience|nonisolated)\s+)*(init\??|func\s+\w+)\s*(?:<[^>]*>)?\s*\(([^{]*?)\)\s*(?:async\s*)?(?:throws(?:\([^)]*\))?\s*)?(?:->[^{]*)?\{"#,
            options: [.dotMatchesLineSeparators]
        )
        let parameter = try NSRegularExpression(
            pattern: #"transport:\s*any\s+OAuthTransport(?:\s*=\s*([^,)\n]+))?"#
        )
        var found: [Declaration] = []
        for module in modules {
            let root = PackageRoot.url.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
            for case let file as URL in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                let range = NSRange(text.startIndex..., in: text)
                for match in pattern.matches(in: text, range: range) {
                    let parameters = String(text[Range(match.range(at: 2), in: text)!])
                    let name = String(text[Range(match.range(at: 1), in: text)!])
                    let inner = NSRange(parameters.startIndex..., in: parameters)
                    for use in parameter.matches(in: parameters, range: inner) {
                        let value = Range(use.range(at: 1), in: parameters).map {
                            parameters[$0].trimmingCharacters(in: .whitespaces)
                        }
                        let line = text[..<Range(match.range, in: text)!.lowerBound].split(
                            separator: "\n",
                            omittingEmptySubsequences: false
                        ).count
                        found.append(
                            Declaration(
                                place: "\(module)/\(file.lastPathComponent):\(line) \(name)",
                                defaultValue: value
                            )
                        )
                    }
                }
            }
        }
        return found
    }

    @Test(
        "every public initializer and function taking a transport defaults to HTTP1OAuthTransport.standard (before: the two external-account sources defaulted to URLSessionOAuthTransport())"
    )
    func everyDefaultIsTheProducts() throws {
        let declarations = try Self.declarations(in: ["OAuth2", "GoogleAuth"])
        // 21 when this test was written (LoopbackAuthorizationFlow's 22nd initializer is internal):
        // a count below means the enumeration broke.
        #expect(declarations.count >= 21, "\(declarations)")
        #expect(declarations.contains { $0.place.contains("ExternalAccountTokenSource.swift") })
        #expect(declarations.contains { $0.place.contains("ExternalAccountAuthorizedUserTokenSource.swift") })
        let others = declarations.filter { $0.defaultValue != "HTTP1OAuthTransport.standard" }
        #expect(others.isEmpty, "\(others)")
    }
}
