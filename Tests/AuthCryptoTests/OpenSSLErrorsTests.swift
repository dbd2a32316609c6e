import Testing

@testable import AuthCrypto

/// How OpenSSL's error queue reads in a message: each entry once, in order, at most four.
@Suite("OpenSSL's error queue as a message")
struct OpenSSLErrorsTests {
    static func entry(_ reason: String) -> String { "error:0688010A:asn1 encoding routines::\(reason)" }

    @Test("entries are joined in order, each once")
    func repeatsOnce() {
        let queue = ["header too long", "nested asn1 error", "nested asn1 error", "nested asn1 error"].map(Self.entry)
        #expect(OpenSSLErrors.summary(queue) == [queue[0], queue[1]].joined(separator: "; "))
        #expect(OpenSSLErrors.summary([]) == "")
    }

    @Test("past four distinct entries, the first three and the last, and how many were left out")
    func longQueue() {
        let four = ["a", "b", "c", "d"].map(Self.entry)
        #expect(OpenSSLErrors.summary(four) == four.joined(separator: "; "))
        // A full queue, 16 entries, as a peer's malformed input can leave it.
        let full = (0..<16).map { Self.entry("reason \($0 % 8)") }
        #expect(
            OpenSSLErrors.summary(full)
                == [full[0], full[1], full[2], "(4 more)", full[7]].joined(separator: "; ")
        )
    }
}
