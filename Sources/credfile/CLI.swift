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

/// The parsed command line: a command, its positional arguments and the options, each
/// option's value in its own field (filled from the table of `Command.swift`).
struct Invocation {
    var command: Command?
    /// FILE and USER, checked to be valid UTF-8 (FILE also not empty).
    var positionals: [String] = []
    /// `checkpassword`'s PROG and its ARGs, byte for byte.
    var programArguments: [[UInt8]] = []
    var iterations: Int?
    var algorithm: HashAlgorithm = .sha256
    var json = false
    /// `--lock-timeout SECONDS`; nil keeps `CredentialStore`'s default.
    var lockTimeout: Double?
    /// `--min-length N` (SPEC §8).
    var minimumLength: Int?
    /// `--blocklist FILE` (repeatable): lists new passwords must not be on, besides the built-in one.
    var blocklists: [String] = []
    /// `check --passwords`: also report plaintext entries that are on a blocklist.
    var checkPasswords = false
    var help = false
    var version = false
    var plaintext = false
    var upgrade = false
    var backup = false
    var dryRun = false
    var jobs: Int?
    /// `import --hashed`.
    var hashed = false
    /// `import --from FORMAT`.
    var importFormat: ImportFormat?
    /// `export --to FORMAT`.
    var exportTarget: ExportFormat?
    /// The `--to` format as the export command compares it.
    var exportFormat: String? { exportTarget?.rawValue }
    /// `export --base-dn DN`.
    var baseDN: String?
    /// `export --skip-unexportable`.
    var skipUnexportable = false
    /// `helper --protocol NAME`.
    var helperProtocol: HelperProtocol?
    /// The `--protocol` name as the helper command compares it.
    var protocolName: String? { helperProtocol?.rawValue }
    var targetMilliseconds: Int?
    /// `--generate-man` (hidden).
    var generateMan = false
    /// `--generate-completion SHELL` (hidden).
    var generateCompletion: Shell?
    /// Every option that was given, to refuse those that do not apply to the command.
    var given: [Option] = []

    /// The password policy the options describe (SPEC §8); blocklist files are opened here.
    /// - Throws: a usage error naming `--blocklist` for a file that cannot be a blocklist
    ///   (not a regular file).
    func passwordPolicy() throws -> PasswordPolicy {
        let files = try blocklists.map { path in
            do {
                return try Blocklist(path: path)
            } catch let error as CredFileError where error.code == .usage {
                throw CredFileError.usage("option \(Option.blocklist.rawValue): \(error.message)")
            }
        }
        return try PasswordPolicy(
            minimumLength: minimumLength ?? PasswordPolicy.defaultMinimumLength, blocklists: [.builtIn] + files)
    }

    /// The policy the options describe.
    func policy() throws -> HashPolicy {
        try HashPolicy(algorithm: algorithm, rounds: iterations ?? HashPolicy.defaultRounds)
    }

    /// Stores `option`'s value (already checked against its kind).
    fileprivate mutating func set(_ option: Option, _ value: ParsedValue?) {
        given.append(option)
        switch (option, value) {
        case (.iterations, .number(let n)): iterations = n
        case (.algorithm, .word(let w)): algorithm = HashAlgorithm(rawValue: w) ?? algorithm
        case (.json, _): json = true
        case (.lockTimeout, .seconds(let s)): lockTimeout = s
        case (.minimumLength, .number(let n)): minimumLength = n
        case (.blocklist, .word(let w)): blocklists.append(w)
        case (.help, _): help = true
        case (.version, _): version = true
        case (.plaintext, _): plaintext = true
        case (.upgrade, _): upgrade = true
        case (.backup, _): backup = true
        case (.dryRun, _): dryRun = true
        case (.jobs, .number(let n)): jobs = n
        case (.hashed, _): hashed = true
        case (.passwords, _): checkPasswords = true
        case (.from, .word(let w)): importFormat = ImportFormat(rawValue: w)
        case (.to, .word(let w)): exportTarget = ExportFormat(rawValue: w)
        case (.baseDN, .word(let w)): baseDN = w
        case (.skipUnexportable, _): skipUnexportable = true
        case (.protocol, .word(let w)): helperProtocol = HelperProtocol(rawValue: w)
        case (.targetMilliseconds, .number(let n)): targetMilliseconds = n
        case (.generateMan, _): generateMan = true
        case (.generateCompletion, .word(let w)): generateCompletion = Shell(rawValue: w)
        default: break  // a value of another kind cannot reach here: parse checks it first
        }
    }
}

/// An option's value once checked against its `ValueKind`.
fileprivate enum ParsedValue {
    case number(Int)
    case seconds(Double)
    case word(String)
}

