/// An executable source's `command` split into the program and its arguments the way
/// google-auth splits it (Python's `shlex.split`: POSIX shell quoting, no comments), so that a
/// file works the same in both. Nothing is expanded: no variables, globs or substitutions, and
/// no shell ever runs the command.
///
/// - Words are separated by spaces, tabs and line breaks.
/// - `'...'` keeps everything literally; `"..."` too, except that `\"` and `\\` stand for `"`
///   and `\`; outside quotes, `\` makes the next character literal.
/// - Quoted parts join the word around them (`a"b c"d` is `ab cd`); `''` is an empty word.
enum CommandWords {
    /// Why a command cannot be split.
    enum Failure: Error, Equatable {
        case unclosedQuote
        case trailingBackslash
    }

    /// The words of `command`.
    static func split(_ command: String) throws(Failure) -> [String] {
        enum State {
            case between, word, single, double
        }
        var words: [String] = []
        var word = String.UnicodeScalarView()
        var state = State.between
        var scalars = command.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch state {
            case .between, .word:
                switch scalar {
                case " ", "\t", "\r", "\n":
                    if state == .word {
                        words.append(String(word))
                        word = String.UnicodeScalarView()
                    }
                    state = .between
                case "'":
                    state = .single
                case "\"":
                    state = .double
                case "\\":
                    guard let next = scalars.next() else { throw .trailingBackslash }
                    word.append(next)
                    state = .word
                default:
                    word.append(scalar)
                    state = .word
                }
            case .single:
                if scalar == "'" { state = .word } else { word.append(scalar) }
            case .double:
                switch scalar {
                case "\"":
                    state = .word
                case "\\":
                    guard let next = scalars.next() else { throw .unclosedQuote }
                    if next != "\"" && next != "\\" { word.append(scalar) }
                    word.append(next)
                default:
                    word.append(scalar)
                }
            }
        }
        switch state {
        case .single, .double: throw .unclosedQuote
        case .word: words.append(String(word))
        case .between: break
        }
        return words
    }
}
