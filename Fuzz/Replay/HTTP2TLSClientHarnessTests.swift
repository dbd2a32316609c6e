import Foundation
import Testing

/// The `h2-tls-client` harness is worth its runs only if the client's answer really arrives over
/// TLS: every `h2-client` seed must come to the same answer (OK and the message's size, or the
/// failure's code) over plaintext and over TLS, whatever the records' size, key updates and
/// close_notify.
@Suite("Fuzz harness: h2-tls-client")
struct HTTP2TLSClientHarnessTests {
    @Test(
        "each h2-client seed comes to the same answer over TLS as in plaintext, in records of 1 byte to 16 KiB, with key updates and close_notify"
    )
    func sameAnswerOverTLS() async throws {
        let seeds = try CorpusReplayTests.files(in: "Corpus", of: "h2-client").map { file in
            (name: file.lastPathComponent, bytes: [UInt8](try Data(contentsOf: file)))
        }
        #expect(seeds.count >= 20)
        // (record-size byte, flags): 1-byte records with every flag, 100 bytes with key updates
        // after every fourth, 16 KiB records with close_notify.
        let ways: [(UInt8, UInt8)] = [(0, 7), (99, 2), (255, 4)]
        // Off the cooperative pool: the harness blocks its thread while the connection runs there.
        let answers = await withCheckedContinuation { continuation in
            Thread {
                var answers: [String] = []
                for seed in seeds {
                    do throws(OracleViolation) {
                        let plain = try HTTP2ClientTarget.play(seed.bytes)
                        var line = "\(seed.name): \(plain)"
                        for (size, flags) in ways {
                            let overTLS = try HTTP2TLSClientTarget.play([size, flags] + seed.bytes) ?? "not run"
                            if overTLS != plain { line += "; over TLS (\(size), \(flags)): \(overTLS)" }
                        }
                        answers.append(line)
                    } catch {
                        answers.append("\(seed.name): \(error)")
                    }
                }
                continuation.resume(returning: answers)
            }.start()
        }
        for line in answers {
            #expect(!line.contains("over TLS") && !line.contains("no answer"), "\(line)")
        }
        // The seeds reach both ends of the client: a message taken, and failures.
        #expect(answers.contains { $0.contains(": OK, ") }, "\(answers)")
        #expect(answers.contains { !$0.contains(": OK") }, "\(answers)")
        print(answers.joined(separator: "\n"))
    }
}
