import Foundation

// The libFuzzer entry points (built only by `make fuzz`: `Scripts/fuzz.sh`). The process fuzzes the
// target named by AUTHRPC_FUZZ_TARGET; with AUTHRPC_FUZZ_LIST=1 it lists the targets and their
// -max_len and exits.

/// The target this process fuzzes, chosen once.
private let selected: FuzzTarget? = getenv("AUTHRPC_FUZZ_TARGET").flatMap { FuzzTarget.named(String(cString: $0)) }

@_cdecl("LLVMFuzzerInitialize")
func initialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    if getenv("AUTHRPC_FUZZ_LIST") != nil {
        for target in FuzzTarget.all { print("\(target.name) \(target.maxLength)") }
        exit(0)
    }
    guard selected != nil else {
        printError("set AUTHRPC_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: " "))")
        exit(2)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = selected else { return -1 }
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try target.run(bytes)
    } catch {
        // A broken rule is a finding like a trap: libFuzzer saves the input on abort.
        printError("==AUTHRPC FUZZ== \(target.name): \(error)")
        abort()
    }
    return 0
}

private func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
