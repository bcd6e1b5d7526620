/// The rules for a password chosen now (SPEC §8, NIST SP 800-63B-4 §3.1.1.2): long
/// enough, not on a blocklist, not containing the username or a word of the context —
/// and nothing else (no composition rules such as "needs a digit").
///
/// Every path that sets a password applies it: ``CredentialStore/register(username:password:)-2jetq``,
/// ``CredentialStore/changePassword(username:to:)-23wqv``, ``CredentialStore/importUsers(_:storage:jobs:existing:)-2wsmm``,
/// and the CLI's `add`, `passwd`, `register` and `import`. Passwords already in a file are
/// never judged at login; hashes brought in by `import --hashed` / `--from` are not
/// passwords chosen now either.
///
/// The rules, in the order they are checked:
/// 1. at least ``minimumLength`` characters, counted as Unicode code points of the NFC
///    form (so "contraseña" is 10 whether typed composed or decomposed), and at most
///    4,096 UTF-8 bytes; no NUL, CR or LF (SPEC §2);
/// 2. it does not contain the username, case-insensitively, when the username is at least
///    ``minimumUsernameLength`` (3) characters long;
/// 3. it does not contain a context word — `credfile`, the file's base name without its
///    extension (`usuarios` for `usuarios.txt`, `htpasswd` for `.htpasswd`) and
///    ``contextWords`` — case-insensitively; words shorter than ``minimumContextWordLength``
///    (4) characters are ignored, so a file named `db.txt` does not forbid every password
///    holding "db";
/// 4. it is not on any of ``blocklists`` (the whole password, case-insensitively).
public struct PasswordPolicy: Sendable, Equatable {
    /// NIST's minimum for a password used alone (SP 800-63B-4 §3.1.1.2), which is how every
    /// credfile login check uses it: the default.
    public static let defaultMinimumLength = 15
    /// NIST's floor for a password that is one factor of several; a policy below it is
    /// allowed, and the command line warns.
    public static let secondFactorMinimumLength = 8
    /// The range `--min-length` accepts.
    public static let minimumLengthRange: ClosedRange<Int> = 1...64
    /// Usernames shorter than this (in characters) are not looked for in the password.
    public static let minimumUsernameLength = 3
    /// Context words shorter than this (in characters) are ignored.
    public static let minimumContextWordLength = 4
    /// The context word every file has.
    public static let programWord = "credfile"

    /// The fewest characters (Unicode code points after NFC) a new password may have.
    public let minimumLength: Int
    /// The lists a new password must not be on (by default the built-in list).
    public var blocklists: [Blocklist]
    /// Words besides `credfile` and the file's name that a password must not contain
    /// (an app's name, a site's domain…).
    public var contextWords: [String]
    /// Whether the username and context words are looked for at all.
    public var rejectsContextWords: Bool

    /// A policy; the defaults are SPEC §8's.
    /// - Throws: ``CredFileError/Code/usage`` when `minimumLength` is outside 1…64.
    public init(
        minimumLength: Int = defaultMinimumLength, blocklists: [Blocklist] = [.builtIn],
        contextWords: [String] = [], rejectsContextWords: Bool = true
    ) throws {
        guard Self.minimumLengthRange.contains(minimumLength) else {
            throw CredFileError.usage(
                "the minimum password length must be from \(Self.minimumLengthRange.lowerBound) to \(Self.minimumLengthRange.upperBound)"
            )
        }
        self.minimumLength = minimumLength
        self.blocklists = blocklists
        self.contextWords = contextWords
        self.rejectsContextWords = rejectsContextWords
    }

    private init(unchecked minimumLength: Int, blocklists: [Blocklist], rejectsContextWords: Bool) {
        self.minimumLength = minimumLength
        self.blocklists = blocklists
        self.contextWords = []
        self.rejectsContextWords = rejectsContextWords
    }

    /// SPEC §8: 15 characters, the built-in blocklist, the username and context words.
    public static let standard = PasswordPolicy(
        unchecked: defaultMinimumLength, blocklists: [.builtIn], rejectsContextWords: true)

