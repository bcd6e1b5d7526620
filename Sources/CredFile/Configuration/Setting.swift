/// One option of credfile: its name (the command line's long option without `--`, and
/// the configuration file's key, SPEC §5), what value it takes, and how it is shown.
///
/// This is the one table of options. The library owns the rows that are keys of the
/// configuration file (``keys``), because every reader of `/etc/credfile.conf` — the
/// command line and a ``CredentialStore`` user alike — must know every key to refuse an
/// unknown one. The command line adds the rows of its options that are not keys (`--help`,
/// `--json`, `--dry-run`, …) and reads `--help`, the man page, the completions and its
/// parser from both. A setting is compared by its name.
package struct Setting: Sendable, Hashable, CustomStringConvertible {
    /// How the command line spells a flag.
    public enum Spelling: Sendable, Equatable {
        /// `--name`; a flag given sets it to yes.
        case plain
        /// `--no-name`; a flag given sets it to no (its key takes `name = yes|no`).
        case negated
    }

    /// The long option without `--`, and the key in the configuration file.
    public let name: String
    /// What the value is, on the command line and in the file alike.
    public let kind: SettingKind
    /// The value in usage texts (`N`, `SECONDS`, `FILE`); nil for a flag, and for a choice
    /// (shown as its words).
    public let placeholderName: String?
    /// One line for `--help`, the man page and the completions, without the default.
    public let summary: String
    /// What applies when it is not set, as help shows it (`1200000`, `15`); nil: nothing said.
    public let defaultValue: String?
    /// Accepted by every command (SPEC §5), even where it changes nothing; otherwise by the
    /// commands whose row lists it.
    public let isCommon: Bool
    /// Each occurrence adds a value (`--blocklist A --blocklist B`; `blocklist` lines
    /// in one part of the file accumulate) instead of replacing it.
    public let isRepeatable: Bool
    /// Settable in the configuration file as `name = value`.
    public let isKey: Bool
    /// Left out of `--help`, the man page and the completions (packaging options).
    public let isHidden: Bool
    /// How the command line spells it when it is a flag.
    public let spelling: Spelling
    /// A one-letter spelling such as `-h`, if any.
    public let shortName: String?

    /// A row of the table.
    public init(
        _ name: String, _ kind: SettingKind, placeholder: String? = nil, summary: String,
        default defaultValue: String? = nil,
        common: Bool = false, repeatable: Bool = false, key: Bool = true, hidden: Bool = false,
        spelling: Spelling = .plain, shortName: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.placeholderName = placeholder
        self.summary = summary
        self.defaultValue = defaultValue
        self.isCommon = common
        self.isRepeatable = repeatable
        self.isKey = key
        self.isHidden = hidden
        self.spelling = spelling
        self.shortName = shortName
    }

    /// `--iterations`, or `--no-guard` for a negated flag.
    public var optionName: String { spelling == .negated ? "--no-\(name)" : "--\(name)" }

    /// The placeholder of its value (`N`, `sha256|sha512`); nil for a flag.
    public var placeholder: String? {
        switch kind {
        case .flag: nil
        case .choice(let words): placeholderName ?? words.joined(separator: "|")
        default: placeholderName ?? "VALUE"
        }
    }

    /// The summary with its default, as help shows it.
    public var helpLine: String { summary + (defaultValue.map { " (default \($0))" } ?? "") }

    /// The name.
    public var description: String { name }

    /// Equal when the names are.
    public static func == (a: Self, b: Self) -> Bool { a.name == b.name }
    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// What a ``Setting`` takes.
package enum SettingKind: Sendable, Equatable {
    /// No value on the command line; `yes`, `no`, `true` or `false` in the file.
    case flag
    /// A whole number within the range (decimal digits only).
    case wholeNumber(ClosedRange<Int>)
    /// Seconds within the range, decimals allowed (`0.5`), no sign or exponent.
    case seconds(ClosedRange<Double>)
    /// One of these words, exactly.
    case choice([String])
    /// A path (not empty).
    case path
    /// Any text (valid UTF-8, not empty).
    case text
    /// A file mode in octal (`0660`), at most `07777`.
    case fileMode
    /// A size in bytes within the range: decimal digits, optionally followed by `K`, `M`,
    /// `G` or `T` (or `KiB`, `MiB`, `GiB`, `TiB`), each 1,024 times the one before
    /// (``CostLimits/parseSize(_:)``).
    case size(ClosedRange<Int>)

    /// `a whole number from 1 to 50000000`: what follows "takes" in an error.
    public var expectation: String {
        switch self {
        case .flag: "yes, no, true or false"
        case .wholeNumber(let range): "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .seconds(let range):
            "seconds from \(Self.number(range.lowerBound)) to \(Self.number(range.upperBound)) (decimals allowed)"
        case .choice(let words):
            words.count > 1
                ? words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1] : words.first ?? ""
        case .path: "a file name"
        case .text: "a value"
        case .fileMode: "an octal file mode from 0000 to 7777"
        case .size(let range):
            "a size from \(CostLimits.formatSize(range.lowerBound)) to \(CostLimits.formatSize(range.upperBound)) "
                + "(bytes, or a number followed by K, M, G or T, powers of 1024)"
        }
    }

    /// `2`, or `0.001`: a bound as a person writes it.
    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The value `text` spells, or nil when it is not one of this kind.
    public func value(of text: String) -> SettingValue? {
        func digits(_ part: Substring) -> Bool { !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        switch self {
        case .flag:
            switch text {
            case "yes", "true": return .flag(true)
            case "no", "false": return .flag(false)
            default: return nil
            }
        case .wholeNumber(let range):
            guard digits(text[...]), let n = Int(text), range.contains(n) else { return nil }
            return .number(n)
        case .seconds(let range):
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count <= 2, parts.allSatisfy(digits), let seconds = Double(text), range.contains(seconds) else {
                return nil
            }
            return .seconds(seconds)
        case .choice(let words):
            return words.contains(text) ? .text(text) : nil
        case .path, .text:
            return text.isEmpty ? nil : .text(text)
        case .fileMode:
            guard text.utf8.count <= 5, !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x37).contains($0) }),
                let mode = Int(text, radix: 8), mode <= 0o7777
            else { return nil }
            return .number(mode)
        case .size(let range):
            guard let bytes = CostLimits.parseSize(text), range.contains(bytes) else { return nil }
            return .number(bytes)
        }
    }
}

