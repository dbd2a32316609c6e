import AuthRPCSystem
import Foundation
import Testing

@testable import GoogleAuth

/// The private key is taken out of a key file's bytes before the JSON parser sees them.
@Suite("JSONSecretField: the private key never becomes a Swift string")
struct JSONSecretFieldTests {
    func document(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }
    func text(_ bytes: SecretBytes) -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    @Test(
        "the value is decoded (JSON escapes as json.dump writes them) and blanked in place; the rest parses as before"
    )
    func takesAndBlanks() throws {
        let json =
            #"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMII\/+A==\n\u002d-\"\\\n", "n": [1, {"private_key": "nested"}], "b": true}"#
        let bytes = document(json)
        let taken = try #require(JSONSecretField.take("private_key", from: bytes))
        #expect(text(taken) == "-----BEGIN PRIVATE KEY-----\nMII/+A==\n--\"\\\n")
        let rest = text(bytes)
        #expect(!rest.contains("BEGIN"))
        #expect(rest.count == json.count, "blanked in place, not shortened")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(rest.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "service_account")
        #expect((object["private_key"] as? String)?.allSatisfy { $0 == " " } == true)
        // Only the top-level member: the nested one is left alone.
        #expect(rest.contains(#""private_key": "nested""#))
    }

    @Test("duplicates are all blanked and the last is taken; anything not a well-formed object takes nothing")
    func duplicatesAndMalformed() throws {
        let duplicated = document(#"{"private_key": "first", "private_key": "second"}"#)
        #expect(text(try #require(JSONSecretField.take("private_key", from: duplicated))) == "second")
        #expect(!text(duplicated).contains("first"))

        for malformed in [
            #"{"private_key": "unterminated}"#, #"["private_key", "x"]"#, #"{"private_key": "x"} trailing"#,
            #"{"private_key": "bad \q escape"}"#, #"{"private_key": "\u00e9"}"#, "", #"{"a": [1, 2}"#,
            #"{"private_key": 42}"#,
        ] {
            let bytes = document(malformed)
            #expect(JSONSecretField.take("private_key", from: bytes) == nil, "\(malformed)")
            #expect(text(bytes) == malformed, "left alone: \(malformed)")
        }
        #expect(JSONSecretField.take("private_key", from: document("{}")) == nil)
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(JSONSecretField.take("private_key", from: document(#"{"a": \#(deep)}"#)) == nil)
    }

    @Test("a key read this way signs: the parsed file holds blanks where the key was")
    func parsedFileHoldsNoKey() async throws {
        let google = try await GoogleSandbox.shared()
        let file = try CredentialFile(contentsOfFile: google.serviceAccountKeyPath)
        #expect(file.privateKeyPEM.map(text)?.hasPrefix("-----BEGIN PRIVATE KEY-----\n") == true)
        #expect(try file.optionalString("private_key")?.allSatisfy { $0 == " " } == true)
        #expect(
            try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath).clientEmail
                == google.serviceAccountEmail
        )
    }
}
