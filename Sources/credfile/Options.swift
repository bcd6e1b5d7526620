import CredFile

// The options of the command line: the library's table of configuration keys
// (`Setting.keys`, CredFile/Configuration/Setting.swift) plus the rows below, of the
// options that are not keys. The parser, `--help`, the man page and the completions
// read `Setting.options`; each option's value reaches its command through one accessor
// of `Invocation`.
//
// Not keys: the options about this one run rather than a setting of the site — what
// it prints (`--json`), what its standard input holds (`--hashed`, `--from`), what it
// speaks (`--to`, `--protocol`), whether it writes (`--dry-run`) — and the meta options
// (`--help`, `--version`, `--config`, the packaging ones).

extension Setting {
    /// `--json`.
    static let json = Setting(
        "json", .flag, summary: "JSON output (list, check, upgrade, export, calibrate)", common: true, key: false)
    /// `--help`, `-h`.
    static let help = Setting(
        "help", .flag, summary: "show help (for a command after its name) and exit", common: true, key: false,
        shortName: "-h")
    /// `--version`.
    static let version = Setting("version", .flag, summary: "show the version and exit", common: true, key: false)
    /// `--config FILE` (SPEC §5).
    static let config = Setting(
        "config", .path, placeholder: "FILE",
        summary: "read the configuration from FILE (also CREDFILE_CONFIG); a missing FILE is an error",
        default: CredFileConfiguration.defaultPath, common: true, key: false)
    /// `upgrade --dry-run`.
    static let dryRun = Setting("dry-run", .flag, summary: "say what would be done; write nothing", key: false)
    /// `import --existing` (SPEC §5).
    static let existing = Setting(
        "existing", .flag,
        summary:
            "the passwords on stdin are already in use (a legacy list): store them without the rules for new passwords",
        key: false)
    /// `import --hashed`.
    static let hashed = Setting(
        "hashed", .flag, summary: "the secrets on stdin are hashes (SPEC §3), stored byte for byte, like chpasswd -e",
        key: false)
    /// `import --from FORMAT`.
    static let from = Setting(
        "from", .choice(ImportFormat.allCases.filter { $0 != .hashed }.map(\.rawValue)),
        summary: "read a peer's file on stdin in that format", key: false)
    /// `export --to FORMAT`.
    static let to = Setting(
        "to", .choice(ExportFormat.allCases.map(\.rawValue)), summary: "the output format", key: false)
    /// `failures --reset`.
    static let reset = Setting("reset", .flag, summary: "clear the failures of USER, or of every name", key: false)
    /// `sessions --end`.
    static let end = Setting("end", .flag, summary: "end the web sessions of USER, or every session", key: false)
    /// `state --init` (SPEC §15).
    static let initialize = Setting(
        "init", .flag, summary: "create the state database's tables, or bring them to this version", key: false)
    /// `otp --enroll` (SPEC §14).
    static let enroll = Setting(
        "enroll", .flag, summary: "print a new TOTP secret's otpauth:// URI; save it after one good code", key: false)
    /// `otp --remove`.
    static let remove = Setting("remove", .flag, summary: "remove USER's TOTP second factor", key: false)
    /// `otp --issuer TEXT`.
    static let issuer = Setting(
        "issuer", .text, placeholder: "TEXT", summary: "the issuer an authenticator app shows", default: "credfile",
        key: false)
    /// `helper --protocol NAME`.
    static let `protocol` = Setting(
        "protocol", .choice(HelperProtocol.allCases.map(\.rawValue)),
        summary: "the helper protocol to speak on stdin and stdout",
        key: false)
    /// `access --url URL` (SPEC §13).
    static let url = Setting(
        "url", .text, placeholder: "URL", summary: "the request's URL (https://host/path?query)", key: false)
    /// `access --user NAME`: who is signed in (none: an anonymous request); `invite --user
    /// NAME`: the only name the new invitations let register.
    static let accessUser = Setting(
        "user", .text, placeholder: "NAME",
        summary: "access: the signed-in user of the request (none: anonymous); invite: the only name the codes admit",
        key: false)
    /// `pam|checkpassword|helper --group NAME` (SPEC §13): only members of the group (in
    /// `groups = GROUPFILE`) log in.
    static let group = Setting(
        "group", .text, placeholder: "NAME", summary: "log in only members of this group of the group file (--groups)",
        key: false)
    /// `access --address IP`: the client's address.
    static let address = Setting("address", .text, placeholder: "IP", summary: "the client's address", key: false)
    /// `access --method M`.
    static let method = Setting(
        "method", .text, placeholder: "M", summary: "the request's method", default: "GET", key: false)
    // Hidden: for packaging (CONTRIBUTING.md), not in --help, the man page or completions.
    static let generateMan = Setting(
        "generate-man", .flag, summary: "print the man page (roff)", common: true, key: false, hidden: true)
    static let generateCompletion = Setting(
        "generate-completion", .choice(Shell.allCases.map(\.rawValue)),
        summary: "print the completion script for the shell",
        common: true, key: false, hidden: true)

