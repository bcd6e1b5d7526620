#if canImport(Glibc)
import Glibc
#endif

/// One-time codes (TOTP, RFC 6238) as the second factor of a credential file's logins
/// (SPEC §14): the secrets in ``otpFile`` (liboath's users-file format, written only by
/// §4's locked atomic rewrite), the codes computed and checked by liboath (30-second
/// steps, 6 digits, HMAC-SHA-1, ±1 step), and the last accepted step of each user in the
/// state database, so that a code works once, on every process and host.
///
/// ```swift
/// var store = CredentialStore(path: "/etc/app.cred")
/// store.secondFactor = try SecondFactor(credentialFile: store.path, appended: true)
/// // "hunter2hunter2" + "287082": the code typed right after the password
/// let result = try store.verify(username: "bob", password: Password(typed), upgradeOnSuccess: false)
/// ```
///
/// A user with a line in ``otpFile`` has a second factor; the others log in with their
/// password alone. With ``appended`` false, a login that carries one secret only (every
/// login of ``CredentialStore/verify(usernameBytes:password:upgradeOnSuccess:client:)-4s7p3``)
/// is denied for such a user (``LoginDenial/secondFactorRequired``).
public struct SecondFactor: Sendable {
    /// The secrets file (`otp-file`).
    public let otpFile: String
    /// `otp-append`: the last 6 characters of a password are the code.
    public var appended: Bool
    /// The caller asks for the code in a step of its own (the sign-in page's second step,
    /// SPEC §14): a right password of a user with a second factor is answered
    /// ``CredentialStore/Verification/awaitsCode`` instead of denied, and the code is checked
    /// by `verifyCode(usernameBytes:code:client:)`. Ignored with ``appended``.
    public var separateStep = false
    /// Whether a name has a passkey, a second factor too (SPEC §14) when the caller asks for
    /// it in a step of its own (``separateStep``): a user with a passkey and no secret is
    /// answered ``CredentialStore/Verification/awaitsCode`` after a right password; nil for
    /// none. Set by `counting(_:)` from the passkeys' folder.
    public var passkeyHolder: (@Sendable ([UInt8]) throws -> Bool)?
    /// The credential file, whose default state database keeps the codes' steps.
    let credentialFile: String
    /// `state` as given; nil for the default beside the credential file.
    let statePath: String?

    /// How many digits a code has.
    public static let digits = 6
    /// How many steps before or after the current one a code may be from.
    public static let window = 1

    /// The second factor of `credentialFile`'s logins.
    /// - Parameters:
    ///   - credentialFile: the credential file.
    ///   - otpFile: the secrets file; nil for `FILE.oath` beside the credential file.
    ///   - state: the state database (§9's `state`); nil for `FILE.guard.db` beside it.
    ///   - appended: `otp-append`: read the code from the end of the password.
    /// - Throws: ``CredFileError/Code/usage`` for a PostgreSQL `state` that holds a password
    ///   (``StateLocation``); the state database itself is found when a code is checked.
    public init(credentialFile: String, otpFile: String? = nil, state: String? = nil, appended: Bool = false) throws {
        if let state, StateLocation.isPostgreSQL(state) {
            _ = try StateLocation(state: state, credentialFile: credentialFile)
        }
        // `FILE.oath` within NAME_MAX, as the writer's other sidecars (a 255-byte FILE
        // still has one).
        let (directory, name) = AtomicWriter.split(credentialFile)
        let sidecar = AtomicWriter.sidecarName(of: name, suffix: ".oath")
        self.otpFile = otpFile ?? (credentialFile.contains("/") ? directory + "/" + sidecar : sidecar)
        self.appended = appended
        self.credentialFile = credentialFile
        self.statePath = state
    }

    /// The state database that keeps the last accepted step of each user, found when a code
    /// is checked (resolving the credential file's path then, not for every login: a user
    /// without a second factor never needs it).
    /// - Throws: ``CredFileError/Code/io`` when the credential file's path cannot be resolved.
    var state: any StateStore {
        get throws { try StateLocation(state: statePath, credentialFile: credentialFile).store() }
    }

