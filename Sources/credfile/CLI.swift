import CredFile

/// The exit statuses of SPEC §5.
enum ExitStatus: Int32 {
    /// Success, or access granted.
    case success = 0
    /// Access denied, or `check` found errors.
    case failure = 1
    /// A usage error.
    case usage = 2
    /// The user already exists (`add`) or does not exist (`passwd`, `delete`).
    case userConflict = 3
    /// The file cannot be used as asked.
    case unusableFile = 4
    /// An I/O or lock error.
    case io = 5
    /// A temporary failure in the qmail checkpassword interface (SPEC §7).
    case temporaryFailure = 111
    /// `upgrade` stopped by SIGINT after committing its finished work.
    case interrupted = 130
    /// `upgrade` stopped by SIGTERM after committing its finished work.
    case terminated = 143

    /// The one place where an error becomes an exit status.
    init(_ code: CredFileError.Code) {
        switch code {
        case .usage: self = .usage
        case .userExists, .userNotFound: self = .userConflict
        case .malformedFile: self = .unusableFile
        default: self = .io  // io, lock, crypto
        }
    }
}

/// The parsed command line: a command, its positional arguments and the options.
struct Invocation {
    var command: Command?
    var positionals: [String] = []
    var iterations: Int?
    var algorithm: HashAlgorithm = .sha256
    var json = false
    var help = false
    var version = false
    var plaintext = false
    var upgrade = false
    var backup = false
    var dryRun = false
    var jobs: Int?
    var targetMilliseconds: Int?
    /// `helper --protocol NAME`.
    var protocolName: String?
    /// `export --to FORMAT`.
    var exportFormat: String?
    /// `export --base-dn DN`.
    var baseDN: String?
    /// `export --skip-unexportable`.
    var skipUnexportable = false
    /// `--min-length N`: the fewest characters of a new password (SPEC §8).
    var minimumLength: Int?
    /// `--blocklist FILE` (repeatable): lists new passwords must not be on, besides the built-in one.
    var blocklists: [String] = []
    /// `import --hashed`: `user,secret` lines of hashes, stored byte for byte.
    var hashed = false
    /// `import --from FORMAT`: a peer's file on standard input.
    var importFormat: ImportFormat?
    /// `check --passwords`: also report plaintext entries that are on a blocklist.
    var checkPasswords = false
    /// Command-specific flags that were given, to refuse them where they do not apply.
    var specificFlags: [String] = []

    /// The password policy the options describe (SPEC §8); blocklist files are opened here.
    func passwordPolicy() throws -> PasswordPolicy {
        try PasswordPolicy(
            minimumLength: minimumLength ?? PasswordPolicy.defaultMinimumLength,
            blocklists: [.builtIn] + blocklists.map { try Blocklist(path: $0) })
    }

    /// The policy the options describe.
    func policy() throws -> HashPolicy {
        try HashPolicy(algorithm: algorithm, rounds: iterations ?? HashPolicy.defaultRounds)
    }
}

/// The `credfile` command line: parse → validate → run, and every error turned into
/// text and an exit status in one place. No argument is ever echoed back (it could be
/// a password typed in the wrong place).
enum CredFileCLI {
    static let version = "1.0.0"

    static func run(_ arguments: [String], terminal: Terminal) -> ExitStatus {
        let messages = Messages(environment: terminal.environment)
        do {
            let invocation = try parse(arguments)
            if invocation.version {
                terminal.write("credfile \(version) (\(CredFileInfo.openSSLVersion))\n")
                return .success
            }
            guard let command = invocation.command else {
                guard invocation.help else { throw CredFileError.usage("no command given") }
                terminal.write(Help.overview)
                return .success
            }
            if invocation.help {
                terminal.write(Help.text(for: command))
                return .success
            }
            try validate(invocation, for: command)
            let context = CommandContext(invocation: invocation, terminal: terminal, messages: messages)
            return try command.run(context)
        } catch let error as CredFileError {
            terminal.writeError("credfile: \(messages.error(error))\n")
            // A refused name or password is about the input, not about how credfile was called.
            if error.code == .usage, error.refusal == nil {
                terminal.writeError("credfile: see 'credfile --help'\n")
            }
            return ExitStatus(error.code)
        } catch {
            terminal.writeError("credfile: \(error)\n")
            return .io
        }
    }