    /// `invite --count N` (SPEC §12).
    static let count = Setting(
        "count", .wholeNumber(1...Registrations.largestCount), placeholder: "N",
        summary: "how many invitation codes to make", default: "1", key: false)
    /// `invite --expires DURATION`.
    static let expires = Setting(
        "expires", .text, placeholder: "DURATION",
        summary: "how long new invitation codes work: seconds, or a number with s, m, h, d or w", default: "7d",
        key: false)
    /// `invite --list`.
    static let listInvitations = Setting(
        "list", .flag, summary: "list the invitations (ids, expiry, bound name; never a code)", key: false)
    /// `invite --revoke ID|all`.
    static let revoke = Setting(
        "revoke", .text, placeholder: "ID|all", summary: "revoke one invitation, or all", key: false)

    /// Every option of the command line, in the order help lists them.
    static let options: [Setting] =
        keys + [
            json, help, version, config, dryRun, existing, hashed, from, to, reset, end, initialize, enroll, remove,
            issuer, `protocol`, url, accessUser, group, address, method, count, expires, listInvitations, revoke,
            generateMan, generateCompletion,
        ]

    /// The option spelled `spelling` (`--json`, `-h`, `--no-guard`), if any.
    static func option(spelled spelling: String) -> Setting? {
        options.first { $0.optionName == spelling || $0.shortName == spelling }
    }

    /// The options shown to people: every option but the hidden ones.
    static var visible: [Setting] { options.filter { !$0.isHidden } }
    /// The visible common options, in table order.
    static var common: [Setting] { visible.filter(\.isCommon) }
    /// The visible command-specific options, in table order.
    static var specific: [Setting] { visible.filter { !$0.isCommon } }

    /// `--algorithm sha256|sha512`
    var usage: String { [optionName, placeholder].compactMap { $0 }.joined(separator: " ") }

    /// The commands that accept this (command-specific) option.
    var commands: [Command] { Command.allCases.filter { $0.options.contains(self) } }
}

/// The formats of `export --to`.
enum ExportFormat: String, CaseIterable { case ldif }
/// The protocols of `helper --protocol`.
enum HelperProtocol: String, CaseIterable { case squid }
/// The shells `--generate-completion` writes for.
enum Shell: String, CaseIterable { case bash, zsh, fish }

/// The parsed command line: a command, its positional arguments, and each option's
/// values — from the command line, then, for what it left unset, from the configuration
/// file (`CredFileCLI.configure`). Commands read an option through its accessor below.
struct Invocation {
    var command: Command?
    /// FILE and USER, checked to be valid UTF-8 (FILE also not empty).
    var positionals: [String] = []
    /// `checkpassword`'s PROG and its ARGs, byte for byte.
    var programArguments: [[UInt8]] = []
    /// The values of each option, by name, already checked against its kind.
    var values: [String: [SettingValue]] = [:]
    /// The options given on the command line, to refuse those that do not apply to the
    /// command (the file's are ignored there instead).
    var given: [Setting] = []