/// The `credfile` command line: parse → validate → run, and every error turned into
/// text and an exit status in one place. No argument is ever echoed back (it could be
/// a password typed in the wrong place).
enum CredFileCLI {
    /// The version of credfile: `--version`, the man page and the Debian package
    /// (`Scripts/deb.sh` asks the binary) all carry this one.
    static let version = "2.0.0"

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
        do {
            let invocation = try parse(arguments)
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
            let context = CommandContext(invocation: invocation, terminal: terminal, messages: messages)
            return try command.run(context)
        } catch {
            return report(error, terminal: terminal, messages: messages)
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
            if words.count == 2, words[0].bytes == Array(Command.checkpassword.rawValue.utf8) {
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
            guard let name = String(validating: nameBytes, as: UTF8.self), let option = Option(spelling: name) else {
                throw CredFileError.usage("unknown option (argument \(index + 1))")
            }
            guard let kind = option.value else {
                guard inlineValue == nil else { throw CredFileError.usage("option \(option.rawValue) takes no value") }
                invocation.set(option, nil)
                continue
            }
            let raw: ArraySlice<UInt8>
            if let inlineValue {
                raw = inlineValue
            } else {
                index += 1
                guard index < arguments.count else { throw CredFileError.usage("option \(option.rawValue) needs a value") }
                raw = arguments[index][...]
            }
            invocation.set(option, try value(of: option, kind, raw))
        }
        guard let first = words.first else { return invocation }
        guard let name = String(validating: first.bytes, as: UTF8.self), let command = Command(rawValue: name) else {
            throw CredFileError.usage("unknown command (argument \(first.index + 1))")
        }
        invocation.command = command
        // FILE and USER: valid UTF-8 or refused, never repaired into another path or name.
        let specs = command.spec.arguments
        for (position, word) in words.dropFirst().enumerated() {
            let kind = position < specs.count ? specs[position].kind : ArgumentSpec.Kind.file
            guard let text = String(validating: word.bytes, as: UTF8.self) else {
                throw CredFileError.usage(kind == .user
                    ? "username is not valid UTF-8 (argument \(word.index + 1))"
                    : "argument \(word.index + 1) is not valid UTF-8")
            }
            invocation.positionals.append(text)
        }
        return invocation
    }

    /// Checks `raw` against the kind of value `option` takes. The message names the
    /// option and what it takes, never the value.
    private static func value(of option: Option, _ kind: ValueKind, _ raw: ArraySlice<UInt8>) throws -> ParsedValue {
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw CredFileError.usage("the value of option \(option.rawValue) is not valid UTF-8")
        }
        switch kind {
        case .wholeNumber(let range):
            guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int(text), range.contains(n) else {
                throw CredFileError.usage("option \(option.rawValue) takes a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return .number(n)
        case .seconds(let range):
            // Decimal digits with at most one point: no sign, exponent, inf or nan.
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            let digitsOnly = parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
            guard parts.count <= 2, digitsOnly, let seconds = Double(text), range.contains(seconds) else {
                throw CredFileError.usage(
                    "option \(option.rawValue) takes seconds from \(Int(range.lowerBound)) to \(Int(range.upperBound)) (decimals allowed)")
            }
            return .seconds(seconds)
        case .choice(let words):
            guard words.contains(text) else {
                throw CredFileError.usage("option \(option.rawValue) takes \(Help.alternatives(words))")
            }
            return .word(text)
        case .file:
            guard !text.isEmpty else { throw CredFileError.usage("option \(option.rawValue) needs a file name") }
            return .word(text)
        case .text:
            return .word(text)
        }
    }

    private static func validate(_ invocation: Invocation, for command: Command) throws {
        let spec = command.spec
        let fixed = spec.arguments.filter { $0.kind == .file || $0.kind == .user }
        let usage = "credfile " + ([command.rawValue] + command.arguments).joined(separator: " ")
        let needsProgram = spec.arguments.contains { $0.kind == .program }
        guard invocation.positionals.count == fixed.count, !needsProgram || !invocation.programArguments.isEmpty,
            needsProgram || invocation.programArguments.isEmpty
        else {
            let count = fixed.count + (needsProgram ? 1 : 0)
            throw CredFileError.usage(
                "\(command.rawValue) takes \(needsProgram ? "at least " : "")\(count) argument\(count == 1 ? "" : "s"): \(usage)")
        }
        for (position, argument) in fixed.enumerated() where argument.kind == .file {
            // An empty FILE would lock and write `./.lock`, not a file anyone named.
            guard !invocation.positionals[position].isEmpty else {
                throw CredFileError.usage("\(argument.name) is empty: \(usage)")
            }
        }
        for option in invocation.given where !option.isCommon && !spec.options.contains(option) {
            throw CredFileError.usage("option \(option.rawValue) does not apply to \(command.rawValue)")
        }
        for option in spec.required where !invocation.given.contains(option) {
            throw CredFileError.usage("\(command.rawValue) needs \(option.usage)")
        }
        if invocation.hashed && invocation.importFormat != nil {
            throw CredFileError.usage("options --hashed and --from cannot be used together")
        }
        if invocation.plaintext && (invocation.hashed || invocation.importFormat != nil) {
            throw CredFileError.usage("--plaintext does not apply to --hashed or --from")
        }
    }
}
