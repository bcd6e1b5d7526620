import CredFile

// The one command table (SPEC §5): every command with its arguments, its own options and
// what it does; every option with the kind of value it takes. The parser, the
// validation, `--help`, the man page and the shell completions are all read from here,
// so none of them can drift from what the code accepts.

/// The subcommands of `credfile`.
enum Command: String, CaseIterable {
    case add, verify, passwd, delete, `import`, list, check, upgrade, hash, login, register
    case export, pam, checkpassword, helper, calibrate

    /// This command's row of the table.
    var spec: CommandSpec { CommandSpec.table[self]! }  // the table has a row for every case (a test checks)

    /// The positional arguments as a usage line spells them (`FILE`, `USER`, `PROG`, `[ARG…]`).
    var arguments: [String] { spec.arguments.map(\.display) }

    /// The command-specific options it accepts (the common ones are accepted everywhere).
    var options: [Option] { spec.options }

    /// Runs the command; errors are turned into exit statuses by the caller.
    func run(_ c: CommandContext) throws -> ExitStatus {
        switch self {
        case .add: return try c.add()
        case .verify: return try c.verify()
        case .passwd: return try c.passwd()
        case .delete: return try c.delete()
        case .import: return try c.importUsers()
        case .list: return try c.list()
        case .check: return try c.check()
        case .upgrade: return try c.upgrade()
        case .hash: return try c.hash()
        case .login: return try c.login()
        case .register: return try c.register()
        case .calibrate: return try c.calibrate()
        case .pam: return try c.pam()
        case .checkpassword: return c.checkpassword()
        case .helper: return try c.helper()
        case .export: return try c.export()
        }
    }
}

/// A positional argument of a command.
struct ArgumentSpec: Equatable {
    enum Kind: Equatable {
        /// A credential file: valid UTF-8, not empty.
        case file
        /// A username: valid UTF-8 (the library judges the rest).
        case user
        /// The program `checkpassword` runs on success; it and everything after it are
        /// passed on byte for byte.
        case program
        /// Any number of arguments for the program.
        case programArguments
    }
    var name: String
    var kind: Kind

    /// How usage lines spell it.
    var display: String { kind == .programArguments ? "[\(name)…]" : name }

    static let file = ArgumentSpec(name: "FILE", kind: .file)
    static let user = ArgumentSpec(name: "USER", kind: .user)
}

/// What an option takes.
enum ValueKind: Equatable {
    /// A whole number within the range.
    case wholeNumber(ClosedRange<Int>)
    /// Seconds within the range, decimals allowed (`0.5`).
    case seconds(ClosedRange<Double>)
    /// One of these words.
    case choice([String])
    /// A path.
    case file
    /// Any text (valid UTF-8).
    case text
}

/// Every option `credfile` knows.
enum Option: String, CaseIterable {
    case iterations = "--iterations"
    case algorithm = "--algorithm"
    case json = "--json"
    case lockTimeout = "--lock-timeout"
    case minimumLength = "--min-length"
    case blocklist = "--blocklist"
    case help = "--help"
    case version = "--version"
    case plaintext = "--plaintext"
    case upgrade = "--upgrade"
    case backup = "--backup"
    case dryRun = "--dry-run"
    case jobs = "--jobs"
    case hashed = "--hashed"
    case passwords = "--passwords"
    case from = "--from"
    case to = "--to"
    case baseDN = "--base-dn"
    case skipUnexportable = "--skip-unexportable"
    case `protocol` = "--protocol"
    case targetMilliseconds = "--target-ms"
    // Hidden: for packaging (CONTRIBUTING.md), not in --help, the man page or completions.
    case generateMan = "--generate-man"
    case generateCompletion = "--generate-completion"

    /// The short spelling, if any.
    var alias: String? { self == .help ? "-h" : nil }

    /// Accepted by every command (SPEC §5), even where it changes nothing.
    var isCommon: Bool {
        switch self {
        case .iterations, .algorithm, .json, .lockTimeout, .minimumLength, .blocklist, .help, .version,
            .generateMan, .generateCompletion:
            true
        default: false
        }
    }

    /// Left out of `--help`, the man page and the completions.
    var isHidden: Bool { self == .generateMan || self == .generateCompletion }

