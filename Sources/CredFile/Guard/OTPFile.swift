/// The secrets file of SPEC §14 (`otp-file`, default `FILE.oath`, mode 0600) in liboath's
/// users-file format, so `oathtool` and pam_oath read it and an existing `users.oath` can
/// be used:
///
///     # comments and blank lines are kept as they are
///     HOTP/T30 alice - 3132333435363738393031323334353637383930
///
/// Fields are separated by spaces or tabs: the type (`HOTP/T30` or `HOTP/T30/6`, RFC 6238
/// codes of 6 digits every 30 seconds; other types are refused by line number), the user,
/// the PIN (`-`: none; credfile's PIN is the password, so another one is refused), the
/// secret in hex, and up to three fields pam_oath writes (counter, last code, time), kept
/// but not read: credfile keeps the last step in the state database instead.
struct OTPFile: Sendable {
    /// One user's line.
    struct Entry: Sendable {
        /// The 1-based line number.
        let line: Int
        /// The user's name, as the file holds it.
        let user: [UInt8]
        /// The secret's bytes (zeroed when released).
        let secret: SecretBytes
    }

    /// The users with a secret, in file order.
    let entries: [Entry]

    /// The most bytes of a secret (RFC 4226 asks 16 at least and recommends 20).
    static let maximumSecretCount = 128
    /// The most bytes of a file this parser reads.
    static let maximumCount = 16 << 20

    /// Parses `bytes`.
    /// - Throws: ``CredFileError/Code/malformedFile`` naming the first bad line by number.
    init(parsing bytes: some Collection<UInt8>, path: String) throws(CredFileError) {
        var entries: [Entry] = []
        var seen = Set<[UInt8]>()
        var number = 0
        for line in Self.lines(Array(bytes)) {
            number += 1
            let fields = Self.fields(line)
            guard let first = fields.first, first.first != UInt8(ascii: "#") else { continue }
            func bad(_ why: String) -> CredFileError {
                CredFileError(.malformedFile, "\(Escaped.path(path)):\(number): \(why)")
            }
            guard fields.count >= 4, fields.count <= 7 else {
                throw bad("a line needs a type, a user, a PIN and a secret")
            }
            let type = String(decoding: first, as: UTF8.self).uppercased()
            guard type == "HOTP/T30" || type == "HOTP/T30/6" else {
                throw bad("type \(Escaped.name(first)) is not HOTP/T30 (6 digits every 30 s)")
            }
            let user = Array(fields[1])
            guard String(validating: user, as: UTF8.self) != nil else { throw bad("the user is not UTF-8") }
            guard fields[2].elementsEqual("-".utf8) else { throw bad("a PIN is not supported (use -)") }
            guard var secret = OATH.bytes(hex: fields[3]), !secret.isEmpty,
                secret.count <= Self.maximumSecretCount
            else {
                throw bad("the secret is not hex of 1 to \(Self.maximumSecretCount) bytes")
            }
            defer { for index in secret.indices { secret[index] = 0 } }
            guard seen.insert(user).inserted else { throw bad("a second line for the same user") }
            entries.append(Entry(line: number, user: user, secret: SecretBytes(secret)))
        }
        self.entries = entries
    }

    /// The entry of `user`, or nil.
    func entry(for user: some Collection<UInt8>) -> Entry? {
        entries.first { $0.user.elementsEqual(user) }
    }

    /// `bytes` without `user`'s line, and with `line` at the end when given.
    static func replacing(user: [UInt8], in bytes: [UInt8], with line: [UInt8]?) -> [UInt8] {
        var out: [UInt8] = []
        for raw in Self.lines(bytes) {
            let fields = Self.fields(raw)
            let isUsers = fields.count >= 2 && fields[0].first != UInt8(ascii: "#") && fields[1].elementsEqual(user)
            if !isUsers { out += raw + [UInt8(ascii: "\n")] }
        }
        if let line { out += line + [UInt8(ascii: "\n")] }
        return out
    }

    /// The line of `user` with `secret` (lower-case hex).
    static func line(user: [UInt8], secret: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in secret { hex += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return Array("HOTP/T30 ".utf8) + user + Array(" - ".utf8) + hex
    }

    /// The lines of `bytes` without their `\n` (and a `\r` before it); no empty last line.
    private static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var result = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if result.last?.isEmpty == true { result.removeLast() }
        return result.map { $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0 }
    }

    private static func fields(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        line.split { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }
}