/// A setting's value, checked against its ``SettingKind``.
package enum SettingValue: Sendable, Equatable {
    /// A flag: yes or no.
    case flag(Bool)
    /// A whole number (or a file mode).
    case number(Int)
    /// Seconds.
    case seconds(Double)
    /// A choice, a path or text.
    case text(String)
}

extension Setting {
    // MARK: The keys the library reads (SPEC §3, §4, §8)

    /// `--iterations N`.
    public static let iterations = Setting(
        "iterations", .wholeNumber(HashPolicy.roundsRange), placeholder: "N",
        summary:
            "PBKDF2 rounds for new hashes, the work of every verify and the bar for upgrade-on-login; below \(HashPolicy.defaultMinimumRounds) warns",
        default: "\(HashPolicy.defaultRounds)", common: true)
    /// `--algorithm sha256|sha512|argon2id`.
    public static let algorithm = Setting(
        "algorithm", .choice(HashPolicy.Algorithm.allCases.map(\.rawValue)),
        summary: "algorithm of new hashes: PBKDF2-HMAC-SHA256 or -SHA512, or argon2id",
        default: HashPolicy.Algorithm.sha256.rawValue, common: true)
    /// `--memory KIB` (argon2id, SPEC §3.1).
    public static let memory = Setting(
        "memory", .wholeNumber(8...Argon2Parameters.maximumMemoryKiB), placeholder: "KIB",
        summary: "argon2id memory of new hashes in KiB, at least 8 per lane",
        default: "\(Argon2Parameters.owasp.memoryKiB)",
        common: true)
    /// `--time N` (argon2id passes).
    public static let time = Setting(
        "time", .wholeNumber(Argon2Parameters.timeRange), placeholder: "N", summary: "argon2id passes of new hashes",
        default: "\(Argon2Parameters.owasp.time)", common: true)
    /// `--lanes N` (argon2id parallelism).
    public static let lanes = Setting(
        "lanes", .wholeNumber(Argon2Parameters.lanesRange), placeholder: "N", summary: "argon2id lanes of new hashes",
        default: "\(Argon2Parameters.owasp.lanes)", common: true)
    /// `--lock-timeout SECONDS` (SPEC §4).
    public static let lockTimeout = Setting(
        "lock-timeout", .seconds(0...86_400), placeholder: "SECONDS",
        summary: "wait at most SECONDS (0 to 86400, decimals allowed) for the file's lock, then exit 5",
        default: "15", common: true)
    /// `--min-length N` (SPEC §8).
    public static let minimumLength = Setting(
        "min-length", .wholeNumber(PasswordPolicy.minimumLengthRange), placeholder: "N",
        summary: "new passwords need at least N characters; below \(PasswordPolicy.secondFactorMinimumLength) warns",
        default: "\(PasswordPolicy.defaultMinimumLength)", common: true)
    /// `--max-work SECONDS` (SPEC §3.1): the CPU one login may cost.
    public static let maximumWork = Setting(
        "max-work", .seconds(CostLimits.workSecondsRange), placeholder: "SECONDS",
        summary:
            "an entry whose login would cost more SECONDS of CPU than this is malformed (too costly) and never verified",
        default: "2 or 16 × the policy's hash, whichever is more", common: true)
    /// `--max-memory SIZE` (SPEC §3.1): the memory one login may allocate.
    public static let maximumMemory = Setting(
        "max-memory", .size(CostLimits.memoryRange), placeholder: "SIZE",
        summary:
            "an entry whose login would allocate more than SIZE (256M, 1G: powers of 1024) is malformed (too costly)",
        default: CostLimits.formatSize(CostLimits.defaultMaximumMemory), common: true)
    /// `--blocklist FILE` (SPEC §8), repeatable.
    public static let blocklist = Setting(
        "blocklist", .path, placeholder: "FILE",
        summary:
            "also refuse new passwords listed in FILE (one a line, or a sorted SHA1HEX[:count] list); may be repeated",
        common: true, repeatable: true)

