import Foundation

/// Finds the `protoc` to run: the config's `protocPath`, else `PROTOC_PATH`, else `protoc` on
/// `PATH`. protoc is never built from source (that takes about ten minutes).
enum ProtocLocator {
    static func locate(
        configured: String?,
        base: URL,
        configPath: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(GeneratorConfigError) -> URL {
        if let configured {
            let url =
                configured.contains("/") ? URL(fileURLWithPath: configured, relativeTo: base).standardizedFileURL : nil
            if let url, isExecutable(url) { return url }
            if url == nil, let found = search(configured, path: environment["PATH"]) { return found }
            throw GeneratorConfigError(
                path: configPath,
                problem: "names \"protocPath\": \"\(configured)\", which is not an executable file",
                fix: "point it at protoc (e.g. /usr/bin/protoc), or remove the key to use protoc on PATH"
            )
        }
        if let path = environment["PROTOC_PATH"], !path.isEmpty {
            let url = URL(fileURLWithPath: path)
            guard isExecutable(url) else {
                throw GeneratorConfigError(
                    path: configPath,
                    problem: "is used with PROTOC_PATH=\(path), which is not an executable file",
                    fix: "point PROTOC_PATH at protoc, or unset it to use protoc on PATH"
                )
            }
            return url
        }
        if let found = search("protoc", path: environment["PATH"]) { return found }
        throw GeneratorConfigError(
            path: configPath,
            problem: "needs protoc, and there is no protoc on PATH (\(environment["PATH"] ?? "unset"))",
            fix:
                "install it (Debian/Ubuntu: apt-get install protobuf-compiler; macOS: brew install protobuf) or set \"protocPath\""
        )
    }

    private static func search(_ name: String, path: String?) -> URL? {
        for directory in (path ?? "").split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if isExecutable(candidate) { return candidate }
        }
        return nil
    }

    private static func isExecutable(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: url.path)
    }
}
