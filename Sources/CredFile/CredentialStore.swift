#if canImport(Glibc)
import Glibc
#endif

/// The front door of credfile: a credential file at a path, and what an app or an
/// admin does with it. Every change is one locked atomic rewrite (``AtomicWriter``);
/// every login costs the same whatever the name or the outcome: at least the policy's
/// hash, and as much as the file's costliest allowed entry (the login plan, SPEC §3.1).
///
/// ```swift
/// let store = CredentialStore(path: "usuarios.txt")
/// try store.register(username: "valencia", password: "contrasena123")
/// let granted = try store.authenticate(username: "valencia", password: "contrasena123")
/// ```
public struct CredentialStore: Sendable {
    /// The file's path (a symlink is followed; the link stays a link).
    public let path: String
    /// How new hashes are made, and the work every login costs at least.
    public var policy: HashPolicy
    /// Whether each rewrite keeps the previous version as `FILE.bak`.
    public var keepsBackup: Bool
    /// How long a write waits for the lock, in seconds, before it fails with
    /// ``CredFileError/Code/lock`` (SPEC §4; default 15, as shadow's `lckpwdf`).
    public var lockTimeout: Double = 15
    /// The rules a password chosen now must follow (SPEC §8): at least 15 characters, not on
    /// the built-in blocklist, not containing the username, `credfile` or the file's name.
    /// Applied by ``register(username:password:)-2jetq``, ``changePassword(username:to:)-23wqv`` and
    /// ``importUsers(_:storage:jobs:existing:)-2wsmm``; never to passwords already in the file.
    public var passwordPolicy: PasswordPolicy = .standard
    /// The guard of this store's logins (SPEC §9): when set, every ``authenticate(username:password:)-i2ow``
    /// and ``verify(username:password:upgradeOnSuccess:client:)-86r45`` (and their `async`
    /// forms, and ``LoginModel``) is throttled, counted and logged by it. Nil (the default): unguarded.
    public var loginGuard: LoginGuard?
    /// The second factor of this store's logins (SPEC §14): when set, a user with a line in
    /// its ``SecondFactor/otpFile`` needs a one-time code at every login of the one login
    /// path (``verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``). Nil (the
    /// default): passwords alone.
    public var secondFactor: SecondFactor?
    /// The group every login of the one login path must be in (SPEC §13's `--group` of
    /// `pam`, `checkpassword` and `helper`): a good password of a user who is not a member
    /// is denied (``LoginDenial/notInGroup``), counted and logged as every denial. Nil
    /// (the default): any user of the file.
    public var requiredGroup: GroupRequirement?

    /// The parsed file kept between logins, when the store caches (see ``init(path:policy:keepsBackup:caching:)``).
    let cache: FileCache?

    /// A store for the file at `path`. Nothing is read until it is used.
    /// - Parameters:
    ///   - path: The credential file (a symlink is followed; the link stays a link).
    ///   - policy: How new hashes are made, and the work every login costs at least.
    ///   - keepsBackup: Whether each rewrite keeps the previous version as `FILE.bak`.
    ///   - caching: Keep the parsed file in memory and read it again only when it changes
    ///     (device, inode, size, mtime, ctime), so a login costs its hashing and a lookup:
    ///     for servers that check many logins. A change by any process (every writer
    ///     replaces the file by `rename`) is seen at the next login. Memory: about the
    ///     file's size plus 100 bytes per user. Copies of a caching store share its cache.
    public init(path: String, policy: HashPolicy = .standard, keepsBackup: Bool = false, caching: Bool = false) {
        self.path = path
        self.policy = policy
        self.keepsBackup = keepsBackup
        self.cache = caching ? FileCache() : nil
    }

    /// Whether this store keeps the parsed file in memory between logins.
    public var isCaching: Bool { cache != nil }

    /// The form a new password is written in: hashed, or the legacy plaintext.
    public enum SecretForm: Sendable {
        /// A salted hash under the store's policy (the default): PBKDF2, or an argon2id PHC
        /// string when the policy's algorithm is argon2id.
        case hashed
        /// The legacy plaintext form, for apps that still read the file themselves.
        case plaintext
    }

    /// ``SecretForm``, its name in version 2.
    @available(*, deprecated, renamed: "SecretForm")
    public typealias Storage = SecretForm

