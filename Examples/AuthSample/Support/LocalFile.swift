import AuthRPCSystem
import Foundation

/// Files named on the command line, read as the library reads credential files
/// (``BoundedFile``): opened once, regular files only (symbolic links followed; a FIFO or a
/// device such as `/dev/zero` is refused at once instead of blocking or filling memory), with a
/// size limit.
enum LocalFile {
    /// The most an access token file may hold.
    static let tokenLimit = 64 * 1024
    /// The most a CA certificate file may hold (a whole system bundle is a few hundred KiB).
    static let certificateLimit = 4 * 1024 * 1024

    /// The UTF-8 text of `path`, named on the command line by `option` for `what` it holds.
    static func text(at path: String, option: String, limit: Int, what: String) throws(ToolFailure) -> String {
        let bytes: SecretBytes
        do {
            bytes = try BoundedFile.read(path, limit: limit)
        } catch {
            switch error.reason {
            case .tooLarge:
                throw ToolFailure(
                    status: .usage,
                    message: "\(option) \(path) holds more than \(limit / 1024) KiB, too much for \(what)"
                )
            case .notRegularFile:
                throw ToolFailure(
                    status: .usage,
                    message: "cannot read \(option) \(path): \(error)",
                    hint: option == "--token-file"
                        ? "to pass a token from another program, set $\(CallCommand.tokenEnvironmentVariable)" : nil
                )
            default:
                throw ToolFailure(status: .usage, message: "cannot read \(option) \(path): \(error)")
            }
        }
        guard let text = bytes.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw ToolFailure(status: .usage, message: "\(option) \(path) is not UTF-8 text")
        }
        return text
    }
}
