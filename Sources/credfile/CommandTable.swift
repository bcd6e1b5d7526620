import CredFile

// The one command table (SPEC §5): every command with its arguments, its own options,
// what it does and the method that runs it. The parser, the validation, `--help`, the
// man page and the shell completions are all read from here and from the option table
// (`Setting.options`, Options.swift), so none of them can drift from what the code
// accepts. Adding a command is one row below plus one method on `CommandContext`.

/// A subcommand of `credfile`: one row of the table.
struct Command: Sendable, Hashable, CustomStringConvertible {
    /// Its name on the command line (`add`).
    let name: String
    let arguments: [ArgumentSpec]
    /// The command-specific options it accepts (the common ones are accepted everywhere).
    let options: [Setting]
    /// Options it cannot run without.
    let required: [Setting]
    /// One line for the overview and the completions.
    let summary: String
    /// A paragraph for `credfile COMMAND --help` and the man page.
    let details: String
    /// Runs the command; errors are turned into exit statuses by the caller.
    let run: @Sendable (CommandContext) throws -> ExitStatus

    init(
        _ name: String, arguments: [ArgumentSpec], options: [Setting], required: [Setting] = [], summary: String,
        details: String,
        run: @escaping @Sendable (CommandContext) throws -> ExitStatus
    ) {
        self.name = name
        self.arguments = arguments
        self.options = options
        self.required = required
        self.summary = summary
        self.details = details
        self.run = run
    }

    /// The command named `name`, if any.
    init?(named name: String) {
        guard let command = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = command
    }

    /// The positional arguments as a usage line spells them (`FILE`, `USER`, `PROG`, `[ARG…]`).
    var argumentNames: [String] { arguments.map(\.display) }

    /// Whether FILE is its first argument (so the configuration's `[FILE]` section applies).
    var takesFile: Bool { arguments.first?.kind == .file }

    /// Accepts `option`: a common one, or one its row lists.
    func accepts(_ option: Setting) -> Bool { option.isCommon || options.contains(option) }

    var description: String { name }
    static func == (a: Self, b: Self) -> Bool { a.name == b.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// A positional argument of a command.
struct ArgumentSpec: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        /// A credential file: valid UTF-8, not empty.
        case file
        /// A username: valid UTF-8 (the library judges the rest).
        case user
        /// A username that may be left out (`failures FILE [USER]`).
        case optionalUser
        /// The program `checkpassword` runs on success; it and everything after it are
        /// passed on byte for byte.
        case program
        /// Any number of arguments for the program.
        case programArguments
    }
    var name: String
    var kind: Kind

    /// How usage lines spell it.
    var display: String {
        switch kind {
        case .programArguments: "[\(name)…]"
        case .optionalUser: "[\(name)]"
        default: name
        }
    }

    static let file = ArgumentSpec(name: "FILE", kind: .file)
    static let user = ArgumentSpec(name: "USER", kind: .user)
    static let optionalUser = ArgumentSpec(name: "USER", kind: .optionalUser)
}

