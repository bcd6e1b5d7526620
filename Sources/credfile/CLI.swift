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
        case .invitationRefused: self = .failure
        default: self = .io  // io, lock, crypto, guardDatabase
        }
    }
}

/// The `credfile` command line: parse → validate → run, and every error turned into
/// text and an exit status in one place. No argument is ever echoed back (it could be
/// a password typed in the wrong place).
enum CredFileCLI {
    /// The version of credfile: `--version`, the man page and the Debian package
    /// (`Scripts/deb.sh` asks the binary) all carry this one.
    static let version = "4.0.0"

    /// Runs the command line given as strings (tests; every string is valid UTF-8).
    static func run(_ arguments: [String], terminal: Terminal) -> ExitStatus {
        run(arguments.map { Array($0.utf8) }, terminal: terminal)
    }

    /// Runs the command line given as the bytes of each argument, as `main` receives
    /// them: a FILE or USER that is not valid UTF-8 is refused, never repaired.
    static func run(_ arguments: [[UInt8]], terminal: Terminal) -> ExitStatus {
        let messages = Messages(environment: terminal.environment)
        // A set-user-ID copy would read and write any file with its owner's rights for
        // whoever runs it, and credfile checks nothing about who that is: refuse, before
        // reading an argument, and say how to delegate instead.
        guard !terminal.isSecureExec else {
            terminal.writeError("credfile: \(messages.secureExecRefused)\n")
            return .usage
        }
        let status = run(arguments, terminal: terminal, messages: messages)
        do {
            // Output that did not reach standard output: the command did not do what it
            // was asked (a list, a hash, findings lost), whatever it would have exited.
            try terminal.flushOutput()
            return status
        } catch {
            return report(error, terminal: terminal, messages: messages)
        }
    }

    /// Runs the command; standard output may still be buffered.
    private static func run(_ arguments: [[UInt8]], terminal: Terminal, messages: Messages) -> ExitStatus {
        var invocation = Invocation()
        var configuring = false
        do {
            invocation = try parse(arguments)
            if invocation.generateMan {
                terminal.write(Documentation.manPage())
                return .success
            }
            if let shell = invocation.generateCompletion {
                terminal.write(Documentation.completion(for: shell))
                return .success
            }
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
            configuring = true
            try configure(&invocation, for: command, environment: terminal.environment)
            configuring = false
            let context = CommandContext(invocation: invocation, terminal: terminal, messages: messages)
            return try command.run(context)
        } catch {
            let status = report(error, terminal: terminal, messages: messages)
            return callerStatus(status, invocation: invocation, configuring: configuring)
        }
    }

    /// A login check's own answer to a fault before it could start (the configuration
    /// file unreadable or broken, an option refused): its caller reads only its own codes
    /// (SPEC §7). `checkpassword` exits 111 (Dovecot's and qmail's temporary failure)
    /// for any fault of the configuration file, and 2 for misuse of its command line; `helper --protocol squid` answers `BH` to every request until end of
    /// input, so Squid reports a helper error rather than a helper that died; `pam` and
    /// `serve` keep SPEC §5's statuses (5, 2), which pam_exec and systemd read.
    private static func callerStatus(
        _ status: ExitStatus, invocation: Invocation, configuring: Bool
    ) -> ExitStatus {
        switch invocation.command?.name {
        case "checkpassword":
            return status == .usage && !configuring ? .usage : .temporaryFailure
        case "helper" where invocation.protocolName == "squid":
            CommandContext.answerUnavailable(message: "credfile cannot start (see its standard error)")
            return status
        default:
            return status
        }
    }

    /// Says what went wrong on standard error and gives its exit status: the one place
    /// where an error becomes text and a status.
    private static func report(_ error: any Error, terminal: Terminal, messages: Messages) -> ExitStatus {
        guard let error = error as? CredFileError else {
            terminal.writeError("credfile: \(error)\n")
            return .io
        }
        terminal.writeError("credfile: \(messages.error(error))\n")
        // A refused name or password is about the input, not about how credfile was called.
        if error.code == .usage, error.refusal == nil {
            terminal.writeError("credfile: see 'credfile --help'\n")
        }
        return ExitStatus(error.code)
    }

    /// Splits the arguments into command, positionals and options, checking every
    /// option's value against its kind in the table. Options may stand anywhere; `--`
    /// ends them; after `checkpassword FILE` everything belongs to PROG.
    static func parse(_ arguments: [String]) throws -> Invocation { try parse(arguments.map { Array($0.utf8) }) }