    /// Only the file's own rules (SPEC §2: 1–4,096 bytes, no NUL, CR or LF): for tests and
    /// for apps that judge passwords themselves. Not what a new deployment wants.
    public static let permissive = PasswordPolicy(unchecked: 1, blocklists: [], rejectsContextWords: false)

    /// The first rule `password` breaks as a new password of `username` in the file at
    /// `path`, or nil when it may be used.
    /// - Throws: ``CredFileError/Code/io`` when a blocklist file cannot be read.
    public func violation(of password: Password, username: String, path: String?) throws -> PasswordViolation? {
        let structural: PasswordViolation? = password.bytes.withUnsafeBytes { bytes in
            if bytes.count > PasswordRules.maximumCount { return .tooLong(maximum: PasswordRules.maximumCount) }
            if bytes.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) { return .forbiddenCharacter }
            // Code points (the bytes are NFC already: `Password` normalizes valid UTF-8).
            // Bytes that are not UTF-8 (`Password` keeps them as typed) count as Unicode's
            // decoders read them: one U+FFFD per maximal ill-formed subpart, so a password
            // of stray bytes is as long as it looks, never zero characters.
            let characters = String(decoding: bytes, as: UTF8.self).unicodeScalars.count
            if characters < max(minimumLength, 1) { return .tooShort(minimum: max(minimumLength, 1)) }
            return nil
        }
        if let structural { return structural }
        if rejectsContextWords, let folded = PasswordText.folded(password) {
            let name = Self.fold(username)
            if name.unicodeScalars.count >= Self.minimumUsernameLength, folded.contains(name) {
                return .containsUsername
            }
            for word in Self.contextWords(path: path) + contextWords.map(Self.fold)
            where word.unicodeScalars.count >= Self.minimumContextWordLength && folded.contains(word) {
                return .containsContextWord
            }
        }
        for list in blocklists where try list.contains(password) {
            return .blocklisted(list.form)
        }
        return nil
    }

    /// Throws the first rule `password` breaks, as a usage error saying which (never the
    /// password).
    /// - Throws: ``CredFileError/Code/usage``, or ``CredFileError/Code/io`` when a
    ///   blocklist file cannot be read.
    public func validate(_ password: Password, username: String, path: String?) throws {
        if let violation = try violation(of: password, username: username, path: path) {
            throw CredFileError(refusing: .passwordPolicy(violation))
        }
    }

    /// `credfile` and the file's base name without its extension, lowercased.
    static func contextWords(path: String?) -> [String] {
        var words = [programWord]
        if let path, let last = path.split(separator: "/").last {
            var name = last.drop { $0 == "." }  // `.htpasswd` → `htpasswd`
            if let dot = name.lastIndex(of: ".") { name = name[..<dot] }
            if !name.isEmpty { words.append(fold(String(name))) }
        }
        return words
    }

    /// NFC, then lowercased: how words and passwords are compared.
    static func fold(_ text: String) -> String {
        String(decoding: Unicode.nfcBytes(of: text), as: UTF8.self).lowercased()
    }
}

/// The rule a new password breaks (SPEC §8). It never holds the password.
public enum PasswordViolation: Sendable, Equatable, CustomStringConvertible {
    /// Fewer characters (code points after NFC) than the policy's minimum.
    case tooShort(minimum: Int)
    /// More than 4,096 UTF-8 bytes.
    case tooLong(maximum: Int)
    /// A NUL, CR or LF (it could never be typed back, or would split the line).
    case forbiddenCharacter
    /// It contains the username.
    case containsUsername
    /// It contains `credfile`, the file's name or another context word of the policy.
    case containsContextWord
    /// It is on a blocklist of the given form.
    case blocklisted(Blocklist.Form)

    /// The refusal in English, e.g. `password is too short: at least 15 characters`.
    public var description: String {
        switch self {
        case .tooShort(let minimum): "password is too short: it needs at least \(minimum) characters"
        case .tooLong(let maximum): "password is longer than \(maximum) bytes"
        case .forbiddenCharacter: "password contains a NUL, CR or LF"
        case .containsUsername: "password contains the username"
        case .containsContextWord: "password contains the name of this file or of the program (credfile)"
        case .blocklisted(.builtIn): "password is on the list of commonly used passwords"
        case .blocklisted: "password is on the blocklist"
        }
    }
}
