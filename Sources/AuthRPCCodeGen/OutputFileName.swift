extension GeneratorOptions.FileNaming {
    /// The generated file's name for `protoFile` (`foo/bar/baz.proto`): `baz.authrpc.swift`
    /// under the path this naming asks for.
    package func outputFileName(for protoFile: String) -> String {
        var directory = ""
        var base = protoFile
        if let slash = protoFile.lastIndex(of: "/") {
            directory = String(protoFile[...slash])
            base = String(protoFile[protoFile.index(after: slash)...])
        }
        if base.hasSuffix(".proto") { base.removeLast(".proto".count) }
        let file = base + ".authrpc.swift"
        switch self {
        case .fullPath: return directory + file
        case .pathToUnderscores: return String(directory.map { $0 == "/" ? "_" : $0 }) + file
        case .dropPath: return file
        }
    }
}