    /// The secrets file as parsed now; nil when it does not exist.
    /// - Throws: ``CredFileError/Code/malformedFile`` naming a bad line;
    ///   ``CredFileError/Code/io`` when it cannot be read.
    func secrets() throws -> OTPFile? {
        guard let bytes = try FileReader.read(otpFile) else { return nil }
        return try OTPFile(parsing: bytes, path: otpFile)
    }

    /// Whether `username` has a second factor (a line in ``otpFile``).
    /// - Throws: ``CredFileError/Code/malformedFile`` or ``CredFileError/Code/io`` when
    ///   the secrets file cannot be used.
    public func isEnrolled(usernameBytes: some Collection<UInt8>) throws -> Bool {
        try secrets()?.entry(for: usernameBytes) != nil
    }

    /// Whether `usernameBytes` has a passkey in `passkeys` (a second factor of the
    /// separate step, SPEC §14).
    /// - Throws: what ``passkeyHolder`` throws (the passkeys file cannot be read).
    public func hasPasskey(usernameBytes: some Collection<UInt8>) throws -> Bool {
        try passkeyHolder?(Array(usernameBytes)) ?? false
    }

    /// The names with a second factor, in file order.
    /// - Throws: as ``isEnrolled(usernameBytes:)``.
    public func enrolledNames() throws -> [[UInt8]] {
        try secrets()?.entries.map(\.user) ?? []
    }

    /// Checks `code` for `username` at `time` and, when it is right, records its step as
    /// used, in one transaction: true once for each code (a replay, even by another
    /// process racing this one, is false). A user without a line is false.
    /// - Parameters:
    ///   - usernameBytes: the name as the caller sent it.
    ///   - code: the digits typed (anything but 6 ASCII digits is false).
    ///   - time: seconds since 1970 (the clock's, unless a test gives one).
    /// - Throws: as ``isEnrolled(usernameBytes:)``; ``CredFileError/Code/guardDatabase``
    ///   when the state database cannot be written (a temporary failure).
    public func accept(usernameBytes: some Collection<UInt8>, code: some Collection<UInt8>, time: Int64? = nil)
        throws -> Bool
    {
        guard let entry = try secrets()?.entry(for: usernameBytes) else { return false }
        return try accept(entry.user, secret: entry.secret, code: Array(code), time: time ?? Self.now())
    }

    /// ``accept(usernameBytes:code:time:)`` for a known secret.
    func accept(_ user: [UInt8], secret: SecretBytes, code: [UInt8], time: Int64) throws -> Bool {
        guard code.count == Self.digits, code.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        guard let step = secret.withUnsafeBytes({ OATH.step(of: code, secret: $0, time: time, window: Self.window) })
        else { return false }
        return try state.write { tables in try tables.codeSteps.accept(user: user, step: step) }
    }

    /// The code of `secret` at `time` (tests, and `oathtool`'s check of a secret).
    static func code(secret: SecretBytes, time: Int64) -> String? {
        secret.withUnsafeBytes { OATH.code(secret: $0, time: time) }
    }

