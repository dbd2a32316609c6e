import Foundation

/// Files named on the command line, read with a size limit: a mistake such as `/dev/zero` or a
/// huge file fails with a message instead of filling memory.
enum LocalFile {
    /// The most an access token file may hold.
    static let tokenLimit = 64 * 1024
    /// The most a CA certificate file may hold (a whole system bundle is a few hundred KiB).
    static let certificateLimit = 4 * 1024 * 1024

    /// The UTF-8 text of `path`, named on the command line by `option` for `what` it holds.
    static func text(at path: String, option: String, limit: Int, what: String) throws(ToolFailure) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ToolFailure(
                status: .usage,
                message: "cannot read \(option) \(path): it does not exist or is not readable"
            )
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw ToolFailure(status: .usage, message: "cannot read \(option) \(path): it is not a readable file")
        }
        guard data.count <= limit else {
            throw ToolFailure(
                status: .usage,
                message: "\(option) \(path) holds more than \(limit / 1024) KiB, too much for \(what)"
            )
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ToolFailure(status: .usage, message: "\(option) \(path) is not UTF-8 text")
        }
        return text
    }
}
