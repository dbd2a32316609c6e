import Foundation

/// Opens URLs in the user's browser with the platform's opener.
enum Browser {
    /// `true` when the opener started; the caller prints the URL otherwise.
    static func open(_ url: URL) -> Bool {
        #if os(macOS)
        let opener = "/usr/bin/open"
        #else
        let opener = ["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        #endif
        guard let opener else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        return true
    }
}