    /// The value it takes; nil for a flag.
    var value: ValueKind? {
        switch self {
        case .iterations: .wholeNumber(HashPolicy.roundsRange)
        case .algorithm: .choice(HashAlgorithm.allCases.map(\.rawValue))
        case .lockTimeout: .seconds(0...86_400)
        case .minimumLength: .wholeNumber(PasswordPolicy.minimumLengthRange)
        case .blocklist: .file
        case .jobs: .wholeNumber(1...1024)
        case .from: .choice(ImportFormat.allCases.filter { $0 != .hashed }.map(\.rawValue))
        case .to: .choice(ExportFormat.allCases.map(\.rawValue))
        case .baseDN: .text
        case .protocol: .choice(HelperProtocol.allCases.map(\.rawValue))
        case .targetMilliseconds: .wholeNumber(1...600_000)
        case .generateCompletion: .choice(Shell.allCases.map(\.rawValue))
        default: nil
        }
    }

    /// The placeholder of its value in usage texts (`N`, `sha256|sha512`, `FILE`).
    var placeholder: String? {
        switch self {
        case .iterations, .minimumLength, .jobs, .targetMilliseconds: "N"
        case .lockTimeout: "SECONDS"
        case .blocklist: "FILE"
        case .baseDN: "DN"
        default:
            if case .choice(let words) = value { words.joined(separator: "|") } else { nil }
        }
    }

    /// `--algorithm sha256|sha512`
    var usage: String { [rawValue, placeholder].compactMap { $0 }.joined(separator: " ") }

    /// One line for `--help`, the man page and the completions.
    var summary: String {
        switch self {
        case .iterations:
            "PBKDF2 rounds for new hashes, the work of every verify and the bar for upgrade-on-login (default \(HashPolicy.defaultRounds); below \(HashPolicy.defaultMinimumRounds) warns)"
        case .algorithm: "PBKDF2 hash function of the policy (default sha256)"
        case .json: "JSON output (list, check, upgrade, export, calibrate)"
        case .lockTimeout:
            "wait at most SECONDS (0 to 86400, decimals allowed) for the file's lock, then exit 5 (default 15)"
        case .minimumLength: "new passwords need at least N characters (default \(PasswordPolicy.defaultMinimumLength))"
        case .blocklist:
            "also refuse new passwords listed in FILE (one a line, or a sorted SHA1HEX[:count] list); may be repeated"
        case .help: "show help (for a command after its name) and exit"
        case .version: "show the version and exit"
        case .plaintext: "store the legacy plaintext form instead of a hash"
        case .upgrade: "rehash a plaintext or weaker entry after a successful login"
        case .backup: "keep the previous version as FILE.bak"
        case .dryRun: "say what would be done; write nothing"
        case .jobs: "hash (or answer, for helper) on N threads (default: all cores)"
        case .hashed: "the secrets on stdin are hashes (SPEC §3), stored byte for byte, like chpasswd -e"
        case .passwords: "also report plaintext entries that are on a blocklist"
        case .from: "read a peer's file on stdin in that format"
        case .to: "the output format"
        case .baseDN: "the LDAP base under which each uid=USER entry is placed"
        case .skipUnexportable: "report and skip entries no directory can verify, instead of exiting 4"
        case .protocol: "the helper protocol to speak on stdin and stdout"
        case .targetMilliseconds: "the time per login to fit (default 250)"
        case .generateMan: "print the man page (roff)"
        case .generateCompletion: "print the completion script for the shell"
        }
    }

    /// Finds an option by its spelling (`--json`, `-h`).
    init?(spelling: String) {
        if let option = Option(rawValue: spelling) {
            self = option
        } else if let option = Option.allCases.first(where: { $0.alias == spelling }) {
            self = option
        } else {
            return nil
        }
    }

    /// The options shown to people: every option but the hidden ones.
    static var visible: [Option] { allCases.filter { !$0.isHidden } }
    /// The visible common options, in table order.
    static var common: [Option] { visible.filter(\.isCommon) }
    /// The visible command-specific options, in table order.
    static var specific: [Option] { visible.filter { !$0.isCommon } }

    /// The commands that accept this (command-specific) option.
    var commands: [Command] { Command.allCases.filter { $0.options.contains(self) } }
}

/// The formats of `export --to`.
enum ExportFormat: String, CaseIterable { case ldif }
/// The protocols of `helper --protocol`.
enum HelperProtocol: String, CaseIterable { case squid }
/// The shells `--generate-completion` writes for.
enum Shell: String, CaseIterable { case bash, zsh, fish }

