import Foundation

/// A line on standard error (progress and failures; standard output holds the results).
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