    /// The current time in seconds since 1970.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec)
    }

    // MARK: Enrolment

    /// A secret offered to a user, saved only once they type a good code
    /// (``SecondFactor/enroll(_:code:time:)``).
    public struct Enrolment: Sendable {
        /// The user's name.
        public let username: [UInt8]
        /// 20 random bytes (RFC 4226's recommended length), zeroed when released.
        let secret: SecretBytes
        /// The issuer shown by the authenticator app.
        public let issuer: String

        /// The secret in RFC 4648 base32 without padding, the key a person types into an
        /// app that cannot scan (show it once, never log it).
        public var key: String { secret.withUnsafeBytes { OATH.base32(Array($0)) } ?? "" }

        /// The `otpauth://totp/ISSUER:USER?secret=BASE32&issuer=ISSUER` URI an
        /// authenticator app scans (holds the secret: show it once, never log it).
        public var uri: String {
            let base32 = secret.withUnsafeBytes { OATH.base32(Array($0)) } ?? ""
            let label = Self.percentEncoded(Array(issuer.utf8)) + ":" + Self.percentEncoded(username)
            return "otpauth://totp/\(label)?secret=\(base32)&issuer=\(Self.percentEncoded(Array(issuer.utf8)))"
                + "&algorithm=SHA1&digits=6&period=30"
        }

        /// RFC 3986's percent-encoding of everything but unreserved characters.
        static func percentEncoded(_ bytes: [UInt8]) -> String {
            var out = ""
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "~"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    let digits = Array("0123456789ABCDEF".unicodeScalars)
                    out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
                }
            }
            return out
        }
    }

    /// A new secret for `username` (nothing is saved).
    /// - Throws: ``CredFileError/Code/crypto`` when the random generator fails.
    public func newEnrolment(usernameBytes: some Collection<UInt8>, issuer: String) throws -> Enrolment {
        var bytes = try OpenSSL.randomBytes(count: 20)
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return Enrolment(username: Array(usernameBytes), secret: SecretBytes(bytes), issuer: issuer)
    }

    /// Saves `enrolment`'s secret when `code` is right for it at `time`: the code's step
    /// is recorded as used, then the user's line is written to ``otpFile`` (replacing one
    /// the user had) by §4's locked atomic rewrite, the file created 0600 when missing.
    /// - Returns: false (nothing saved) when the code is wrong.
    /// - Throws: ``CredFileError/Code/malformedFile`` when the secrets file has a bad line;
    ///   the writer's errors (lock, I/O); ``CredFileError/Code/guardDatabase``.
    public func enroll(_ enrolment: Enrolment, code: some Collection<UInt8>, time: Int64? = nil) throws -> Bool {
        let code = Array(code)
        guard code.count == Self.digits, code.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        let now = time ?? Self.now()
        guard
            let step = enrolment.secret.withUnsafeBytes({
                OATH.step(of: code, secret: $0, time: now, window: Self.window)
            })
        else { return false }
        let user = enrolment.username
        try AtomicWriter(path: otpFile).rewrite(createIfMissing: true) { current in
            if let current { _ = try OTPFile(parsing: current, path: otpFile) }
            let line = enrolment.secret.withUnsafeBytes { OTPFile.line(user: user, secret: Array($0)) }
            return (OTPFile.replacing(user: user, in: current ?? [], with: line), ())
        }
        // A new secret's steps start over: the code typed counts as used.
        try state.write { tables in
            try tables.codeSteps.remove(user: user)
            _ = try tables.codeSteps.accept(user: user, step: step)
        }
        return true
    }

    /// Removes `username`'s second factor (its line in ``otpFile`` and its last step).
    /// - Returns: whether the user had one.
    /// - Throws: as ``enroll(_:code:time:)``.
    public func remove(usernameBytes: some Collection<UInt8>) throws -> Bool {
        let user = Array(usernameBytes)
        guard (try? Syscall.status(of: otpFile)) != nil else { return false }
        let removed = try AtomicWriter(path: otpFile).rewrite { current in
            guard let current, try OTPFile(parsing: current, path: otpFile).entry(for: user) != nil else {
                return (nil, false)
            }
            return (OTPFile.replacing(user: user, in: current, with: nil), true)
        }
        if removed { try state.write { tables in try tables.codeSteps.remove(user: user) } }
        return removed
    }
}

// MARK: The parsers, as values (for `check` and the fuzz target)

extension SecondFactor {
    /// One user's line of a users file.
    public struct UsersFileLine: Sendable, Equatable {
        /// The 1-based line number.
        public let line: Int
        /// The user's name as the line holds it.
        public let user: [UInt8]
    }

    /// The users of a users file's bytes (liboath's format, ``otpFile``), never their secrets.
    /// - Throws: ``CredFileError/Code/malformedFile`` whose message begins `PATH:LINE:`,
    ///   naming the first bad line.
    public static func usersFileLines(parsing bytes: some Collection<UInt8>, path: String) throws(CredFileError)
        -> [UsersFileLine]
    {
        try OTPFile(parsing: bytes, path: path).entries.map { UsersFileLine(line: $0.line, user: $0.user) }
    }

    /// How `otp-append` splits what the caller sent: the password's length, and the code
    /// (its last ``digits`` bytes) when they are ASCII digits and something comes before
    /// them; else the whole as the password and no code.
    public static func appendedCode(_ sent: some Collection<UInt8>) -> (passwordCount: Int, code: [UInt8]?) {
        let bytes = Array(sent)
        guard bytes.count > digits, bytes.suffix(digits).allSatisfy({ (0x30...0x39).contains($0) }) else {
            return (bytes.count, nil)
        }
        return (bytes.count - digits, Array(bytes.suffix(digits)))
    }
}
