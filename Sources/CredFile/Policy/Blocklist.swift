/// A list of passwords that must not be chosen (SPEC §8, NIST SP 800-63B-4 §3.1.1.2):
/// the built-in list of common passwords, or a file.
///
/// A file comes in one of two forms, told apart by its first line:
/// * **SHA-1** — the first line is 40 hex digits, optionally followed by `:` and a count
///   (`7C4A8D09CA3762AF61E59520943DC26494F8941B:24230577`), as in the Pwned Passwords
///   download. The file must be sorted by digest (case does not matter); it is searched by
///   binary search with `pread`, a few pages per lookup, and never loaded (it can be tens
///   of GB). A line may end in CRLF.
/// * **passwords** — anything else: one password a line (a CR before the LF is dropped,
///   blank lines are ignored), compared case-insensitively with the whole password. It is
///   read once per process, in 64 KiB chunks, at the first lookup: each line's folded
///   form is hashed (a keyed hash, so no one who writes the list can make lines collide)
///   into one sorted array of 8 bytes a line, and every lookup is a binary search of it
///   (a scan per lookup read a 120 MB list for every password of an `import`).
///
/// Only a regular file can be a blocklist: a pipe, FIFO or device is refused (a
/// ``CredFileError/Code/usage`` error), because it cannot be searched or read twice, and
/// reading one as if it were empty would let every password through. A FIFO is opened
/// `O_NONBLOCK`, so one without a writer cannot hang the command.
///
/// Lookups compare the whole password, case-insensitively (both sides lowercased), as
/// NIST and Django do. A SHA-1 list holds digests of passwords as typed, which cannot be
/// lowercased: a password is looked up as typed and, when it differs, lowercased.
public struct Blocklist: Sendable, Equatable {
    /// What the list holds.
    public enum Form: String, Sendable {
        /// credfile's built-in list of common passwords (see ``builtIn``).
        case builtIn = "built-in"
        /// A file of passwords, one a line.
        case passwords
        /// A sorted file of `SHA1HEX[:count]` lines.
        case sha1
    }

    /// The file's path, or `nil` for the built-in list.
    public let path: String?
    /// What the list holds.
    public let form: Form
    /// A passwords list's index, made at its first lookup and shared by every copy.
    private let index: PasswordIndex?

    /// Lists compare by what they are: their path and form.
    public static func == (a: Blocklist, b: Blocklist) -> Bool { a.path == b.path && a.form == b.form }

    /// The built-in list: the 19,640 lowercased passwords Django 5.2 ships as
    /// `common-passwords.txt.gz` (Royce Williams' list of the 20,000 most common Pwned
    /// Passwords, BSD licence; see `Sources/CredFileBlocklist/README.md`).
    public static let builtIn = Blocklist(path: nil, form: .builtIn)

    private init(path: String?, form: Form) {
        self.path = path
        self.form = form
        self.index = form == .passwords ? PasswordIndex() : nil
    }

    /// A blocklist file; its form is read from its first line now.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be opened or read;
    ///   ``CredFileError/Code/usage`` when it is not a regular file (a pipe, a FIFO,
    ///   `/dev/stdin` on a terminal or pipe, a device).
    public init(path: String) throws {
        let file = try BlocklistFile(path: path)
        defer { file.close() }
        self.init(path: path, form: try file.detectForm())
    }

    /// How many entries the built-in list holds.
    public static var builtInCount: Int { BuiltInList.words.count }

    /// Whether `password` is on the list.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read, or
    ///   ``CredFileError/Code/usage`` when a SHA-1 file has a line that is not one.
    public func contains(_ password: Password) throws -> Bool {
        try lookUp(password).isListed
    }

    /// What one lookup found and cost.
    public struct Lookup: Sendable {
        /// Whether the password is on the list.
        public let isListed: Bool
        /// How many `pread` calls it made (0 for the built-in list).
        public let reads: Int
    }

    /// Looks `password` up and says how many reads it took (for benchmarks).
    /// - Throws: as ``contains(_:)``.
    public func lookUp(_ password: Password) throws -> Lookup {
        let folded = PasswordText.folded(password)
        switch form {
        case .builtIn:
            return Lookup(isListed: folded.map { BuiltInList.contains($0) } ?? false, reads: 0)
        case .passwords:
            // A list of passwords is text: a password that is not UTF-8 cannot be on it.
            guard let folded, let index else { return Lookup(isListed: false, reads: 0) }
            return try index.lookUp(Array(folded.utf8), in: path ?? "")
        case .sha1:
            let file = try BlocklistFile(path: path ?? "")
            defer { file.close() }
            var reads = 0
            var candidates: [[UInt8]] = [password.bytes.withUnsafeBytes { Array($0) }]
            if let folded, Array(folded.utf8) != candidates[0] { candidates.append(Array(folded.utf8)) }
            for candidate in candidates {
                let found = try file.binarySearch(for: try Self.sha1Hex(candidate), reads: &reads)
                if found { return Lookup(isListed: true, reads: reads) }
            }
            return Lookup(isListed: false, reads: reads)
        }
    }

    /// The uppercase hex SHA-1 of `bytes` (OpenSSL), as the Pwned Passwords list spells it.
    static func sha1Hex(_ bytes: [UInt8]) throws -> [UInt8] {
        let digest = bytes.withUnsafeBytes { OpenSSL.digest(.sha1, $0) }
        let hex = Array("0123456789ABCDEF".utf8)
        return digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }
    }
}