    /// Records an option given on the command line.
    mutating func set(_ option: Setting, _ value: SettingValue) {
        given.append(option)
        values[option.name] = (option.isRepeatable ? values[option.name] ?? [] : []) + [value]
    }

    // MARK: Reading a value

    func flag(_ option: Setting, default otherwise: Bool = false) -> Bool {
        if case .flag(let on)? = values[option.name]?.last { on } else { otherwise }
    }
    func number(_ option: Setting) -> Int? {
        if case .number(let n)? = values[option.name]?.last { n } else { nil }
    }
    func seconds(_ option: Setting) -> Double? {
        if case .seconds(let s)? = values[option.name]?.last { s } else { nil }
    }
    func text(_ option: Setting) -> String? { texts(option).last }
    func texts(_ option: Setting) -> [String] {
        (values[option.name] ?? []).compactMap { if case .text(let t) = $0 { t } else { nil } }
    }

    // MARK: The options, one accessor each

    var iterations: Int? { number(.iterations) }
    /// `--max-work SECONDS` (SPEC §3.1); nil keeps the default.
    var maximumWork: Double? { seconds(.maximumWork) }
    /// `--max-memory SIZE` in bytes (SPEC §3.1); nil keeps the default.
    var maximumMemory: Int? { number(.maximumMemory) }
    var algorithm: HashPolicy.Algorithm { text(.algorithm).flatMap(HashPolicy.Algorithm.init) ?? .sha256 }
    /// `--lock-timeout SECONDS`; nil keeps `CredentialStore`'s default.
    var lockTimeout: Double? { seconds(.lockTimeout) }
    /// `--min-length N` (SPEC §8).
    var minimumLength: Int? { number(.minimumLength) }
    /// `--blocklist FILE` (repeatable): lists new passwords must not be on, besides the built-in one.
    var blocklists: [String] { texts(.blocklist) }
    var plaintext: Bool { flag(.plaintext) }
    var upgrade: Bool { flag(.upgrade) }
    var backup: Bool { flag(.backup) }
    var jobs: Int? { number(.jobs) }
    /// `check --passwords`: also report plaintext entries that are on a blocklist.
    var checkPasswords: Bool { flag(.passwords) }
    var baseDN: String? { text(.baseDN) }
    var skipUnexportable: Bool { flag(.skipUnexportable) }
    var targetMilliseconds: Int? { number(.targetMilliseconds) }
    var json: Bool { flag(.json) }
    var help: Bool { flag(.help) }
    var version: Bool { flag(.version) }
    /// `--config FILE`.
    var configPath: String? { text(.config) }
    var dryRun: Bool { flag(.dryRun) }
    /// `failures --reset`.
    var reset: Bool { flag(.reset) }
    /// `sessions --end`.
    var end: Bool { flag(.end) }
    /// `otp --enroll`, `--remove`, `--issuer TEXT`.
    var enroll: Bool { flag(.enroll) }
    var remove: Bool { flag(.remove) }
    var issuer: String { text(.issuer) ?? "credfile" }
    var hashed: Bool { flag(.hashed) }
    /// `import --existing`: passwords already in use, not judged by SPEC §8.
    var existing: Bool { flag(.existing) }
    /// `import --from FORMAT`.
    var importFormat: ImportFormat? { text(.from).flatMap(ImportFormat.init) }
    /// `export --to FORMAT`.
    var exportTarget: ExportFormat? { text(.to).flatMap(ExportFormat.init) }
    /// The `--to` format as the export command compares it.
    var exportFormat: String? { text(.to) }
    /// `helper --protocol NAME`.
    var helperProtocol: HelperProtocol? { text(.protocol).flatMap(HelperProtocol.init) }
    /// The `--protocol` name as the helper command compares it.
    var protocolName: String? { text(.protocol) }
    /// `--state FILE`: the guard database (SPEC §9); nil for `FILE.guard.db` beside FILE.
    var state: String? { text(.state) }
    /// `--otp-file FILE` (SPEC §14).
    var otpFile: String? { text(.otpFile) }
    /// `passkey-file FILE` (SPEC §14).
    var passkeyFile: String? { text(.passkeyFile) }
    /// `webauthn-origin ORIGIN`.
    var webauthnOrigin: String? { text(.webauthnOrigin) }
    /// `webauthn-rp-id DOMAIN`.
    var webauthnRPID: String? { text(.webauthnRPID) }
    /// `--otp-append`, `otp-append = yes`.
    var otpAppend: Bool { flag(.otpAppend, default: false) }
    /// Whether logins are guarded: yes unless `--no-guard` or `guard = no`.
    var guardsLogins: Bool { flag(.guard, default: true) }
    /// `--log syslog|stderr|none`.
    var log: GuardLog { text(.log).flatMap(GuardLog.init) ?? .syslog }
    var generateMan: Bool { flag(.generateMan) }
    var generateCompletion: Shell? { text(.generateCompletion).flatMap(Shell.init) }
    /// `serve --listen ADDRESS` (repeatable).
    var listen: [String] { texts(.listen) }
    /// `serve --socket-mode MODE`.
    var socketMode: Int? { number(.socketMode) }
    /// `serve --socket-group GROUP`.
    var socketGroup: String? { text(.socketGroup) }
    var listenPublic: Bool { flag(.listenPublic) }
    /// `serve --metrics-listen ADDRESS` (SPEC §16).
    var metricsListen: String? { text(.metricsListen) }
    /// `serve --realm TEXT`.
    var realm: String? { text(.realm) }
    /// `serve --cache-seconds N`.
    var cacheSeconds: Int? { number(.cacheSeconds) }
    /// `serve --trusted-proxy CIDR` (repeatable).
    var trustedProxies: [String] { texts(.trustedProxy) }
    /// `serve --portal` (SPEC §11).
    var portal: Bool { flag(.portal) }
    /// Whether `serve --portal` also accepts Basic: yes unless `--no-basic` or `basic = no`.
    var basic: Bool { flag(.basic, default: true) }