    // MARK: Reading

    /// The file as it is now, read without a lock.
    /// - Throws: ``CredFileError/Code/io`` when it is missing or cannot be read.
    public func read() throws -> CredentialFile {
        guard let bytes = try FileReader.read(path) else { throw CredFileError.missingFile(path) }
        return CredentialFile(bytes: bytes)
    }

    /// Every problem of the file (see ``CredentialFile/findings(policy:)``), after the
    /// file-level ones: a ``Finding/Kind/permissions`` warning at line 0 when the file
    /// can be read or written by group or others, or its directory written by others
    /// without the sticky bit (SPEC §5). To have them one at a time as they are decided
    /// (memory: the file, not its findings), see ``forEachFinding(blocklisted:adding:_:)``.
    public func findings() throws -> [Finding] {
        var findings: [Finding] = []
        _ = try forEachFinding { findings.append($0) }
        return findings
    }

    /// The findings of ``findings()``, handed to `body` one at a time in line order as
    /// they are decided (`check` prints each at once): memory holds the file (mapped
    /// when large, so the kernel's cached pages) and a block of lines' findings, however
    /// many there are. With `blocklisted`, a plaintext entry whose password is on one of
    /// ``passwordPolicy``'s blocklists gets a ``Finding/Kind/blocklisted`` warning too
    /// (`check --passwords`). `fileFindings`, findings about the file as a whole that the
    /// caller made (line 0: the guard's access warnings), are handed on after the
    /// permissions warnings and before the lines' findings.
    /// - Returns: how many errors and warnings were handed on.
    /// - Throws: what `body` throws; ``CredFileError/Code/io`` when the file is missing or
    ///   cannot be read, when a blocklist cannot be read, or when the file was truncated
    ///   in place by another program after findings were handed on (they may not match it).
    public func forEachFinding(
        blocklisted: Bool = false, adding fileFindings: [Finding] = [], _ body: (Finding) throws -> Void
    ) throws -> FindingCounts {
        var counts = FindingCounts()
        for finding in FilePermissions.findings(path: path) + fileFindings {
            counts.count(finding)
            try body(finding)
        }
        let lists = passwordPolicy.blocklists
        let isBlocklisted: ((Password) throws -> Bool)? =
            blocklisted ? { password in try lists.contains { try $0.contains(password) } } : nil
        // Mapped when large: `check` of a million lines reads every byte once, in place.
        let found = try FileReader.withGuardedBytes(path) { file, truncatedSoFar in
            try CredentialFile.forEachFinding(
                in: file, policy: policy, isBlocklisted: isBlocklisted,
                beforeFirst: { if truncatedSoFar() { throw FileReader.ReadAgain() } }, body)
        }
        guard let found else { throw CredFileError.missingFile(path) }
        counts.errors += found.errors
        counts.warnings += found.warnings
        return counts
    }

    // MARK: Logging in

    /// What a login attempt found.
    public struct Verification: Sendable {
        /// Whether the password was right.
        public let granted: Bool
        /// Whether the entry was rehashed under the policy after the login.
        public let upgraded: Bool
        /// Why an upgrade that was due did not happen (the login still stands).
        public let upgradeError: CredFileError?
        /// Why the login was denied (nil when granted): for logs, never for the caller's
        /// answer, which must be the same for every denial.
        public var denial: LoginDenial? = nil
        /// The password was right and the user has a second factor, which the caller asks
        /// for in a step of its own (``SecondFactor/separateStep``, the sign-in page): not
        /// granted yet, and neither counted as a failure nor logged; the code goes to
        /// `verifyCode(usernameBytes:code:client:)`.
        public var awaitsCode = false
    }

