import Foundation
import Logging

/// The library's log on stderr, one printable line per event.
///
/// Log messages and metadata may quote a peer (a GOAWAY's debug data, an issuer's answer), so
/// each line goes out through ``Output`` like everything else the tool writes.
struct PrintableLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { $1 } }
        let shownFields = fields.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let time = Date().formatted(.iso8601)
        Output.logLine("\(time) \(event.level) \(label):\(shownFields) [\(event.source)] \(event.message)")
    }
}
