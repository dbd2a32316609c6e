/// swift-authrpc's version, as the user agent and `x-goog-api-client` carry it.
package let libraryVersion = "0.1.0"

/// The version of the Swift compiler that built the library (`6.3`), to the minor version.
package let swiftCompilerVersion: String = {
    #if compiler(>=6.5)
    "6.5"
    #elseif compiler(>=6.4)
    "6.4"
    #elseif compiler(>=6.3)
    "6.3"
    #elseif compiler(>=6.2)
    "6.2"
    #else
    "6.1"
    #endif
}()