    // MARK: The keys of the command line's own options

    /// `add`/`passwd`/`import --plaintext`.
    public static let plaintext = Setting(
        "plaintext", .flag, summary: "store the legacy plaintext form instead of a hash")
    /// `verify`/`login`/`pam --upgrade`.
    public static let upgrade = Setting(
        "upgrade", .flag, summary: "rehash a plaintext or weaker entry after a successful login")
    /// `--backup`.
    public static let backup = Setting("backup", .flag, summary: "keep the previous version as FILE.bak")
    /// `--jobs N`.
    public static let jobs = Setting(
        "jobs", .wholeNumber(1...1024), placeholder: "N", summary: "hash (or answer, for helper) on N threads",
        default: "all cores")
    /// `check --passwords`.
    public static let passwords = Setting(
        "passwords", .flag, summary: "also report plaintext entries that are on a blocklist")
    /// `export --base-dn DN`.
    public static let baseDN = Setting(
        "base-dn", .text, placeholder: "DN", summary: "the LDAP base under which each uid=USER entry is placed",
        default: LDIFExport.defaultBaseDN)
    /// `export --skip-unexportable`.
    public static let skipUnexportable = Setting(
        "skip-unexportable", .flag, summary: "report and skip entries no directory can verify, instead of exiting 4")
    /// `calibrate --target-ms N`.
    public static let targetMilliseconds = Setting(
        "target-ms", .wholeNumber(1...600_000), placeholder: "N", summary: "the time per login to fit, in milliseconds",
        default: "250")

