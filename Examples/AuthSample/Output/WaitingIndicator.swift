import AuthRPCSystem
import Foundation

/// Shows that the tool is waiting: a live spinner with the elapsed time on a terminal, and
/// plain lines (one at the start, one per note) when stdout is not a terminal. The message and
/// the notes are made printable (a note may quote a server); the spinner's own control sequences
/// are the only ones written.
final class WaitingIndicator: Sendable {
    private let message: String
    private let isTerminal = isatty(STDOUT_FILENO) != 0
    private let started = ContinuousClock.now
    private let state = Locked((frame: 0, stopped: false))
    private let ticker = Locked<Task<Void, Never>?>(nil)

    init(message: String) {
        self.message = PrintableText.escaping(message)
        if isTerminal {
            let task = Task { [weak self] in
                while !Task.isCancelled, let self {
                    self.draw()
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
            ticker.withLock { $0 = task }
        } else {
            Output.line(self.message + "...")
            fflush(nil)
        }
    }

    /// A line worth keeping (on its own line on a terminal).
    func note(_ text: String) {
        if isTerminal { print("\r\u{1B}[2K", terminator: "") }
        Output.line("  " + text)
        fflush(nil)
    }

    /// Ends the spinner and clears its line.
    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        ticker.withLock { $0?.cancel() }
        if isTerminal {
            print("\r\u{1B}[2K", terminator: "")
            fflush(nil)
        }
    }

    private func draw() {
        let frames = ["|", "/", "-", "\\"]
        let frame = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.frame += 1
            return state.frame
        }
        guard let frame else { return }
        let elapsed = Int((ContinuousClock.now - started).components.seconds)
        print(
            "\r\u{1B}[2K\(frames[frame % frames.count]) \(message) (\(elapsed / 60):\(String(format: "%02d", elapsed % 60)))",
            terminator: ""
        )
        fflush(nil)
    }
}