/// One command's row: arguments, own options, and what it does.
struct CommandSpec {
    var arguments: [ArgumentSpec]
    var options: [Option]
    /// Options it cannot run without.
    var required: [Option] = []
    /// One line for the overview and the completions.
    var summary: String
    /// A paragraph for `credfile COMMAND --help` and the man page.
    var details: String

    /// The table itself.
    static let table: [Command: CommandSpec] = [
        .add: CommandSpec(
            arguments: [.file, .user], options: [.plaintext, .backup],
            summary: "register a user (hashed; --plaintext for the legacy form)",
            details: """
                Registers USER with a new password (asked twice on a terminal, else one line of \
                standard input). Stored as a salted PBKDF2 hash, or as legacy plaintext with \
                --plaintext. Creates FILE (mode 0600) when missing. Exit 3 when USER already has an entry.
                """),
        .verify: CommandSpec(
            arguments: [.file, .user], options: [.upgrade, .backup],
            summary: "log in: exit 0 when granted, 1 when denied",
            details: """
                Checks USER's password (one line of standard input, or a no-echo prompt). Exit 0 \
                when granted, 1 when denied, with the same message and time for an unknown user \
                as for a wrong password. --upgrade rehashes a plaintext or weaker entry after a \
                successful login.
                """),
        .passwd: CommandSpec(
            arguments: [.file, .user], options: [.plaintext, .backup],
            summary: "change a password",
            details: "Changes USER's password in place, keeping every other line. Exit 3 when USER has no entry."),
        .delete: CommandSpec(
            arguments: [.file, .user], options: [.backup],
            summary: "remove every entry of a user",
            details: "Removes every entry of USER, shadowed duplicates included. Exit 3 when USER has no entry."),
        .import: CommandSpec(
            arguments: [.file], options: [.plaintext, .backup, .jobs, .hashed, .from],
            summary: "add or update many users from user,password lines on stdin",
            details: """
                Adds or updates the users of `user,password` lines on standard input (like \
                chpasswd), in one rewrite: one bad line and nothing is written. --hashed takes \
                `user,secret` lines whose secrets are hashes and stores them byte for byte (like \
                chpasswd -e). --from FORMAT reads a peer's file: htpasswd (user:secret), mosquitto \
                (user:$7$…), dovecot (passwd-file user:{SCHEME}secret[:…]) or shadow \
                (user:hash:…; locked or empty hashes are skipped and reported). All or nothing.
                """),
        .list: CommandSpec(
            arguments: [.file], options: [],
            summary: "users and how each is stored, never secrets",
            details: "Lists the users (the first entry of each name) and how each is stored (plaintext, pbkdf2-sha256 600000, …); never a secret."),
        .check: CommandSpec(
            arguments: [.file], options: [.passwords],
            summary: "lint: FILE:LINE: error|warning: …; exit 1 on errors",
            details: """
                Reports every problem as FILE:LINE: error: … or FILE:LINE: warning: …, and warns \
                when FILE can be read or written by group or others. Exit 1 when there is an error.
                """),
        .upgrade: CommandSpec(
            arguments: [.file], options: [.dryRun, .backup, .jobs],
            summary: "hash every plaintext entry, on all cores",
            details: """
                Hashes every plaintext entry on all cores, committing in batches (each one atomic \
                rewrite under the lock), with a progress bar on a terminal. SIGINT or SIGTERM \
                commits the finished work and exits 130 or 143; the next upgrade continues. \
                --dry-run says what it would do.
                """),
        .hash: CommandSpec(
            arguments: [], options: [],
            summary: "print the hash of the password on stdin",
            details: "Prints the hash string of the password on standard input (asked twice on a terminal)."),
        .login: CommandSpec(
            arguments: [.file], options: [.upgrade, .backup],
            summary: "the seed app's login screen",
            details: "The seed app's login screen: asks for a username and a password (no echo)."),
        .register: CommandSpec(
            arguments: [.file], options: [.backup],
            summary: "the seed app's register screen",
            details: "The seed app's register screen: asks for a username and a password (twice, no echo)."),
        .export: CommandSpec(
            arguments: [.file], options: [.to, .baseDN, .skipUnexportable], required: [.to],
            summary: "print an LDIF entry per user for OpenLDAP",
            details: """
                Prints an LDIF entry per user (uid, cn, sn, objectClass: inetOrgPerson, \
                userPassword: {PBKDF2-SHA256}… / {CRYPT}… / …) that OpenLDAP with pw-pbkdf2 \
                verifies. An entry no directory can verify (plaintext, malformed, unsupported) is \
                reported with its line and nothing is printed (exit 4), unless --skip-unexportable.
                """),
        .pam: CommandSpec(
            arguments: [.file], options: [.upgrade],
            summary: "a login check for pam_exec.so expose_authtok",
            details: """
                A login check for Linux-PAM's pam_exec.so expose_authtok: the user is $PAM_USER, \
                the password is standard input read to its end (a final NUL, LF or CRLF removed). \
                PAM_TYPE other than auth is refused. Exit 0 granted, 1 denied (nothing printed), \
                5 I/O error.
                """),
        .checkpassword: CommandSpec(
            arguments: [.file, ArgumentSpec(name: "PROG", kind: .program), ArgumentSpec(name: "ARG", kind: .programArguments)],
            options: [],
            summary: "the qmail checkpassword interface (Dovecot 2.3)",
            details: """
                The qmail checkpassword interface as Dovecot 2.3 calls it: reads \
                user\\0password\\0timestamp\\0 (at most 512 bytes) from descriptor 3; when \
                granted runs PROG with its ARGs, else exits 1; 2 on misuse, 111 on a temporary \
                failure. credfile's own options stand before FILE: everything after PROG belongs to PROG.
                """),
        .helper: CommandSpec(
            arguments: [.file], options: [.protocol, .jobs], required: [.protocol],
            summary: "a long-running Squid basic-auth helper",
            details: """
                A Squid basic-auth helper: one `user password` line per request (URL-escaped), \
                answered OK, ERR (the same for an unknown user and a wrong password) or BH; with \
                concurrency=N each line starts with a channel ID. Runs until the end of input and \
                re-reads FILE when it changes.
                """),
        .calibrate: CommandSpec(
            arguments: [], options: [.targetMilliseconds],
            summary: "rounds that fit a time per login on this machine",
            details: """
                Measures PBKDF2 on this machine and prints the rounds that fit --target-ms N \
                milliseconds per login, with the OWASP floor, the default, and what OpenSSL's \
                own PKCS5_PBKDF2_HMAC would afford.
                """),
    ]
}

