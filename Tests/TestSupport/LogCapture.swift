import AuthRPCSystem
public import Logging

/// Collects every log line a `Logger` writes, so tests can assert on what was (and was not) logged.
public final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])

    public init() {}

    /// A logger at `.trace` whose output lands here.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every line so far: `LEVEL message key=value ...`.
    public var all: [String] { lines.withLock { $0 } }

    /// Lines whose message is exactly `message`.
    public func count(_ message: String) -> Int {
        lines.withLock {
            $0.filter { $0.split(separator: " ", maxSplits: 1).dropFirst().first?.hasPrefix(message) == true }.count
        }
    }

    fileprivate func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.append("\(event.level) \(event.message) \(fields)")
        }
    }
}
