/// What `credfile import --hashed` and `import --from FORMAT` read (SPEC §5): hashes
/// made elsewhere, brought in byte for byte (like `chpasswd -e`). None of these are
/// passwords chosen now, so ``PasswordPolicy`` does not judge them.
public enum ImportFormat: String, Sendable, CaseIterable {
    /// `user,secret` lines (credfile's own form) whose secrets are hashes of SPEC §3.
    case hashed
    /// Apache's `user:secret` (`$apr1$`, `$2y$`, `{SHA}`, `$5$`/`$6$`; an unprefixed
    /// 13-character secret is DES crypt and is stored as `{CRYPT}secret`).
    case htpasswd
    /// mosquitto's `user:$7$…` (PBKDF2-HMAC-SHA512) or `user:$6$…` (salted SHA-512).
    case mosquitto
    /// Dovecot's passwd-file `user:{SCHEME}secret[:uid:gid:gecos:home:shell:extra]`;
    /// `{PLAIN}`, `{CLEAR}`, `{CLEARTEXT}` become plaintext entries (which `upgrade`
    /// hashes); a secret without `{SCHEME}` is crypt(3), Dovecot's default.
    case dovecot
    /// `/etc/shadow`: nine `:`-separated fields; a locked (`!…`, `*…`) or empty hash is
    /// skipped and reported.
    case shadow
}

/// One user read from the input, with the text credfile stores after its comma.
public struct ImportedUser: Sendable, Equatable {
    /// The username, checked as for `add`.
    public let username: String
    /// The secret as it will be stored: the hash byte for byte, `{CRYPT}` + a DES hash,
    /// or a plaintext password from Dovecot's `{PLAIN}`.
    public let secret: String
    /// The 1-based line of the input it came from.
    public let line: Int

    /// A user to import (``CredentialStore/importHashes(_:)`` checks it again).
    public init(username: String, secret: String, line: Int) {
        self.username = username
        self.secret = secret
        self.line = line
    }
}

/// A user of the input that is not imported, and why.
public struct SkippedUser: Sendable, Equatable {
    /// Why a line is skipped.
    public enum Reason: String, Sendable {
        /// The account is locked (`!…` or `*…`).
        case locked
        /// The password field is empty.
        case noPassword
    }
    /// The username.
    public let username: String
    /// The 1-based line of the input.
    public let line: Int
    /// Why.
    public let reason: Reason
}

/// What an input holds: the users to import and the ones skipped.
public struct ImportBatch: Sendable, Equatable {
    /// Users to import, in input order.
    public var users: [ImportedUser] = []
    /// Users skipped (shadow's locked or empty entries), in input order.
    public var skipped: [SkippedUser] = []
}

/// Strict readers of the import formats. Every refusal is a ``CredFileError/Code/usage``
/// error naming the input line (`line 3: …`) and never quoting a secret.
public enum ImportReader {
    /// The longest input line, as for credential files.
    public static let maximumLineLength = 65_536