extension Command {
    /// The table itself, in the order help lists the commands.
    static let allCases: [Command] = [
        Command(
            "add", arguments: [.file, .user], options: [.plaintext, .backup],
            summary: "register a user (hashed; --plaintext for the legacy form)",
            details: """
                Registers USER with a new password (asked twice on a terminal, else one line of \
                standard input). Stored as a salted hash of the policy's algorithm (PBKDF2 or \
                argon2id), or as legacy plaintext with --plaintext. Creates FILE (mode 0600) when missing. Exit 3 when USER already has an entry.
                """,
            run: { try $0.add() }),
        Command(
            "verify", arguments: [.file, .user], options: [.upgrade, .backup] + Setting.guardKeys,
            summary: "log in: exit 0 when granted, 1 when denied",
            details: """
                Checks USER's password (one line of standard input, or a no-echo prompt). Exit 0 \
                when granted, 1 when denied, with the same message and time for an unknown user \
                as for a wrong password. --upgrade rehashes a plaintext or weaker entry after a \
                successful login. Guarded (SPEC §9): after --free-failures failures of a name the \
                next attempt waits, and after --max-failures the name is locked out; each decision \
                is logged.
                """,
            run: { try $0.verify() }),
        Command(
            "passwd", arguments: [.file, .user], options: [.plaintext, .backup, .otpFile],
            summary: "change a password",
            details: "Changes USER's password in place, keeping every other line. Exit 3 when USER has no entry.",
            run: { try $0.passwd() }),
        Command(
            "delete", arguments: [.file, .user], options: [.backup],
            summary: "remove every entry of a user",
            details: "Removes every entry of USER, shadowed duplicates included. Exit 3 when USER has no entry.",
            run: { try $0.delete() }),
        Command(
            "import", arguments: [.file], options: [.plaintext, .backup, .jobs, .existing, .hashed, .from],
            summary: "add or update many users from user,password lines on stdin",
            details: """
                Adds or updates the users of `user,password` lines on standard input (like \
                chpasswd), in one rewrite: one bad line and nothing is written. --hashed takes \
                `user,secret` lines whose secrets are hashes and stores them byte for byte (like \
                chpasswd -e). --from FORMAT reads a peer's file: htpasswd (user:secret), mosquitto \
                (user:$7$…), dovecot (passwd-file user:{SCHEME}secret[:…]) or shadow \
                (user:hash:…; locked or empty hashes are skipped and reported). All or nothing.
                """,
            run: { try $0.importUsers() }),
        Command(
            "list", arguments: [.file], options: [.otpFile],
            summary: "users and how each is stored, never secrets",
            details:
                "Lists the users (the first entry of each name) and how each is stored (plaintext, pbkdf2-sha256 600000, …); never a secret.",
            run: { try $0.list() }),
        Command(
            "check", arguments: [.file], options: [.passwords] + Setting.guardKeys + [.groups, .rules],
            summary: "lint: FILE:LINE: error|warning: …; exit 1 on errors",
            details: """
                Reports every problem as FILE:LINE: error: … or FILE:LINE: warning: …, and warns \
                when FILE can be read or written by group or others, or can be read by someone who \
                could not write its guard database. --groups GROUPFILE and --rules RULESFILE (SPEC \
                §13) are read too, each bad one reported as GROUPFILE:LINE: reason. Exit 1 when \
                there is an error.
                """,
            run: { try $0.check() }),
        Command(
            "upgrade", arguments: [.file], options: [.dryRun, .backup, .jobs],
            summary: "hash every plaintext entry, on all cores",
            details: """
                Hashes every plaintext entry on all cores, committing in batches (each one atomic \
                rewrite under the lock), with a progress bar on a terminal. SIGINT or SIGTERM \
                commits the finished work and exits 130 or 143; the next upgrade continues. \
                --dry-run says what it would do.
                """,
            run: { try $0.upgrade() }),
        Command(
            "hash", arguments: [], options: [],
            summary: "print the hash of the password on stdin",
            details: "Prints the hash string of the password on standard input (asked twice on a terminal).",
            run: { try $0.hash() }),
        Command(
            "login", arguments: [.file], options: [.upgrade, .backup] + Setting.guardKeys,
            summary: "the seed app's login screen",
            details: "The seed app's login screen: asks for a username and a password (no echo).",
            run: { try $0.login() }),
        Command(
            "register", arguments: [.file], options: [.backup],
            summary: "the seed app's register screen",
            details: "The seed app's register screen: asks for a username and a password (twice, no echo).",
            run: { try $0.register() }),
        Command(
            "export", arguments: [.file], options: [.to, .baseDN, .skipUnexportable], required: [.to],
            summary: "print an LDIF entry per user for OpenLDAP",
            details: """
                Prints an LDIF entry per user (uid, cn, sn, objectClass: inetOrgPerson, \
                userPassword: {PBKDF2-SHA256}… / {CRYPT}… / …) that OpenLDAP with pw-pbkdf2 \
                verifies. An entry no directory can verify (plaintext, malformed, unsupported) is \
                reported with its line and nothing is printed (exit 4), unless --skip-unexportable.
                """,
            run: { try $0.export() }),
        Command(
            "pam", arguments: [.file], options: [.upgrade] + Setting.guardKeys + [.group, .groups],
            summary: "a login check for pam_exec.so expose_authtok",
            details: """
                A login check for Linux-PAM's pam_exec.so expose_authtok: the user is $PAM_USER, \
                the password is standard input read to its end (a final NUL, LF or CRLF removed). \
                Exit 0 granted, 1 denied (nothing printed), 2 misuse (PAM_TYPE other than auth, \
                no PAM_USER, a password over 4096 bytes), 5 I/O error or a guard database it cannot \
                write; pam_exec denies on any non-zero exit. The log's rhost is $PAM_RHOST. \
                --group NAME admits only members of NAME in the group file (--groups).
                """,
            run: { try $0.pam() }),
        Command(
            "checkpassword",
            arguments: [
                .file, ArgumentSpec(name: "PROG", kind: .program), ArgumentSpec(name: "ARG", kind: .programArguments),
            ],
            options: Setting.guardKeys + [.group, .groups],
            summary: "the qmail checkpassword interface (Dovecot 2.3)",
            details: """
                The qmail checkpassword interface as Dovecot 2.3 calls it: reads \
                user\\0password\\0timestamp\\0 (at most 512 bytes) from descriptor 3; when \
                granted runs PROG with its ARGs, else exits 1; 2 on misuse, 111 on a temporary \
                failure (a guard database it cannot write too). The log's rhost is $TCPREMOTEIP. \
                credfile's own options stand before FILE: everything after PROG belongs to PROG.
                """,
            run: { $0.checkpassword() }),
        Command(
            "helper", arguments: [.file], options: [.protocol, .jobs] + Setting.guardKeys + [.group, .groups],
            required: [.protocol],
            summary: "a long-running Squid basic-auth helper",
            details: """
                A Squid basic-auth helper: one `user password` line per request (URL-escaped), \
                answered OK, ERR (the same for an unknown user and a wrong password) or BH; with \
                concurrency=N each line starts with a channel ID. Runs until the end of input and \
                re-reads FILE when it changes. BH also when the guard database cannot be written.
                """,
            run: { try $0.helper() }),
        Command(
            "serve", arguments: [.file],
            options: [
                .listen, .socketMode, .socketGroup, .listenPublic, .metricsListen, .realm, .cacheSeconds, .trustedProxy,
            ]
                + Setting.portalKeys + Setting.guardKeys + [.groups, .rules] + Setting.passkeyKeys,
            summary: "an HTTP login service for nginx auth_request, Caddy forward_auth, Traefik",
            details: """
                Answers forward-authentication requests (nginx auth_request, Caddy forward_auth, \
                Traefik ForwardAuth): 200 with X-Credfile-User for a good Authorization: Basic \
                login, 401 with the Basic challenge for every denial, 503 when FILE cannot be read. \
                Listens on each --listen, or on the sockets systemd passes; hashes on its own \
                threads; keeps good logins for --cache-seconds as HMACs, never passwords. With \
                --portal it also serves the sign-in page under --portal-path (auth, forward-auth, \
                login, logout) with sessions kept in the state database. With --rules (and --groups) \
                the original URL a trusted proxy forwards is decided by the rules (SPEC §13): bypass \
                200 without a login, not allowed 403, Remote-Groups upstream; both files are re-read \
                when they change, a bad one keeps the last good copy. SIGHUP re-reads the \
                configuration, SIGTERM answers the requests in flight and exits 0.
                """,
            run: { try $0.serve() }),
        Command(
            "failures", arguments: [.file, .optionalUser],
            options: [.reset] + Setting.guardKeys,
            summary: "the names with recorded login failures; --reset clears them",
            details: """
                Lists the names (USER, or all) with consecutive login failures in the guard database \
                (SPEC §9): count, last failure, until when the next attempt is denied unchecked, and \
                whether the name is locked out. --json prints [{"user", "failures", "last_failure", \
                "throttled_until", "locked_out"}] with RFC 3339 times. --reset clears USER's \
                failures (ending a lockout), or every name's.
                """,
            run: { try $0.failures() }),
        Command(
            "sessions", arguments: [.file, .optionalUser],
            options: [.end, .state],
            summary: "the web sessions of the sign-in page; --end ends them",
            details: """
                Lists the sessions (USER's, or all) that serve's sign-in page keeps in the state \
                database (SPEC §11): user, started, last seen, client address, user agent; never a \
                token. --json prints [{"user", "started", "last_seen", "client", "user_agent"}] with \
                RFC 3339 times. --end ends USER's sessions, or every session: each is refused at its \
                next request.
                """,
            run: { try $0.sessions() }),
        // SPEC §15: the state database, SQLite or PostgreSQL.
        Command(
            "state", arguments: [.file],
            options: [.initialize, .state],
            summary: "where FILE's state database is; --init creates or upgrades its tables",
            details: """
                Prints where the state database of FILE is (the SQLite file, or the PostgreSQL \
                connection string of `state`) and its schema version. --init creates its tables, or \
                brings them to this credfile's schema (serve and the login checks also do so at first \
                use); a PostgreSQL role that may not create tables then needs it run once by one that may.
                """,
            run: { try $0.stateDatabase() }),
        Command(
            "invite", arguments: [.file],
            options: [.count, .expires, .accessUser, .listInvitations, .revoke, .state],
            summary: "invitations to register on the sign-in page; --list, --revoke",
            details: """
                Prints --count N new invitation codes (default 1), one a line, for serve's register \
                page in register = invite mode (SPEC §12): 24 characters in groups of four (120 bits), \
                each working once, for --expires DURATION (default 7d; s, m, h, d, w), and with --user \
                NAME only for that name. The state database keeps only each code's SHA-256: a code \
                is shown once. --list shows id, created, expires, bound name and state (open, used, \
                expired), never a code; --json prints [{"id", "created", "expires", "user", "used"}]. \
                --revoke ID (or all) makes a code answer as a wrong one.
                """,
            run: { try $0.invite() }),
        // SPEC §13: groups and access rules.
        Command(
            "group",
            arguments: [
                ArgumentSpec(name: "GROUPFILE", kind: .file),
                ArgumentSpec(name: "USER|add|remove", kind: .optionalUser),
                ArgumentSpec(name: "GROUP", kind: .optionalUser), ArgumentSpec(name: "USER", kind: .optionalUser),
            ],
            options: [],
            summary: "show or edit an Apache-format group file",
            details: """
                Prints every group of GROUPFILE with its members, or USER's groups, one a line. \
                `group GROUPFILE add GROUP USER` adds USER to GROUP (creating GROUPFILE, mode 0600, \
                when missing) and `remove GROUP USER` takes USER out of it, each with SPEC §4's \
                locked atomic rewrite that keeps every other line byte for byte. A bad line is an \
                error naming GROUPFILE:LINE (exit 2). --json prints {"group": [members]} or [groups].
                """,
            run: { try $0.group() }),
        Command(
            "access", arguments: [ArgumentSpec(name: "RULESFILE", kind: .file)],
            options: [.url, .accessUser, .address, .method, .groups], required: [.url],
            summary: "which access rule decides a request (exit 0 allowed, 1 denied)",
            details: """
                Decides one request by RULESFILE's rules (SPEC §13), as serve would, and prints the \
                action and the line that decided: --user NAME is signed in (its groups read from \
                --groups GROUPFILE), --address IP is the client, --method M the method (GET). Exit 0 \
                for bypass, allow or two-factor; 1 for deny, no matching rule, a path that is \
                refused rather than guessed, or an anonymous request a rule naming a user or group \
                might match (sign in first). A bad rule is an error naming RULESFILE:LINE (exit 2).
                """,
            run: { try $0.accessCheck() }),
        Command(
            "otp", arguments: [.file, .user], options: [.enroll, .remove, .issuer] + Setting.guardKeys,
            summary: "enrol or remove USER's TOTP second factor",
            details: """
                --enroll prints an otpauth://totp/ISSUER:USER URI for an authenticator app (SPEC §14), \
                then reads one code (a line on standard input): when it is right, the secret is saved \
                in otp-file (default FILE.oath, liboath's users-file format, 0600) and that code counts \
                as used; when it is wrong, nothing is saved (exit 1). --remove deletes USER's line and \
                last code step (exit 3 when USER had none). Exit 3 when FILE has no entry for USER.
                """,
            run: { try $0.otp() }),
        Command(
            "passkeys", arguments: [.file, .optionalUser, ArgumentSpec(name: "ID", kind: .optionalUser)],
            options: [.remove, .passkeyFile, .state],
            summary: "list the passkeys of USER (or every user); --remove ID removes one",
            details: """
                Lists the passkeys (WebAuthn credentials, SPEC §14) kept in passkey-file (default \
                FILE.passkeys, 0600): user, id, name, created, last used; never a key. --json prints \
                [{"user", "id", "name", "counter", "created", "last_used"}] with RFC 3339 times \
                (last_used null when never used). --remove ID removes the passkey ID (of USER only, \
                when given; exit 3 when there is none). Passkeys are registered on serve's portal.
                """,
            run: { try $0.passkeysCommand() }),
        Command(
            "lock", arguments: [.file, .user], options: [.backup, .log],
            summary: "lock an entry (! before its hash, as usermod -L)",
            details: """
                Writes ! before USER's hash so it never authenticates; a plaintext entry is hashed \
                under the policy first. Exit 3 when USER has no entry, 4 when its entry holds no hash \
                credfile verifies. lock, unlock and failures --reset are logged (SPEC §9's format, \
                naming the real user who ran them).
                """,
            run: { try $0.lock() }),
        Command(
            "unlock", arguments: [.file, .user], options: [.backup] + Setting.guardKeys,
            summary: "unlock an entry and clear its failures",
            details: """
                Removes the ! before USER's hash and nothing else, and clears USER's failures in the \
                guard database, which also ends a lockout, and says which of the two there was to \
                undo. Exit 3 when USER has no entry.
                """,
            run: { try $0.unlock() }),
        Command(
            "calibrate", arguments: [], options: [.targetMilliseconds],
            summary: "rounds that fit a time per login on this machine",
            details: """
                Measures PBKDF2 on this machine and prints the rounds that fit --target-ms N \
                milliseconds per login, with the OWASP floor, the default, and what OpenSSL's \
                own PKCS5_PBKDF2_HMAC would afford.
                """,
            run: { try $0.calibrate() }),
    ]
}