    // MARK: The keys of `serve` (SPEC §10)

    /// `serve --listen ADDRESS`, repeatable.
    public static let listen = Setting(
        "listen", .text, placeholder: "ADDRESS",
        summary:
            "answer on unix:PATH, HOST:PORT or [IPv6]:PORT (loopback unless --listen-public); may be repeated; without it, on the sockets systemd passes",
        repeatable: true)
    /// `serve --socket-mode MODE`.
    public static let socketMode = Setting(
        "socket-mode", .fileMode, placeholder: "MODE", summary: "the mode of a unix socket that serve makes",
        default: "0660")
    /// `serve --socket-group GROUP`.
    public static let socketGroup = Setting(
        "socket-group", .text, placeholder: "GROUP",
        summary: "the group of a unix socket that serve makes (a name or a number), such as www-data for nginx")
    /// `serve --listen-public`.
    public static let listenPublic = Setting(
        "listen-public", .flag, summary: "allow --listen on a TCP address that is not loopback")
    /// `serve --metrics-listen ADDRESS` (SPEC §16): where `GET /metrics` is answered.
    public static let metricsListen = Setting(
        "metrics-listen", .text, placeholder: "ADDRESS",
        summary:
            "answer GET /metrics (Prometheus) on HOST:PORT or unix:PATH (loopback unless --listen-public); off by default"
    )
    /// `serve --realm TEXT`.
    public static let realm = Setting(
        "realm", .text, placeholder: "TEXT", summary: "the realm of the Basic challenge of a 401", default: "credfile")
    /// `serve --cache-seconds N`.
    public static let cacheSeconds = Setting(
        "cache-seconds", .wholeNumber(0...86_400), placeholder: "N",
        summary: "answer a good login again for N seconds without a new hash (0: no cache)", default: "300")
    /// `serve --trusted-proxy CIDR`, repeatable.
    public static let trustedProxy = Setting(
        "trusted-proxy", .text, placeholder: "CIDR",
        summary:
            "also believe X-Real-IP and X-Forwarded-For from peers in CIDR (unix sockets always; loopback only when named); may be repeated",
        repeatable: true)

    // MARK: The keys of `serve`'s sign-in page (SPEC §11)

    /// `serve --portal`, `portal = yes`.
    public static let portal = Setting(
        "portal", .flag, summary: "also serve the sign-in page and its sessions under --portal-path")
    /// `serve --no-basic`, `basic = no`.
    public static let basic = Setting(
        "basic", .flag, summary: "with --portal, do not accept Authorization: Basic beside sessions (basic = no)",
        spelling: .negated)
    /// `serve --portal-path PATH`.
    public static let portalPath = Setting(
        "portal-path", .text, placeholder: "PATH", summary: "the prefix of the sign-in page's paths",
        default: "/.credfile")
    /// `serve --cookie-domain DOMAIN`.
    public static let cookieDomain = Setting(
        "cookie-domain", .text, placeholder: "DOMAIN",
        summary: "one sign-in for every host under DOMAIN (__Secure-credfile with Domain=DOMAIN)")
    /// `serve --session-idle SECONDS`.
    public static let sessionIdle = Setting(
        "session-idle", .wholeNumber(1...SessionLimits.longestLifetime), placeholder: "SECONDS",
        summary: "seconds without a request after which a session ends", default: "3600")
    /// `serve --session-max SECONDS` (at most 30 days).
    public static let sessionMax = Setting(
        "session-max", .wholeNumber(1...SessionLimits.longestLifetime), placeholder: "SECONDS",
        summary: "seconds after sign-in after which a session ends, at most 30 days", default: "86400")
    /// `serve --session-limit N`.
    public static let sessionLimit = Setting(
        "session-limit", .wholeNumber(1...SessionLimits.largestPerUser), placeholder: "N",
        summary: "sessions one user may hold; a new one ends the oldest", default: "16")
    /// `serve --portal-title TEXT`.
    public static let portalTitle = Setting(
        "portal-title", .text, placeholder: "TEXT", summary: "the site's name on the sign-in page")
    /// `serve --portal-stylesheet FILE`.
    public static let portalStylesheet = Setting(
        "portal-stylesheet", .path, placeholder: "FILE", summary: "a stylesheet served instead of the built-in one")
    /// `serve --lang auto|es|en`.
    public static let lang = Setting(
        "lang", .choice(["auto", "es", "en"]), summary: "the pages' language (auto: from Accept-Language)",
        default: "auto")

