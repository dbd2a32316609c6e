import Foundation
public import Logging

/// The level of the loggers tests make without saying one (a channel's, a token source's):
/// `warning`, so the `info` lines of connection attempts a test expects to fail stay out of the
/// test run's output. `AUTHRPC_TEST_LOG_LEVEL=debug` (any swift-log level) asks for more; a test
/// that checks what is logged uses ``LogCapture``, which is not affected.
public enum TestLogging {
    /// The level in effect.
    public static let level: Logger.Level =
        ProcessInfo.processInfo.environment["AUTHRPC_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
        ?? .warning

    /// Installs the standard-error handler at ``level``, once per test process (swift-log takes
    /// one bootstrap); touched by every peer start, so before the loggers of the tests that use
    /// a peer are made.
    public static let installed: Void = {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }()
}
