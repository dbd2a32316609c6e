import AuthRPCSystem
import Foundation
import Logging
import OAuth2

/// The executable source: a program the file names prints the subject token as a versioned JSON
/// response (``ExecutableResponse``).
///
/// It runs only when the environment says `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1` (a
/// credential file alone must never be enough to run a program). Its `output_file`, when the
/// file names one, is read first: an unexpired successful response there is used without
/// running anything. Otherwise the program runs as ``/AuthRPCSystem/ChildProcess`` runs programs:
/// by absolute path with the arguments the command splits into, no shell, standard input
/// `/dev/null`, a process group of its own that is killed whole at the timeout, standard output
/// at most ``maximumOutput`` bytes. Its environment is this process's (or the one given) with
/// the variables google-auth sets:
///
/// | Variable | Value |
/// | --- | --- |
/// | `GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE` | the file's `audience` |
/// | `GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE` | the file's `subject_token_type` |
/// | `GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE` | `0` |
/// | `GOOGLE_EXTERNAL_ACCOUNT_REVOKE` | `0` |
/// | `GOOGLE_EXTERNAL_ACCOUNT_ID` | the impersonated service account, or empty |
/// | `GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL` | the impersonated service account, when there is one |
/// | `GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE` | the `output_file`, when there is one |
struct ExecutableSubjectToken: Sendable {
    /// The variable that allows executables to run.
    static let allowVariable = "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"
    /// The most standard output read from the program.
    static let maximumOutput = SubjectTokenText.maximumSize
    /// The most of its standard error kept for an error message.
    static let maximumErrorOutput = 4096

    let executable: ExternalAccountCredentialSource.Executable
    let audience: String
    let subjectTokenType: String
    let impersonatedServiceAccount: String?
    let environment: [String: String]
    let logger: Logger

    /// The subject token, from the output file or a run of the program.
    func token() async throws(OAuthError) -> String {
        guard environment[Self.allowVariable] == "1" else {
            throw OAuthError(
                .invalidConfiguration,
                "executable sources run only when \(Self.allowVariable)=1 is set in the environment (so that a credential file alone never runs a program)"
            )
        }
        if let cached = cachedToken() { return cached }
        let program = executable.command[0]
        logger.debug("running the executable source", metadata: ["program": "\(program)"])
        let outcome = try await run()
        switch outcome.termination {
        case .exited(0):
            break
        case .exited(let status):
            throw OAuthError(
                .invalidConfiguration,
                "\(program) exited with status \(status)\(errorText(outcome))"
            )
        case .signalled(let signal):
            throw OAuthError(
                .invalidConfiguration,
                "\(program) was ended by signal \(signal)\(errorText(outcome))"
            )
        }
        var output = outcome.output
        if output.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }), let file = executable.outputFile
        {
            // The program may answer through its output file alone.
            output = (try? Self.read(file)) ?? []
        }
        do throws(ExecutableResponse.Refusal) {
            return try ExecutableResponse.parse(output, now: Date()).token
        } catch {
            throw OAuthError(.invalidConfiguration, "\(program): \(error.reason)")
        }
    }

    /// The environment the program gets.
    var childEnvironment: [String: String] {
        var variables = environment
        variables["GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE"] = audience
        variables["GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE"] = subjectTokenType
        variables["GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE"] = "0"
        variables["GOOGLE_EXTERNAL_ACCOUNT_REVOKE"] = "0"
        variables["GOOGLE_EXTERNAL_ACCOUNT_ID"] = impersonatedServiceAccount ?? ""
        if let impersonatedServiceAccount {
            variables["GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"] = impersonatedServiceAccount
        }
        if let outputFile = executable.outputFile {
            variables["GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"] = outputFile
        }
        return variables
    }

    /// The token in the output file, when it holds an unexpired successful response with an
    /// `expiration_time` (one without is treated as expired, as google-auth does); anything else
    /// there means the program runs.
    private func cachedToken() -> String? {
        guard let file = executable.outputFile, let bytes = try? Self.read(file) else { return nil }
        do throws(ExecutableResponse.Refusal) {
            let response = try ExecutableResponse.parse(bytes, now: Date())
            guard response.expiresAt != nil else { return nil }
            logger.debug("using the executable source's output file", metadata: ["file": "\(file)"])
            return response.token
        } catch {
            logger.debug(
                "the executable source's output file is not usable; running the program",
                metadata: ["file": "\(file)", "reason": "\(error.reason)"]
            )
            return nil
        }
    }

    /// Runs the program on a thread of its own (it blocks in poll(2) until the program ends), so
    /// no thread of Swift's cooperative pool waits for it; cancelling the task kills it.
    private func run() async throws(OAuthError) -> ChildProcess.Outcome {
        let program = executable.command[0]
        let limits = ChildProcess.Limits(
            timeout: executable.timeout,
            output: Self.maximumOutput,
            errorOutput: Self.maximumErrorOutput
        )
        let cancellation = try? Wakeup()
        let arguments = Array(executable.command.dropFirst())
        let environment = childEnvironment
        let result: Result<ChildProcess.Outcome, ChildProcess.Failure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    CurrentThread.setName("credential-exe")
                    do throws(ChildProcess.Failure) {
                        continuation.resume(
                            returning: .success(
                                try ChildProcess.run(
                                    path: program,
                                    arguments: arguments,
                                    environment: environment,
                                    limits: limits,
                                    cancellation: cancellation
                                )
                            )
                        )
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
                thread.start()
            }
        } onCancel: {
            cancellation?.signal()
        }
        switch result {
        case .success(let outcome):
            return outcome
        case .failure(let failure):
            let kind: OAuthError.Kind
            switch failure {
            case .timedOut, .cancelled, .systemCall: kind = .transient
            case .spawnFailed, .outputTooLarge: kind = .invalidConfiguration
            }
            throw OAuthError(kind, "\(program): \(failure)")
        }
    }

    /// `: ` and the program's standard error made printable, or nothing when it wrote none.
    private func errorText(_ outcome: ChildProcess.Outcome) -> String {
        let text = String(decoding: outcome.errorOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return " (it wrote nothing to standard error)" }
        return ": \(QuotedText.quote(text))"
    }

    /// The output file's bytes (bounded).
    private static func read(_ path: String) throws -> [UInt8] {
        Array(try SubjectTokenFile.read(path))
    }
}
