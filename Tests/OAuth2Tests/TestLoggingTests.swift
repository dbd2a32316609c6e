import Foundation
import Logging
import TestSupport
import Testing

/// The test processes' default log level (issue 24): `warning` unless AUTHRPC_TEST_LOG_LEVEL asks
/// for another, so the info lines of connection attempts that tests expect to fail stay quiet.
@Suite("Tests log at warning unless asked")
struct TestLoggingTests {
    @Test("a logger made after a peer start, without a level of its own, is at TestLogging.level (warning by default)")
    func defaultLevel() throws {
        TestLogging.installed
        #expect(Logger(label: "swift-authrpc").logLevel == TestLogging.level)
        if ProcessInfo.processInfo.environment["AUTHRPC_TEST_LOG_LEVEL"] == nil {
            #expect(TestLogging.level == .warning)
        }
    }
}
