/// The passkeys file of SPEC §14 (`passkey-file`, default `FILE.passkeys`, mode 0600),
/// written only by §4's locked atomic rewrite. One credential a line, its fields separated
/// by `:` as FILE's are, the name last (so it may hold a colon):
///
///     # comments and blank lines are kept as they are
///     alice:AbC…:12:1796083200:1796086800:pQECAyYgASFYI…:phone
///
/// user (FILE's name: no colon, no control byte), the credential id and the COSE public
/// key in unpadded base64url, the signature counter, when it was created and last used
/// (seconds since 1970; 0: never used), and the name the user chose (1 to
/// ``maximumNameCount`` bytes of UTF-8, no control character).
struct PasskeyFile: Sendable {
    /// One credential.
    struct Entry: Sendable, Equatable {
        /// The 1-based line number.
        var line: Int
        /// The user's name, as FILE holds it.
        var user: [UInt8]
        /// The credential id.
        var id: [UInt8]
        /// The signature counter last accepted.
        var counter: UInt32
        /// Seconds since 1970.
        var created: Int64
        /// Seconds since 1970; 0 when never used.
        var lastUsed: Int64
        /// The COSE_Key bytes.
        var coseKey: [UInt8]
        /// The name the user chose.
        var name: String

        /// The entry's line (without its newline).
        var rendered: [UInt8] {
            user
                + Array(":\(Base64URL.encode(id)):\(counter):\(created):\(lastUsed):\(Base64URL.encode(coseKey)):".utf8)
                + Array(name.utf8)
        }
    }

    /// The credentials in file order.
    let entries: [Entry]

    /// The most bytes of a passkey's name.
    static let maximumNameCount = 64

    /// Parses `bytes`.
    /// - Throws: ``CredFileError/Code/malformedFile`` naming the first bad line by number.
    init(parsing bytes: some Collection<UInt8>, path: String) throws(CredFileError) {
        var entries: [Entry] = []
        var ids = Set<[UInt8]>()
        var number = 0
        for line in Self.lines(Array(bytes)) {
            number += 1
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            func bad(_ why: String) -> CredFileError {
                CredFileError(.malformedFile, "\(Escaped.path(path)):\(number): \(why)")
            }
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 6, omittingEmptySubsequences: false)
            guard fields.count == 7 else { throw bad("a line needs 7 fields separated by colons") }
            guard Self.isValidUser(fields[0]) else { throw bad("the user is empty or not UTF-8") }
            guard let id = Base64URL.decode(fields[1]), !id.isEmpty, id.count <= WebAuthn.maximumIDCount else {
                throw bad("the credential id is not base64url of 1 to 1023 bytes")
            }
            guard let counter = Self.number(fields[2]).flatMap(UInt32.init(exactly:)),
                let created = Self.number(fields[3]), let lastUsed = Self.number(fields[4])
            else { throw bad("the counter and times must be decimal numbers") }
            guard let key = Base64URL.decode(fields[5]), WebAuthn.publicKey(coseKey: key) != nil else {
                throw bad("the public key is not an ES256 COSE key in base64url")
            }
            guard let name = Self.validName(fields[6]) else {
                throw bad("the name must be 1 to \(Self.maximumNameCount) bytes of UTF-8 without control characters")
            }
            guard ids.insert(id).inserted else { throw bad("a second line for the same credential id") }
            entries.append(
                Entry(
                    line: number, user: Array(fields[0]), id: id, counter: counter, created: created,
                    lastUsed: lastUsed, coseKey: key, name: name))
        }
        self.entries = entries
    }

    /// A user name this file can hold: FILE's rule (no colon, no control byte), UTF-8.
    static func isValidUser(_ user: some Collection<UInt8>) -> Bool {
        !user.isEmpty && !user.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: ":") }
            && String(validating: Array(user), as: UTF8.self) != nil
    }

    /// `bytes` as a passkey's name, or nil when it is empty, too long, not UTF-8, or holds
    /// a control character.
    static func validName(_ bytes: some Collection<UInt8>) -> String? {
        guard !bytes.isEmpty, bytes.count <= maximumNameCount,
            let name = String(validating: Array(bytes), as: UTF8.self),
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return name
    }

    /// The entry whose id is `id`, or nil.
    func entry(id: [UInt8]) -> Entry? { entries.first { $0.id == id } }

    /// `bytes` with the line of credential `id` replaced by `entry` (removed when nil), and
    /// `entry` added at the end when no line had that id.
    static func replacing(id: [UInt8], in bytes: [UInt8], with entry: Entry?) -> [UInt8] {
        var out: [UInt8] = []
        var replaced = false
        for raw in lines(bytes) {
            let fields = raw.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
            let isThis = raw.first != UInt8(ascii: "#") && fields.count >= 2 && Base64URL.decode(fields[1]) == id
            if !isThis {
                out += raw + [UInt8(ascii: "\n")]
            } else if let entry, !replaced {
                out += entry.rendered + [UInt8(ascii: "\n")]
                replaced = true
            }
        }
        if let entry, !replaced { out += entry.rendered + [UInt8(ascii: "\n")] }
        return out
    }

    private static func number(_ field: ArraySlice<UInt8>) -> Int64? {
        guard !field.isEmpty, field.count <= 18, field.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return field.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
    }

    /// The lines of `bytes` without their `\n` (and a `\r` before it); no empty last line.
    private static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var result = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if result.last?.isEmpty == true { result.removeLast() }
        return result.map { $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0 }
    }
}