    /// `serve --address-free-failures N`.
    public static let addressFreeFailures = Setting(
        "address-free-failures", .wholeNumber(1...100_000), placeholder: "N",
        summary:
            "consecutive failed sign-ins from one client address that cost nothing more; then the guard's doubling delay (never a lockout)",
        default: "\(AddressThrottle.defaultFreeFailures)")

    // MARK: Registration (SPEC §12)

    /// `serve --register no|invite|yes`.
    public static let register = Setting(
        "register", .choice(["no", "invite", "yes"]),
        summary: "with --portal, let people register at PATH/register: no, with an invitation code, or yes",
        default: "no")
    /// `serve --register-per-hour N`.
    public static let registerPerHour = Setting(
        "register-per-hour", .wholeNumber(0...1_000_000), placeholder: "N",
        summary: "registrations one client address may make in any hour",
        default: "\(RegistrationLimits.defaultPerAddress)")
    /// `serve --register-per-hour-total N`.
    public static let registerPerHourTotal = Setting(
        "register-per-hour-total", .wholeNumber(0...1_000_000), placeholder: "N",
        summary: "registrations everyone together may make in any hour", default: "\(RegistrationLimits.defaultTotal)")

    /// The keys of the sign-in page, which `serve` reads.
    public static let portalKeys: [Setting] = [
        portal, basic, portalPath, cookieDomain, sessionIdle, sessionMax, sessionLimit, portalTitle, portalStylesheet,
        lang, addressFreeFailures, register, registerPerHour, registerPerHourTotal,
    ]

    // MARK: The guard of logins (SPEC §9)

    /// `--state FILE`: the guard database.
    public static let state = Setting(
        "state", .path, placeholder: "FILE",
        summary: "the guard database of FILE's logins (a caller that may not write beside FILE needs one of its own)",
        default: "FILE.guard.db beside FILE")
    /// `--no-guard`, `guard = no`: logins unguarded (logged).
    public static let `guard` = Setting(
        "guard", .flag,
        summary: "do not guard logins: no throttling, lockout or failure counts (guard = no; the log says so)",
        spelling: .negated)
    /// `--free-failures N`.
    public static let freeFailures = Setting(
        "free-failures", .wholeNumber(GuardPolicy.freeFailuresRange), placeholder: "N",
        summary:
            "consecutive failures of a name that cost nothing more; after them the next attempt waits 1 s, doubling",
        default: "\(GuardPolicy.defaultFreeFailures)")
    /// `--max-failures N` (NIST SP 800-63B-4: at most 100).
    public static let maxFailures = Setting(
        "max-failures", .wholeNumber(GuardPolicy.maximumFailuresRange), placeholder: "N",
        summary:
            "consecutive failures that lock a name out, at most 100 (until its failures are reset or it is unlocked)",
        default: "\(GuardPolicy.defaultMaximumFailures)")
    /// `--max-delay SECONDS`.
    public static let maxDelay = Setting(
        "max-delay", .seconds(GuardPolicy.maximumDelayRange), placeholder: "SECONDS",
        summary: "the longest wait between two checks of a failing name, in seconds",
        default: "\(Int(GuardPolicy.defaultMaximumDelay))")
    /// `--log syslog|stderr|none`.
    public static let log = Setting(
        "log", .choice(GuardLog.allCases.map(\.rawValue)),
        summary: "where login decisions are logged (syslog: facility authpriv, ident credfile)",
        default: GuardLog.syslog.rawValue)

