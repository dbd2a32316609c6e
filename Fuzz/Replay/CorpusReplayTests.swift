import Foundation
import Testing

/// Replays what the fuzzers keep: the committed seed corpora (`Fuzz/Corpus/<target>`) and every
/// input a fuzzer once found crashing, hanging, exhausting memory or breaking a rule
/// (`Fuzz/Regressions/<target>`), through the same entry points `make fuzz` drives, without a
/// fuzzer build. A trap ends the test process; a broken rule fails the test naming the file.
@Suite("Fuzz corpora and past findings replay cleanly")
struct CorpusReplayTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    static func files(in folder: String, of target: String) -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test(
        "every seed and past finding of a target is handled without a trap or a broken rule",
        arguments: FuzzTarget.all.map(\.name)
    )
    func replay(target name: String) async throws {
        let target = try #require(FuzzTarget.named(name))
        let seeds = Self.files(in: "Corpus", of: name)
        #expect(!seeds.isEmpty, "\(name) has no seed corpus in Fuzz/Corpus/\(name)")
        let inputs = try (seeds + Self.files(in: "Regressions", of: name)).map { file in
            (name: file.lastPathComponent, bytes: [UInt8](try Data(contentsOf: file)))
        }
        // Off the cooperative pool: the h2-client target blocks its thread while its connection runs there.
        let failures = await withCheckedContinuation { continuation in
            Thread {
                var failures: [String] = []
                for input in inputs {
                    if input.bytes.count > target.maxLength {
                        failures.append(
                            "\(input.name): \(input.bytes.count) bytes, over the target's -max_len \(target.maxLength)"
                        )
                    }
                    do throws(OracleViolation) {
                        try target.run(input.bytes)
                    } catch {
                        failures.append("\(input.name): \(error)")
                    }
                }
                // The files a target wrote to read its inputs from disk go with the run.
                try? FileManager.default.removeItem(at: scratchDirectory(name))
                continuation.resume(returning: failures)
            }.start()
        }
        for failure in failures {
            Issue.record("\(name)/\(failure)")
        }
    }

    @Test("every dictionary is a target's and parses as libFuzzer reads it")
    func dictionariesParse() throws {
        let directory = Self.fuzzDirectory.appendingPathComponent("Dictionaries")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
            .sorted()
        #expect(!names.isEmpty)
        for name in names {
            #expect(
                name.hasSuffix(".dict") && FuzzTarget.named(String(name.dropLast(".dict".count))) != nil,
                "Fuzz/Dictionaries/\(name) is not a fuzz target's dictionary"
            )
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                .enumerated()
            {
                #expect(
                    Self.isDictionaryLine(line),
                    "Fuzz/Dictionaries/\(name):\(number + 1) is not an entry libFuzzer reads"
                )
            }
        }
    }

    /// libFuzzer's `ParseDictionaryFile`: a blank line, a `#` comment, or `[name=]"bytes"` whose bytes
    /// are printable ASCII or spaces with only the escapes `\\`, `\"` and `\xHH`. Any other line
    /// makes libFuzzer refuse the file and stop before running a single input.
    static func isDictionaryLine(_ line: ArraySlice<UInt8>) -> Bool {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        func isHex(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
        let trimmed = line.drop(while: isSpace)
        guard let first = trimmed.first, first != UInt8(ascii: "#") else { return true }
        let entry = Array(trimmed.reversed().drop(while: isSpace).reversed())
        guard entry.count >= 3, entry.last == UInt8(ascii: "\""),
            let open = entry.dropLast().firstIndex(of: UInt8(ascii: "\""))
        else { return false }
        var value = entry.dropLast()[(open + 1)...]
        guard !value.isEmpty else { return false }
        while let byte = value.popFirst() {
            guard (0x20...0x7E).contains(byte) || isSpace(byte) else { return false }
            guard byte == UInt8(ascii: "\\") else { continue }
            switch value.first {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""):
                value.removeFirst()
            case UInt8(ascii: "x")
            where value.count >= 3 && isHex(value[value.startIndex + 1]) && isHex(value[value.startIndex + 2]):
                value.removeFirst(3)
            default:
                return false
            }
        }
        return true
    }

    @Test("every corpus and regression folder belongs to a target")
    func noOrphanFolders() {
        let names = Set(FuzzTarget.all.map(\.name))
        for folder in ["Corpus", "Regressions"] {
            let directory = Self.fuzzDirectory.appendingPathComponent(folder)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            where !entry.hasPrefix(".") {
                #expect(names.contains(entry), "Fuzz/\(folder)/\(entry) is not a fuzz target's folder")
            }
        }
    }
}
