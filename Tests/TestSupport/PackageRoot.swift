public import Foundation

/// Where the package and its Python environment live, found from this file's path.
public enum PackageRoot {
    /// The package root (the directory holding Package.swift).
    public static let url: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// The Python that runs the peers: `$AUTHRPC_PYTHON`, else the Makefile's `.venv`.
    public static var python: URL {
        if let path = ProcessInfo.processInfo.environment["AUTHRPC_PYTHON"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return url.appendingPathComponent(".venv/bin/python")
    }

    /// A built product of this package (e.g. `auth_sample`), from the same build as the tests.
    public static func builtProduct(_ name: String) -> URL {
        // The test bundle lives in the build's products directory, next to the executables.
        let bundle = Bundle.main.bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()]
        for directory in candidates {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return url.appendingPathComponent(".build/debug/\(name)")
    }
}
