internal import CPlatform

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program run to its end under bounds, without a shell: what a credential helper (an
/// `external_account` file's executable source) is.
///
/// The program is started with posix_spawn, by absolute path (no `PATH` search), with exactly
/// the arguments and environment given, standard input `/dev/null`, and as the leader of a
/// process group of its own. Its standard output is read up to ``Limits/output`` bytes; more
/// ends the run. Its standard error is kept up to ``Limits/errorOutput`` bytes and the rest read
/// and dropped (so a chatty program never blocks on a full pipe). When the deadline passes, the
/// output overflows or the caller cancels, the whole process group is killed with SIGKILL and
/// the child is reaped; nothing is left running that the program started in its group.
package enum ChildProcess {
    /// How much is read, and for how long.
    package struct Limits: Sendable {
        /// How long the program may run, from start to its exit and the end of its output.
        package var timeout: Duration
        /// The most standard output read; one byte more ends the run.
        package var output: Int
        /// The most standard error kept (the first bytes); the rest is read and dropped.
        package var errorOutput: Int

        /// Creates limits.
        package init(timeout: Duration, output: Int, errorOutput: Int = 4096) {
            self.timeout = timeout
            self.output = output
            self.errorOutput = errorOutput
        }
    }

    /// How the program ended, and what it printed.
    package struct Outcome: Sendable, Equatable {
        /// How the process ended.
        package enum Termination: Sendable, Equatable {
            /// It exited with this status.
            case exited(Int32)
            /// A signal ended it.
            case signalled(Int32)
        }

        /// How it ended.
        package var termination: Termination
        /// Everything it wrote to standard output (at most ``Limits/output`` bytes).
        package var output: [UInt8]
        /// The first ``Limits/errorOutput`` bytes it wrote to standard error.
        package var errorOutput: [UInt8]
        /// Whether it wrote more to standard error than was kept.
        package var errorOutputTruncated: Bool
    }

    /// Why a run did not come to an ``Outcome``.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The program could not be started (no such file, not executable, ...).
        case spawnFailed(SystemCallError)
        /// The deadline passed; the process group was killed.
        case timedOut(Duration)
        /// Standard output passed the limit; the process group was killed.
        case outputTooLarge(limit: Int)
        /// The caller cancelled; the process group was killed.
        case cancelled
        /// Reading its output or waiting for it failed.
        case systemCall(SystemCallError)

        /// What happened, for messages.
        package var description: String {
            switch self {
            case .spawnFailed(let error): return "it could not be started: \(Errno.describe(error.errno))"
            case .timedOut(let timeout): return "it did not finish within \(timeout) and was killed"
            case .outputTooLarge(let limit): return "it printed more than \(limit) bytes and was killed"
            case .cancelled: return "it was stopped because the request was cancelled"
            case .systemCall(let error): return "running it failed: \(error)"
            }
        }
    }

    /// Runs `path` with `arguments` (not including the program's name, which is `path`) and
    /// exactly `environment`, blocking the calling thread until it ends or a bound is hit.
    ///
    /// - Parameter cancellation: Signalled to stop the run early (the group is killed).
    /// - Throws: ``Failure``.
    package static func run(
        path: String,
        arguments: [String],
        environment: [String: String],
        limits: Limits,
        cancellation: Wakeup? = nil
    ) throws(Failure) -> Outcome {
        let deadline = ContinuousClock.now.advanced(by: limits.timeout)
        let output = try makePipe()
        let errors: (read: Int32, write: Int32)
        do { errors = try makePipe() } catch {
            closeDescriptor(output.read)
            closeDescriptor(output.write)
            throw error
        }

        let argv = [path] + arguments
        let envp = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let spawnError = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envpPointers in
                cplatform_spawn_in_new_group(&pid, path, argvPointers, envpPointers, output.write, errors.write)
            }
        }
        closeDescriptor(output.write)
        closeDescriptor(errors.write)
        guard spawnError == 0 else {
            closeDescriptor(output.read)
            closeDescriptor(errors.read)
            throw .spawnFailed(SystemCallError("posix_spawn", errno: spawnError))
        }

        var reader = Reader(output: output.read, errors: errors.read, limits: limits)
        defer { reader.close() }
        let stop: Failure?
        switch reader.readToEnd(deadline: deadline, timeout: limits.timeout, cancellation: cancellation) {
        case .finished:
            stop = nil
        case .stopped(let failure):
            stop = failure
        }
        if let stop {
            killGroup(ledBy: pid)
            _ = reap(pid, until: nil)
            throw stop
        }
        // The output has ended; the program is about to exit (or has). It is reaped only after
        // it exited, or after its group was killed, so its pid (the group's id) cannot be reused
        // while the group may still be signalled.
        let termination: Outcome.Termination
        switch reap(pid, until: deadline) {
        case .ended(let ending):
            termination = ending
        case .running:
            killGroup(ledBy: pid)
            _ = reap(pid, until: nil)
            throw .timedOut(limits.timeout)
        case .failed(let error):
            killGroup(ledBy: pid)
            throw .systemCall(error)
        }
        return Outcome(
            termination: termination,
            output: reader.output,
            errorOutput: reader.errorOutput,
            errorOutputTruncated: reader.errorOutputTruncated
        )
    }

    private static func makePipe() throws(Failure) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard cplatform_pipe_cloexec(&fds) == 0 else { throw .systemCall(SystemCallError("pipe", errno: errno)) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (fds[0], fds[1])
    }

    /// SIGKILL to the group the child leads, and to the child itself in case it left the group.
    private static func killGroup(ledBy pid: pid_t) {
        _ = killpg(pid, SIGKILL)
        _ = kill(pid, SIGKILL)
    }

    private enum Reaping {
        case ended(Outcome.Termination)
        case running
        case failed(SystemCallError)
    }

    /// Waits for `pid` to exit and reaps it; with a deadline, gives up once it passes (the child
    /// still running and not reaped).
    private static func reap(_ pid: pid_t, until deadline: ContinuousClock.Instant?) -> Reaping {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, deadline == nil ? 0 : WNOHANG)
            if result == pid { break }
            if result < 0 {
                if errno == EINTR { continue }
                return .failed(SystemCallError("waitpid", errno: errno))
            }
            guard let deadline, ContinuousClock.now < deadline else { return .running }
            // The output ended a moment ago; the exit follows. Look again shortly.
            _ = poll(nil, 0, min(10, PollTimeout.milliseconds(until: deadline)))
        }
        // The wait(2) status encoding, the same on Linux and Darwin: the low 7 bits are the
        // signal that ended the process (0 for an exit), the next byte the exit status.
        let signal = status & 0x7F
        return .ended(signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal))
    }

    /// Calls `body` with a NULL-terminated array of C strings for `strings`.
    private static func withCStrings<R>(
        _ strings: [String],
        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// Reads a child's standard output and error together with poll(2) until both end.
private struct Reader {
    enum Result {
        case finished
        case stopped(ChildProcess.Failure)
    }

    let outputFD: Int32
    let errorsFD: Int32
    let limits: ChildProcess.Limits
    var output: [UInt8] = []
    var errorOutput: [UInt8] = []
    var errorOutputTruncated = false
    private var outputOpen = true
    private var errorsOpen = true

    init(output: Int32, errors: Int32, limits: ChildProcess.Limits) {
        outputFD = output
        errorsFD = errors
        self.limits = limits
    }

    mutating func close() {
        if outputOpen { closeDescriptor(outputFD) }
        if errorsOpen { closeDescriptor(errorsFD) }
        outputOpen = false
        errorsOpen = false
    }

    mutating func readToEnd(
        deadline: ContinuousClock.Instant,
        timeout: Duration,
        cancellation: Wakeup?
    ) -> Result {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while outputOpen || errorsOpen {
            var fds: [pollfd] = []
            if outputOpen { fds.append(pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)) }
            if errorsOpen { fds.append(pollfd(fd: errorsFD, events: Int16(POLLIN), revents: 0)) }
            if let cancellation { fds.append(pollfd(fd: cancellation.readFD, events: Int16(POLLIN), revents: 0)) }
            let wait = PollTimeout.milliseconds(until: deadline)
            if wait == 0 { return .stopped(.timedOut(timeout)) }
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0 {
                if errno == EINTR { continue }
                return .stopped(.systemCall(SystemCallError("poll", errno: errno)))
            }
            for entry in fds where entry.revents != 0 {
                if let cancellation, entry.fd == cancellation.readFD { return .stopped(.cancelled) }
                let isOutput = entry.fd == outputFD
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    return .stopped(.systemCall(SystemCallError("read", errno: errno)))
                }
                if count == 0 {
                    closeDescriptor(entry.fd)
                    if isOutput { outputOpen = false } else { errorsOpen = false }
                    continue
                }
                if isOutput {
                    guard output.count + count <= limits.output else {
                        return .stopped(.outputTooLarge(limit: limits.output))
                    }
                    output.append(contentsOf: buffer[..<count])
                } else {
                    let room = max(0, limits.errorOutput - errorOutput.count)
                    errorOutput.append(contentsOf: buffer[..<min(room, count)])
                    if count > room { errorOutputTruncated = true }
                }
            }
        }
        return .finished
    }
}