    /// The same, on the bytes of each argument.
    static func parse(_ arguments: [[UInt8]]) throws -> Invocation {
        var invocation = Invocation()
        var words: [(bytes: [UInt8], index: Int)] = []  // with where each stands in `arguments`
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if let first = words.first,
                let command = String(validating: first.bytes, as: UTF8.self).flatMap(Command.init(named:)),
                words.count == command.arguments.firstIndex(where: { $0.kind == .program }).map({ $0 + 1 })
            {
                // checkpassword FILE PROG [ARG…]: the rest is PROG's, byte for byte.
                invocation.programArguments = Array(arguments[index...])
                break
            }
            if optionsEnded || argument.first != UInt8(ascii: "-") || argument == [UInt8(ascii: "-")] {
                words.append((argument, index))
                continue
            }
            if argument == Array("--".utf8) {
                optionsEnded = true
                continue
            }
            // `--name=value` or `--name value`.
            var nameBytes = argument[...]
            var inlineValue: ArraySlice<UInt8>?
            if argument.starts(with: Array("--".utf8)), let eq = argument.firstIndex(of: UInt8(ascii: "=")) {
                nameBytes = argument[..<eq]
                inlineValue = argument[(eq + 1)...]
            }
            guard let name = String(validating: nameBytes, as: UTF8.self), let option = Setting.option(spelled: name)
            else {
                throw CredFileError.usage("unknown option (argument \(index + 1))")
            }
            guard option.kind != .flag else {
                guard inlineValue == nil else {
                    throw CredFileError.usage("option \(option.optionName) takes no value")
                }
                invocation.set(option, .flag(option.spelling == .plain))
                continue
            }
            let raw: ArraySlice<UInt8>
            if let inlineValue {
                raw = inlineValue
            } else {
                index += 1
                guard index < arguments.count else {
                    throw CredFileError.usage("option \(option.optionName) needs a value")
                }
                raw = arguments[index][...]
            }
            invocation.set(option, try value(of: option, raw))
        }
        guard let first = words.first else { return invocation }
        guard let name = String(validating: first.bytes, as: UTF8.self), let command = Command(named: name) else {
            throw CredFileError.usage("unknown command (argument \(first.index + 1))")
        }
        invocation.command = command
        // FILE and USER: valid UTF-8 or refused, never repaired into another path or name.
        let specs = command.arguments
        for (position, word) in words.dropFirst().enumerated() {
            let kind = position < specs.count ? specs[position].kind : ArgumentSpec.Kind.file
            guard let text = String(validating: word.bytes, as: UTF8.self) else {
                throw CredFileError.usage(
                    kind == .user || kind == .optionalUser
                        ? "username is not valid UTF-8 (argument \(word.index + 1))"
                        : "argument \(word.index + 1) is not valid UTF-8")
            }
            invocation.positionals.append(text)
        }
        return invocation
    }

    /// Checks `raw` against the kind of value `option` takes. The message names the
    /// option and what it takes, never the value.
    private static func value(of option: Setting, _ raw: ArraySlice<UInt8>) throws -> SettingValue {
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw CredFileError.usage("the value of option \(option.optionName) is not valid UTF-8")
        }
        guard let value = option.kind.value(of: text) else {
            throw CredFileError.usage("option \(option.optionName) takes \(option.kind.expectation)")
        }
        return value
    }

    /// Fills in, from the configuration file (SPEC §5), what the command line left
    /// unset: the file is read whole and checked first, so nothing runs on half of it. A
    /// key of an option this command does not take is ignored (`upgrade = yes` does not
    /// break `list`); the `[FILE]` sections apply to commands that take a FILE.
    static func configure(_ invocation: inout Invocation, for command: Command, environment: [String: String]) throws {
        let configuration = try CredFileConfiguration.load(path: invocation.configPath, environment: environment)
        let file = command.takesFile ? invocation.positionals.first : nil
        for (setting, values) in configuration.values(for: file)
        where command.accepts(setting) && invocation.values[setting.name] == nil {
            invocation.values[setting.name] = values
        }
    }

    private static func validate(_ invocation: Invocation, for command: Command) throws {
        let fixed = command.arguments.filter { $0.kind == .file || $0.kind == .user }
        let optional = command.arguments.filter { $0.kind == .optionalUser }.count
        let usage = "credfile " + command.usageWords
        let needsProgram = command.arguments.contains { $0.kind == .program }
        guard (fixed.count...(fixed.count + optional)).contains(invocation.positionals.count),
            !needsProgram || !invocation.programArguments.isEmpty,
            needsProgram || invocation.programArguments.isEmpty
        else {
            let count = fixed.count + (needsProgram ? 1 : 0)
            throw CredFileError.usage(
                "\(command.name) takes \(needsProgram ? "at least " : "")\(count) argument\(count == 1 ? "" : "s"): \(usage)"
            )
        }
        for (position, argument) in fixed.enumerated() where argument.kind == .file {
            // An empty FILE would lock and write `./.lock`, not a file anyone named.
            guard !invocation.positionals[position].isEmpty else {
                throw CredFileError.usage("\(argument.name) is empty: \(usage)")
            }
        }
        for option in invocation.given where !command.accepts(option) {
            throw CredFileError.usage("option \(option.optionName) does not apply to \(command.name)")
        }
        for option in command.required where !invocation.given.contains(option) {
            throw CredFileError.usage("\(command.name) needs \(option.usage)")
        }
        if invocation.hashed && invocation.importFormat != nil {
            throw CredFileError.usage("options --hashed and --from cannot be used together")
        }
        // Only a --plaintext typed here conflicts: the file's `plaintext = yes` is for the
        // commands that store passwords, and means nothing to hashes brought in as they are.
        if invocation.given.contains(.plaintext) && (invocation.hashed || invocation.importFormat != nil) {
            throw CredFileError.usage("--plaintext does not apply to --hashed or --from")
        }
        if invocation.existing && (invocation.hashed || invocation.importFormat != nil) {
            throw CredFileError.usage(
                "--existing does not apply to --hashed or --from: hashes are never judged as new passwords")
        }
    }
}