    // MARK: Groups and access rules (SPEC §13)

    /// `groups = GROUPFILE`: the Apache-format group file.
    public static let groups = Setting(
        "groups", .path, placeholder: "GROUPFILE",
        summary: "the group file, in Apache's mod_authz_groupfile format (group: user user …)")
    /// `rules = RULESFILE`: the access rules.
    public static let rules = Setting(
        "rules", .path, placeholder: "RULESFILE",
        summary: "the access rules, one a line, first match decides (without it every signed-in user is allowed)")

    // MARK: The second factor (SPEC §14)

    /// `--otp-file FILE`: the TOTP secrets in liboath's users-file format.
    public static let otpFile = Setting(
        "otp-file", .path, placeholder: "FILE",
        summary: "the one-time-code secrets of FILE's users (liboath's users.oath format, mode 0600)",
        default: "FILE.oath beside FILE")
    /// `--otp-append`, `otp-append = yes`: the code typed right after the password.
    public static let otpAppend = Setting(
        "otp-append", .flag,
        summary:
            "read the last 6 digits of the password as the one-time code of a user with a second factor (Basic, pam, checkpassword, Squid); without it such a user is denied there"
    )
    /// `passkey-file = FILE`: the passkeys (WebAuthn credentials) of FILE's users.
    public static let passkeyFile = Setting(
        "passkey-file", .path, placeholder: "FILE",
        summary: "the passkeys (WebAuthn credentials) of FILE's users (mode 0600)", default: "FILE.passkeys beside FILE"
    )
    /// `webauthn-origin = https://HOST[:PORT]`: the origin passkeys are signed for.
    public static let webauthnOrigin = Setting(
        "webauthn-origin", .text, placeholder: "ORIGIN",
        summary:
            "the origin browsers sign passkey requests for (https://HOST[:PORT]); the portal offers passkeys only with it"
    )
    /// `webauthn-rp-id = DOMAIN`: the passkeys' relying party id.
    public static let webauthnRPID = Setting(
        "webauthn-rp-id", .text, placeholder: "DOMAIN",
        summary: "the passkeys' relying party id: webauthn-origin's host or a domain it ends with",
        default: "webauthn-origin's host")
    /// The keys of the passkeys (SPEC §14), which `serve` and `passkeys` read.
    public static let passkeyKeys: [Setting] = [passkeyFile, webauthnOrigin, webauthnRPID]

    /// The keys of the second factor, which every login check reads.
    public static let secondFactorKeys: [Setting] = [otpFile, otpAppend]

    /// The keys of the guard, which every login check and the guard's own commands read,
    /// and the second factor's (§14), which every login check reads.
    public static let guardKeys: [Setting] =
        [state, `guard`, freeFailures, maxFailures, maxDelay, log] + secondFactorKeys

    /// Every key of the configuration file, in the order help lists them. Add a key here
    /// (one row) and every reader of the file knows it.
    public static let keys: [Setting] =
        [
            iterations, algorithm, memory, time, lanes, maximumWork, maximumMemory, lockTimeout, minimumLength,
            blocklist,
            plaintext, upgrade, backup, jobs, passwords, baseDN, skipUnexportable, targetMilliseconds,
            listen, socketMode, socketGroup, listenPublic, metricsListen, realm, cacheSeconds, trustedProxy,
        ] + portalKeys + guardKeys + [groups, rules] + passkeyKeys
}