    /// Checks a login: true only when `username`'s first entry is well-formed and
    /// `password` matches it. Unknown users, wrong passwords, malformed entries and
    /// unsupported hashes are all denied alike, in about the same time.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func authenticate(username: String, password: String) throws -> Bool {
        try verify(username: username, password: Password(password), upgradeOnSuccess: false).granted
    }

    /// Checks a login and, when it succeeds and the entry is plaintext or weaker than the
    /// policy, rehashes it (passlib's `verify_and_update`). A failed rehash does not
    /// deny the login; nor does the rehash wait for the lock: when another writer holds
    /// it, the upgrade is skipped (``Verification/upgradeError`` says so) and the answer
    /// comes at once.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func authenticate(username: String, password: String, upgradeOnSuccess: Bool) throws -> Bool {
        try verify(username: username, password: Password(password), upgradeOnSuccess: upgradeOnSuccess).granted
    }

    /// The full answer of a login attempt, guarded by ``loginGuard`` when the store has
    /// one; see ``authenticate(username:password:upgradeOnSuccess:)-1axob`` and
    /// ``verify(username:password:upgradeOnSuccess:client:)-86r45``.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func verify(username: String, password: Password, upgradeOnSuccess: Bool) throws -> Verification {
        try verify(username: username, password: password, upgradeOnSuccess: upgradeOnSuccess, client: nil)
    }

    /// A login checked against the file alone, without the guard.
    func verifyUnguarded(username: String, password: Password, upgradeOnSuccess: Bool) throws -> Verification {
        let (content, census) = try loginLookUp(named: username)
        // Classified once, here: the verifier judges the entry, the upgrade its secret.
        // Judged by the policy's cost limits too: an entry over one is malformed, refused
        // before any work (SPEC §3.1).
        let entry: Entry? =
            if let content, case .entry(let entry) = LineClassifier.classify(content) {
                entry.judged(by: policy)
            } else {
                nil
            }
        let denial = try Verifier(policy: policy, census: census).denial(of: password, against: entry)
        let granted = denial == nil
        guard granted, upgradeOnSuccess, let content, let entry, policy.needsUpdate(entry.secret)
        else { return Verification(granted: granted, upgraded: false, upgradeError: nil, denial: denial) }
        do {
            let upgraded = try rehash(username: username, password: password, ifStill: Array(content))
            return Verification(granted: true, upgraded: upgraded, upgradeError: nil)
        } catch let error as CredFileError {
            return Verification(granted: true, upgraded: false, upgradeError: error)
        }
    }

    /// Whether `username` has an entry, well-formed or not (NFC-compared), from a scan of
    /// the file that never holds it whole (`firstEntryContent(named:pieceSize:)`): what
    /// `passwd` asks before its prompt.
    /// - Parameters:
    ///   - username: the name to look for.
    ///   - missingFileIsEmpty: a missing file has no entries (what `add` asks
    ///     before its prompt: it creates the file); otherwise it is an error.
    /// - Throws: ``CredFileError/Code/io`` when the file is unreadable, or missing and
    ///   `missingFileIsEmpty` is false.
    public func hasEntry(named username: String, missingFileIsEmpty: Bool = false) throws -> Bool {
        do {
            return try firstEntryContent(named: username) != nil
        } catch let error as CredFileError where missingFileIsEmpty && error.cause?.errno == ENOENT {
            return false
        }
    }

    /// The content of `username`'s first entry line (NFC-compared), from the cache when
    /// the store has one, else from a scan of the file that never holds it whole
    /// (``LineScanner/firstEntryContent(named:inFileAt:pieceSize:)``; tests pass tiny
    /// `pieceSize`s).
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or unreadable.
    func firstEntryContent(named username: String, pieceSize: Int = 1 << 17) throws -> ArraySlice<UInt8>? {
        let key = FileSyntax.nameKey(of: username)
        if let cache { return try cache.snapshot(of: path).content(named: key) }
        return try LineScanner.firstEntryContent(named: key, inFileAt: path, pieceSize: pieceSize)?[...]
    }

    /// What a login needs of the file: the content of `username`'s first entry line
    /// (NFC-compared) and the census of every entry within the policy's cost limits
    /// (``LoginPlan``: every login costs what the costliest allowed entry costs). From the cache when the store has one (the
    /// census built once per file version), else from one pass over the whole file
    /// (``LineScanner/loginLookUp(named:inFileAt:pieceSize:)``; tests pass tiny `pieceSize`s).
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or unreadable.
    func loginLookUp(named username: String, pieceSize: Int = 1 << 17) throws -> (ArraySlice<UInt8>?, CostCensus) {
        let key = FileSyntax.nameKey(of: username)
        if let cache {
            let snapshot = try cache.snapshot(of: path)
            return (snapshot.content(named: key), snapshot.census(within: policy))
        }
        let found = try LineScanner.loginLookUp(named: key, inFileAt: path, within: policy, pieceSize: pieceSize)
        return (found.content?[...], found.census)
    }

    /// Replaces the first entry of `username` by a new hash, only if that line still
    /// holds exactly `content` under the lock. It never waits for the lock: when another
    /// writer holds it, this throws a lock error at once and the login stands (the next
    /// good login upgrades), so no login's answer waits for a writer, for up to
    /// ``lockTimeout`` seconds, behind an optional rehash.
    private func rehash(username: String, password: Password, ifStill content: [UInt8]) throws -> Bool {
        let hash = try policy.hash(password)
        var store = self
        store.lockTimeout = 0
        return try store.rewrite { file in
            var changes = CredentialFile.Changes()
            guard let line = file.firstEntry(named: username), Array(line.content) == content else {
                return (changes, false)
            }
            try changes.replaceSecret(of: line, with: hash)
            return (changes, true)
        }
    }

    // MARK: Changing users

    /// Adds a user at the end of the file, creating the file (0600) when missing.
    /// - Throws: ``CredFileError/Code/usage`` for an invalid name or password,
    ///   ``CredFileError/Code/userExists`` when the name has an entry (even a malformed one),
    ///   or an I/O or lock error. Nothing is written then.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func register(username: String, password: String) throws {
        try register(username: username, password: Password(password), storage: .hashed)
    }

    /// Adds a user, hashed or in the legacy plaintext form.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func register(username: String, password: Password, storage: SecretForm) throws {
        try register(username: username, password: password, storage: storage, onceFree: nil)
    }

    /// The one registration (`add`, `register`, the portal's page, an invitation's): the
    /// name and password checked, the secret made before the lock, then under the lock the
    /// name looked up and, when it is free, `onceFree` run (an invitation redeemed) before
    /// the line is appended by one atomic rewrite.
    func register(
        username: String, password: Password, storage: SecretForm, onceFree: (() throws -> Void)?
    ) throws {
        try Username.validate(username)
        try passwordPolicy.validate(password, username: username, path: path)
        let secret = try makeSecret(password, storage: storage)
        try rewrite(createIfMissing: true) { file in
            if file.firstEntry(named: username) != nil {
                throw CredFileError(.userExists, "user already exists")
            }
            try onceFree?()
            var changes = CredentialFile.Changes()
            try changes.append(username: username, secret: secret)
            return (changes, ())
        }
    }

    /// Replaces the password of `username`'s first entry, in place.
    /// - Throws: ``CredFileError/Code/userNotFound``; ``CredFileError/Code/malformedFile``
    ///   when that entry is malformed (fix or delete it first); usage, I/O or lock errors.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func changePassword(username: String, to newPassword: String) throws {
        try changePassword(username: username, to: Password(newPassword), storage: .hashed)
    }

    /// Replaces the password of `username`, hashed or in plaintext.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func changePassword(username: String, to newPassword: Password, storage: SecretForm) throws {
        try passwordPolicy.validate(newPassword, username: username, path: path)
        let secret = try makeSecret(newPassword, storage: storage)
        try rewrite { file in
            var changes = CredentialFile.Changes()
            try changes.replaceSecret(of: Self.changeableEntry(username, in: file), with: secret)
            return (changes, ())
        }
    }

    /// Removes every entry of `username`, so a shadowed duplicate never comes to life.
    /// - Returns: how many lines were removed.
    /// - Throws: ``CredFileError/Code/userNotFound``, or an I/O or lock error.
    @discardableResult
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func remove(username: String) throws -> Int {
        try rewrite { file in
            let lines = file.entries(named: username)
            guard !lines.isEmpty else { throw CredFileError(.userNotFound, "user does not exist") }
            var changes = CredentialFile.Changes()
            lines.forEach { changes.remove($0) }
            return (changes, lines.count)
        }
    }

    /// Adds or updates many users in one rewrite, all or nothing (like `chpasswd`).
    /// Names and passwords are checked (passwords against ``passwordPolicy`` too, unless
    /// they are `existing`), and the hashes computed on `jobs` threads, before the lock is
    /// taken; under the lock the file is indexed once (name → first entry), so the work
    /// grows with users + file size, not users × file size.
    /// - Parameters:
    ///   - users: the names and passwords, in input order.
    ///   - storage: hashed under ``policy`` (the default) or the legacy plaintext form.
    ///   - jobs: the threads that hash.
    ///   - existing: the passwords are already in use (a legacy list being migrated,
    ///     SPEC §5 `import --existing`): SPEC §8 judges passwords chosen now, so these are
    ///     checked only as SPEC §2 checks any password (1–4,096 bytes, no NUL, CR or LF),
    ///     as `chpasswd` takes them.
    /// - Returns: how many users were added and how many updated.
    /// - Throws: ``CredFileError/Code/usage`` for the first bad item, with its 0-based
    ///   index in ``CredFileError/item`` and the rule in ``CredFileError/refusal``
    ///   (``CredFileError/Refusal/sameUser(asItem:)`` for a repeated name);
    ///   ``CredFileError/Code/malformedFile`` when a user's entry is malformed; nothing
    ///   is written then.
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func importUsers(
        _ users: [(username: String, password: Password)], storage: SecretForm = .hashed,
        jobs: Int = ParallelHasher.defaultJobs, existing: Bool = false
    ) throws -> (added: Int, updated: Int) {
        var seen: [[UInt8]: Int] = [:]
        for (index, user) in users.enumerated() {
            do {
                try Username.validate(user.username)
                try PasswordRules.validate(user.password, plaintext: storage == .plaintext)
                if !existing { try passwordPolicy.validate(user.password, username: user.username, path: path) }
            } catch var error as CredFileError {
                error.item = index
                throw error
            }
            if let first = seen.updateValue(index, forKey: FileSyntax.nameKey(of: user.username)) {
                throw CredFileError(refusing: .sameUser(asItem: first), item: index)
            }
        }
        let secrets: [String]
        switch storage {
        case .plaintext:
            secrets = users.map { $0.password.bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
        case .hashed:
            secrets = try ParallelHasher(policy: policy, jobs: jobs).secrets(for: users.map(\.password), progress: nil)
        }
        return try storeSecrets(zip(users.map(\.username), secrets).map { ($0, $1) })
    }

    /// Adds or updates each user with its final secret text, in one rewrite under the lock,
    /// all or nothing (shared by ``importUsers(_:storage:jobs:existing:)-2wsmm`` and ``importHashes(_:)``).
    /// A failure carries the 0-based index of the user in ``CredFileError/item``.
    func storeSecrets(_ users: [(username: String, secret: String)]) throws -> (added: Int, updated: Int) {
        try rewrite(createIfMissing: true) { file in
            let firstEntries = file.firstEntryIndex()
            var changes = CredentialFile.Changes()
            var counts = (added: 0, updated: 0)
            for (index, user) in users.enumerated() {
                do {
                    if let number = firstEntries[FileSyntax.nameKey(of: user.username)]?.number {
                        try changes.replaceSecret(of: Self.changeable(file.line(number)), with: user.secret)
                        counts.updated += 1
                    } else {
                        try changes.append(username: user.username, secret: user.secret)
                        counts.added += 1
                    }
                } catch var error as CredFileError {
                    error.item = index
                    throw error
                }
            }
            return (changes, counts)
        }
    }

    /// The first entry of `username`, if it can be changed in place.
    static func changeableEntry(_ username: String, in file: CredentialFile) throws -> CredentialLine {
        guard let line = file.firstEntry(named: username) else {
            throw CredFileError(.userNotFound, "user does not exist")
        }
        return try changeable(line)
    }

    /// `line`, the first entry of its user, if it can be changed in place.
    private static func changeable(_ line: CredentialLine) throws -> CredentialLine {
        guard let entry = line.entry else { throw CredFileError(.userNotFound, "user does not exist") }
        if let reason = entry.malformation {
            throw CredFileError(
                .malformedFile,
                "line \(line.number): the entry of this user is malformed (\(reason)); fix or delete it first")
        }
        return line
    }

    /// The secret text for a new password: a hash string, or the checked plaintext.
    private func makeSecret(_ password: Password, storage: SecretForm) throws -> String {
        try PasswordRules.validate(password, plaintext: storage == .plaintext)
        switch storage {
        case .hashed: return try policy.hash(password)
        case .plaintext: return password.bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
    }
}