    /// `access --url URL`.
    var url: String? { text(.url) }
    /// `access --user NAME`.
    var accessUser: String? { text(.accessUser) }
    /// `invite --count N`, `--expires DURATION`, `--list`, `--revoke ID|all` (SPEC §12).
    var inviteCount: Int { number(.count) ?? 1 }
    var inviteExpires: String? { text(.expires) }
    var listInvitations: Bool { flag(.listInvitations) }
    var revoke: String? { text(.revoke) }
    /// `access --address IP`.
    var address: String? { text(.address) }
    /// `access --method M`.
    var method: String { text(.method) ?? "GET" }
    /// `--groups GROUPFILE` (`groups = GROUPFILE`).
    var groups: String? { text(.groups) }

    /// The password policy the options describe (SPEC §8); blocklist files are opened here.
    /// - Throws: a usage error naming `--blocklist` for a file that cannot be a blocklist
    ///   (not a regular file).
    func passwordPolicy() throws -> PasswordPolicy {
        let files = try blocklists.map { path in
            do {
                return try Blocklist(path: path)
            } catch let error as CredFileError where error.code == .usage {
                throw CredFileError.usage(
                    "option --\(Setting.blocklist.name) (or \(Setting.blocklist.name) = FILE): \(error.message)")
            }
        }
        return try PasswordPolicy(
            minimumLength: minimumLength ?? PasswordPolicy.defaultMinimumLength, blocklists: [.builtIn] + files)
    }

    /// The guard's limits the options describe (SPEC §9).
    func guardPolicy() throws -> GuardPolicy {
        try GuardPolicy(
            freeFailures: number(.freeFailures) ?? GuardPolicy.defaultFreeFailures,
            maximumFailures: number(.maxFailures) ?? GuardPolicy.defaultMaximumFailures,
            maximumDelay: seconds(.maxDelay) ?? GuardPolicy.defaultMaximumDelay)
    }

    /// The policy the options describe.
    func policy() throws -> HashPolicy { try HashPolicy(reading: { values[$0.name]?.last }) }
}
