import CredFile

/// The `--help` texts, generated from the command table (`CommandTable.swift`) and the
/// option table (`Setting.options`, `Options.swift`).
enum Help {
    /// `credfile --help`.
    static var overview: String {
        var text = """
            credfile \(CredFileCLI.version): a hardened manager for `usuario,contraseña` credential files.

            Usage: credfile <command> [options] [--] <arguments>

            Commands:

            """
        let commands = Command.allCases.map { ($0.usageWords, $0.summary) }
        text += columns(commands)
        text += """

            Passwords are read from standard input (one line) or, on a terminal, from a
            no-echo prompt. No option takes a password.

            Options (every command accepts these):

            """
        text += columns(Setting.common.map { ($0.helpName, $0.helpLine) })
        text += "\nOptions of some commands:\n"
        text += columns(
            Setting.specific.map {
                ($0.helpName, "(\($0.commands.map(\.name).joined(separator: ", "))) \($0.helpLine)")
            })
        text += """

            Options may stand before or after the arguments; `--` ends them.
            `credfile COMMAND --help` describes one command.

            Exit: \(exitSummary)

            """
        return text
    }

    /// `credfile COMMAND --help`.
    static func text(for command: Command) -> String {
        var text = "Usage: credfile \(command.usageWords) [options]\n\n"
        text += wrap(command.details) + "\n"
        if !command.options.isEmpty {
            text += "\nOptions:\n" + columns(command.options.map { ($0.helpName, $0.helpLine) })
        }
        text += "\nCommon options: " + Setting.common.map(\.usage).joined(separator: ", ") + " (see credfile --help)\n"
        return text
    }

    /// The exit statuses in one line each (also the man page's EXIT STATUS).
    static let exitStatuses: [(Int32, String)] = [
        (0, "success, or access granted"),
        (1, "access denied, or check found errors"),
        (2, "usage error (a bad argument, option, username or password)"),
        (3, "the user already exists (add) or does not exist (passwd, delete)"),
        (4, "the file cannot be used as asked (malformed where that blocks the change)"),
        (5, "an I/O or lock error"),
        (130, "upgrade stopped by SIGINT after committing its finished work (143: SIGTERM)"),
    ]

    static var exitSummary: String {
        "0 ok/granted, 1 denied or check errors, 2 usage, 3 user exists/missing,\n"
            + "4 file unusable as asked, 5 I/O or lock error, 130/143 upgrade interrupted."
    }

    /// "sha256 or sha512", "a, b or c".
    static func alternatives(_ words: [String]) -> String {
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + words.last!  // count > 1
    }

    /// Two columns, the second starting at the same place (or on the next line).
    static func columns(_ rows: [(String, String)]) -> String {
        let width = 28
        var text = ""
        let indent = String(repeating: " ", count: width)
        for (left, right) in rows {
            let head = "  " + left
            let body = wrap(right, width: 88 - width).split(separator: "\n").joined(separator: "\n" + indent)
            if head.count < width {
                text += head + String(repeating: " ", count: width - head.count) + body + "\n"
            } else {
                text += head + "\n" + indent + body + "\n"
            }
        }
        return text
    }

    /// Breaks a paragraph into lines of at most 88 characters.
    static func wrap(_ paragraph: String, width: Int = 88) -> String {
        var lines: [String] = []
        var line = ""
        for word in paragraph.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}

extension Command {
    /// `add FILE USER`
    var usageWords: String { ([name] + argumentNames).joined(separator: " ") }
}

extension Setting {
    /// `--help, -h` / `--algorithm sha256|sha512`
    var helpName: String { shortName.map { "\(optionName), \($0)" } ?? usage }
}