    /// Reads a whole input: lines end with LF (a CR before it is dropped), the last may
    /// lack it; blank lines and lines starting with `#` are skipped.
    /// - Throws: ``CredFileError/Code/usage`` naming the first bad line, or a username
    ///   that appears twice (naming both lines).
    public static func read(_ input: [UInt8], format: ImportFormat) throws -> ImportBatch {
        var batch = ImportBatch()
        var firstLine: [[UInt8]: Int] = [:]
        var number = 0
        var rest = input[...]
        while !rest.isEmpty {
            number += 1
            let newline = rest.firstIndex(of: 0x0A)
            var line = rest[..<(newline ?? rest.endIndex)]
            rest = newline.map { rest[($0 + 1)...] } ?? []
            if line.last == 0x0D { line = line.dropLast() }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) || line.first == UInt8(ascii: "#") { continue }
            func fail(_ message: String) -> CredFileError { CredFileError.usage("line \(number): \(message)") }
            guard line.count <= maximumLineLength else { throw fail("longer than \(maximumLineLength) bytes") }
            guard let text = String(validating: Array(line), as: UTF8.self) else { throw fail("not valid UTF-8") }
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw fail("contains a control character")
            }
            // Bytes, not Characters: a ':' followed by a combining mark is one Character
            // in Swift, and would hide the separator (FuzzImport found the `}` case).
            let separator = format == .hashed ? UInt8(ascii: ",") : UInt8(ascii: ":")
            guard let cut = line.firstIndex(of: separator) else {
                throw fail("expected \(format == .hashed ? "user,secret" : "user:secret")")
            }
            let username = String(decoding: line[..<cut], as: UTF8.self)
            do {
                try Username.validate(username)
            } catch let error as CredFileError {
                throw fail(error.message)
            }
            let key = Unicode.nfcBytes(of: username)
            if let first = firstLine.updateValue(number, forKey: key) {
                throw fail("the same user as line \(first)")
            }
            switch try secret(of: line[(cut + 1)...], format: format) {
            case .store(let secret): batch.users.append(ImportedUser(username: username, secret: secret, line: number))
            case .skip(let reason): batch.skipped.append(SkippedUser(username: username, line: number, reason: reason))
            case .refuse(let why): throw fail(why)
            }
        }
        return batch
    }

    /// What one line's secret becomes.
    enum Outcome: Equatable {
        case store(String)
        case skip(SkippedUser.Reason)
        case refuse(String)
    }

    /// The secret of the fields after the username (valid UTF-8, cut at ASCII bytes), by format.
    static func secret(of fields: ArraySlice<UInt8>, format: ImportFormat) throws -> Outcome {
        func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        let colon = UInt8(ascii: ":")
        switch format {
        case .hashed:
            if let why = refusal(ofHash: fields) {
                let wrapped = Array("{CRYPT}".utf8) + fields
                let hint =
                    fields.first == UInt8(ascii: "$") && refusal(ofHash: wrapped) == nil
                    ? " (credfile verifies it inside {CRYPT}: store {CRYPT} followed by the hash)" : ""
                return .refuse(why + hint)
            }
            return .store(text(fields))
        case .htpasswd:
            return cryptSecret(fields, what: "htpasswd")
        case .mosquitto:
            guard fields.starts(with: "$7$".utf8) || fields.starts(with: "$6$".utf8) else {
                return .refuse("a mosquitto secret starts with $7$ or $6$")
            }
            return refusal(ofHash: fields).map(Outcome.refuse) ?? .store(text(fields))
        case .dovecot:
            let password = fields.prefix { $0 != colon }
            if password.isEmpty { return .skip(.noPassword) }
            if password.first == UInt8(ascii: "{"), let close = password.firstIndex(of: UInt8(ascii: "}")) {
                let scheme = text(password[(password.startIndex + 1)..<close]).uppercased()
                let value = password[(close + 1)...]
                if ["PLAIN", "CLEAR", "CLEARTEXT"].contains(scheme) {
                    guard !value.isEmpty else { return .skip(.noPassword) }
                    do {
                        try PasswordRules.validate(Password(utf8: value), plaintext: true)
                    } catch let error as CredFileError {
                        return .refuse("{\(scheme)} \(error.message)")
                    }
                    return .store(text(value))
                }
                return refusal(ofHash: password).map(Outcome.refuse) ?? .store(text(password))
            }
            return cryptSecret(password, what: "Dovecot (default scheme CRYPT)")
        case .shadow:
            let parts = fields.split(separator: colon, omittingEmptySubsequences: false)
            guard parts.count == 8 else { return .refuse("a shadow line has 9 fields separated by ':'") }
            let hash = parts[0]
            if hash.isEmpty { return .skip(.noPassword) }
            if hash.first == UInt8(ascii: "!") || hash.first == UInt8(ascii: "*") { return .skip(.locked) }
            return cryptSecret(hash, what: "shadow")
        }
    }

    /// A crypt(3) secret, as shadow, htpasswd and Dovecot's default scheme hold one: kept as
    /// is when credfile verifies it bare (`$2y$`, `$6$`, `{SHA}`, …); any other hash
    /// libxcrypt computes (DES, bigcrypt, BSDi `_`, `$2x$`, `$gy$`, `$sha1$`, `$md5$`, `$3$`)
    /// stored as `{CRYPT}…`, the spelling under which SPEC §3.2 verifies it; anything else
    /// refused with the reason (never stored as an account that can never log in).
    static func cryptSecret(_ secret: ArraySlice<UInt8>, what: String) -> Outcome {
        guard let why = refusal(ofHash: secret) else { return .store(String(decoding: secret, as: UTF8.self)) }
        if secret.first != UInt8(ascii: "{"), refusal(ofHash: Array("{CRYPT}".utf8) + secret) == nil {
            return .store("{CRYPT}" + String(decoding: secret, as: UTF8.self))
        }
        if secret.first == UInt8(ascii: "$") || secret.first == UInt8(ascii: "{") { return .refuse(why) }
        return .refuse("the secret is not a hash \(what) writes (plaintext is not imported)")
    }

    /// Why `secret` cannot be imported as a hash: nil when it is one credfile verifies
    /// (SPEC §3), else the reason, never quoting the secret. An unsupported scheme (`{MD5}`,
    /// phpass `$P$`, Django `crypt$`) or a malformed hash would be stored as an account that
    /// can never log in (issue #25 item 6), so it is refused, naming the scheme.
    static func refusal(ofHash secret: some Collection<UInt8>) -> String? {
        switch SecretSyntax.classify(ArraySlice(secret)) {
        case .pbkdf2, .peer, .locked: return nil  // locked: `!` before a hash credfile verifies (SPEC §2)
        case .plaintext: return "the secret is not a hash (plaintext passwords are imported without --hashed or --from)"
        case .unsupportedHash(let scheme) where scheme.contains("?"):
            return "the secret is a hash of a scheme credfile does not verify"
        case .unsupportedHash(let scheme): return "\(scheme) is a hash scheme credfile does not verify"
        case .malformed(let reason): return "the secret is a \(reason)"
        }
    }
}