/// What every command needs: the parsed options, the terminal, the message catalog.
struct CommandContext {
    let invocation: Invocation
    let terminal: Terminal
    let messages: Messages

    var file: String { invocation.positionals[0] }
    var user: String { invocation.positionals[1] }
    var storage: CredentialStore.Storage { invocation.plaintext ? .plaintext : .hashed }

    /// The store with the policy, backup setting and lock timeout the options ask for.
    func store() throws -> CredentialStore {
        var store = CredentialStore(path: file, policy: try invocation.policy(), keepsBackup: invocation.backup)
        if let lockTimeout = invocation.lockTimeout { store.lockTimeout = lockTimeout }
        return store
    }

    /// The store for a command that sets passwords: its password policy from the options.
    func passwordStore() throws -> CredentialStore {
        var store = try store()
        store.policy = try writingPolicy()
        store.passwordPolicy = try invocation.passwordPolicy()
        return store
    }

    /// The policy, warning on stderr when its rounds are below the minimum (for
    /// commands that write hashes).
    func writingPolicy() throws -> HashPolicy {
        let policy = try invocation.policy()
        if policy.isBelowMinimum && !invocation.plaintext {
            terminal.writeError("credfile: \(messages.weakIterations(policy.rounds, minimum: policy.minimumRounds))\n")
        }
        return policy
    }

    /// A password from a no-echo prompt on a terminal (asked twice when `new`), or
    /// one line of standard input; at most `PasswordRules.maximumCount` bytes either way.
    func readPassword(new: Bool, prompt: String? = nil) throws -> Password {
        let tooLong = CredFileError.usage(messages.passwordTooLong(PasswordRules.maximumCount))
        guard terminal.inputIsTerminal else {
            guard let line = try terminal.readLine(limit: PasswordRules.maximumCount, tooLong: tooLong) else {
                throw CredFileError.usage(messages.noPassword)
            }
            return Password(utf8: line)
        }
        let first = try terminal.readSecret(prompt ?? (new ? messages.newPasswordPrompt : messages.passwordPrompt), tooLong)
        let password = Password(utf8: first)
        if new {
            let again = Password(utf8: try terminal.readSecret(messages.repeatPasswordPrompt, tooLong))
            guard again.bytes == password.bytes else { throw CredFileError.usage(messages.passwordsDiffer) }
        }
        return password
    }

    func say(_ line: String) { terminal.write(line + "\n") }
}