    /// Splits the arguments into command, positionals and options. Options may stand
    /// anywhere; `--` ends them.
    static func parse(_ arguments: [String]) throws -> Invocation {
        var invocation = Invocation()
        var words: [String] = []
        var wordIndices: [Int] = []  // where each word stands in `arguments`
        var index = 0
        var optionsEnded = false
        func value(for option: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw CredFileError.usage("option \(option) needs a value") }
            return arguments[index]
        }
        func number(_ option: String, _ text: String, _ range: ClosedRange<Int>) throws -> Int {
            guard let n = Int(text), range.contains(n) else {
                throw CredFileError.usage("option \(option) takes a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return n
        }
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                words.append(argument)
                wordIndices.append(index)
                // `checkpassword FILE PROG [ARG…]`: everything after PROG is PROG's.
                if words.count == 3, words[0] == Command.checkpassword.rawValue { optionsEnded = true }
                continue
            }
            // `--name=value` or `--name value`.
            var name = argument
            var inlineValue: String?
            if let eq = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<eq])
                inlineValue = String(argument[argument.index(after: eq)...])
            }
            func optionValue() throws -> String { try inlineValue ?? value(for: name) }
            func flag() throws {
                guard inlineValue == nil else { throw CredFileError.usage("option \(name) takes no value") }
            }
            switch name {
            case "--": optionsEnded = true
            case "--help", "-h": try flag(); invocation.help = true
            case "--version": try flag(); invocation.version = true
            case "--json": try flag(); invocation.json = true
            case "--iterations":
                invocation.iterations = try number(name, optionValue(), HashPolicy.roundsRange)
            case "--algorithm":
                guard let algorithm = HashAlgorithm(rawValue: try optionValue()) else {
                    throw CredFileError.usage("option --algorithm takes sha256 or sha512")
                }
                invocation.algorithm = algorithm
            case "--min-length":
                invocation.minimumLength = try number(name, optionValue(), PasswordPolicy.minimumLengthRange)
            case "--blocklist":
                invocation.blocklists.append(try optionValue())
            case "--from":
                guard let format = ImportFormat(rawValue: try optionValue()), format != .hashed else {
                    throw CredFileError.usage("option --from takes htpasswd, mosquitto, dovecot or shadow")
                }
                invocation.importFormat = format
                invocation.specificFlags.append(name)
            case "--hashed", "--passwords":
                try flag()
                invocation.specificFlags.append(name)
                if name == "--hashed" { invocation.hashed = true } else { invocation.checkPasswords = true }
            case "--plaintext", "--upgrade", "--backup", "--dry-run":
                try flag()
                invocation.specificFlags.append(name)
                switch name {
                case "--plaintext": invocation.plaintext = true
                case "--upgrade": invocation.upgrade = true
                case "--backup": invocation.backup = true
                default: invocation.dryRun = true
                }
            case "--jobs":
                invocation.jobs = try number(name, optionValue(), 1...1024)
                invocation.specificFlags.append(name)
            case "--protocol", "--to", "--base-dn":
                let text = try optionValue()
                invocation.specificFlags.append(name)
                switch name {
                case "--protocol": invocation.protocolName = text
                case "--to": invocation.exportFormat = text
                default: invocation.baseDN = text
                }
            case "--skip-unexportable":
                try flag()
                invocation.specificFlags.append(name)
                invocation.skipUnexportable = true
            case "--target-ms":
                invocation.targetMilliseconds = try number(name, optionValue(), 1...600_000)
                invocation.specificFlags.append(name)
            default:
                throw CredFileError.usage("unknown option (argument \(index + 1))")
            }
        }
        if let first = words.first {
            guard let command = Command(rawValue: first) else {
                throw CredFileError.usage("unknown command (argument \(wordIndices[0] + 1))")
            }
            invocation.command = command
            invocation.positionals = Array(words.dropFirst())
        }
        return invocation
    }

    private static func validate(_ invocation: Invocation, for command: Command) throws {
        let expected = command.arguments
        let variadic = command == .checkpassword  // PROG's arguments follow
        guard invocation.positionals.count == expected.count || (variadic && invocation.positionals.count > expected.count) else {
            let usage = ([command.rawValue] + expected).joined(separator: " ")
            throw CredFileError.usage("\(command.rawValue) takes \(expected.count) argument\(expected.count == 1 ? "" : "s"): credfile \(usage)")
        }
        for flag in invocation.specificFlags where !command.options.contains(flag) {
            throw CredFileError.usage("option \(flag) does not apply to \(command.rawValue)")
        }
    }
}
