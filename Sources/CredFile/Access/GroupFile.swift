/// A group file in Apache's `mod_authz_groupfile` format (SPEC §13), so an existing
/// `.htgroup` works as it is:
///
/// ```
/// # comment
/// admins: alice bob
/// staff:alice	carol
/// ```
///
/// One group a line: the name, a colon, the members separated by spaces or tabs. Blank
/// lines and lines whose first non-blank byte is `#` are skipped; a line may end in LF or
/// CR LF and be of any length; a group may stand on several lines (its members are the
/// union, as Apache reads them: the usual way round a long line). A line with no colon,
/// an empty or blank-holding group name, or bytes that are not UTF-8 is refused with
/// GROUPFILE:LINE, where Apache would quietly read something else.
public struct GroupFile: Sendable, Equatable {
    /// One group line as read.
    public struct Entry: Sendable, Equatable {
        /// The group's name (before the colon).
        public let group: String
        /// Its members on this line, in order.
        public let members: [String]
        /// The line's number, from 1.
        public let line: Int
    }

    /// Every group line, in file order.
    public let entries: [Entry]
    /// Each member's groups, each once, in the order of their first line: made once per
    /// read, so that a request's groups cost one lookup (1,000 groups, SPEC §13's benchmark).
    private let memberships: [String: [String]]
    /// Each member's groups as a set, for ``isMember(_:of:)``.
    private let membershipSets: [String: Set<String>]

    /// Parses the bytes of a group file.
    /// - Parameters:
    ///   - bytes: the file's bytes.
    ///   - source: the file's name as errors show it (`GROUPFILE:LINE: …`).
    /// - Throws: ``CredFileError/Code/usage`` naming `source:LINE` for a bad line (as a bad line of the configuration file).
    public init(parsing bytes: some Collection<UInt8>, source: String) throws {
        var entries: [Entry] = []
        for (number, line) in Self.lines(Array(bytes)).enumerated() {
            switch Self.parse(line) {
            case .skip: continue
            case .group(let group, let members):
                entries.append(Entry(group: group, members: members, line: number + 1))
            case .bad(let reason):
                throw CredFileError(.usage, "\(Escaped.path(source)):\(number + 1): \(reason)")
            }
        }
        self.entries = entries
        var memberships: [String: [String]] = [:]
        var sets: [String: Set<String>] = [:]
        for entry in entries {
            for member in entry.members where sets[member, default: []].insert(entry.group).inserted {
                memberships[member, default: []].append(entry.group)
            }
        }
        self.memberships = memberships
        membershipSets = sets
    }

    /// Reads and parses the file at `path`.
    /// - Throws: ``CredFileError/Code/io`` when it cannot be read (or is missing), or the
    ///   parse error.
    public init(path: String) throws {
        guard let bytes = try AtomicWriter.read(path) else { throw CredFileError.missingFile(path) }
        try self.init(parsing: bytes, source: path)
    }

    /// The groups `user` is a member of, each once, in the order of their first line.
    public func groups(of user: String) -> [String] { memberships[user] ?? [] }

    /// Every group and its members (each once), in the order of their first line.
    public var groups: [(group: String, members: [String])] {
        var order: [String] = []
        var members: [String: [String]] = [:]
        for entry in entries {
            if members[entry.group] == nil { order.append(entry.group) }
            for member in entry.members where !(members[entry.group] ?? []).contains(member) {
                members[entry.group, default: []].append(member)
            }
        }
        return order.map { ($0, members[$0] ?? []) }
    }

    /// Whether `user` is a member of `group`.
    public func isMember(_ user: String, of group: String) -> Bool {
        membershipSets[user]?.contains(group) ?? false
    }

    // MARK: Editing

    /// An edit of ``edit(path:_:group:user:lockTimeout:)``.
    public enum Edit: String, Sendable, CaseIterable {
        /// Adds the user to the group (a new line for a new group).
        case add
        /// Removes the user from every line of the group.
        case remove
    }

    /// Adds or removes one member under §4's lock, in one atomic rewrite of the file:
    /// every other line stays byte for byte. `add` appends the user to the group's last
    /// line (a new `group: user` line at the end for a new group; the file is created,
    /// mode 0600, when missing); `remove` takes the user out of every line of the group,
    /// and a line left with no member stays as `group:`.
    /// - Returns: whether the file changed (false: already a member, or not one).
    /// - Throws: ``CredFileError/Code/usage`` for a group or user name that cannot be
    ///   written (empty, a blank, not one line; a group also with a colon or a `#` first);
    ///   the parse error of a bad file (nothing written); the writer's errors.
    @discardableResult
    public static func edit(
        path: String, _ edit: Edit, group: String, user: String, lockTimeout: Double = 15
    ) throws -> Bool {
        try checkName(group, what: "group", colonAllowed: false)
        try checkName(user, what: "user", colonAllowed: true)
        let writer = AtomicWriter(path: path, lockTimeout: lockTimeout)
        return try writer.rewrite(createIfMissing: edit == .add) { current in
            let bytes = current ?? []
            let file = try GroupFile(parsing: bytes, source: path)
            let changed = Self.edited(bytes, file, edit, group: group, user: user)
            // Never write a file that would not read back (FuzzGroupFile's check, kept here).
            if let changed { _ = try GroupFile(parsing: changed, source: path) }
            return (changed, changed != nil)
        }
    }

    /// The new bytes of the file, or nil when nothing changes.
    static func edited(_ bytes: [UInt8], _ file: GroupFile, _ edit: Edit, group: String, user: String) -> [UInt8]? {
        var lines = Self.lines(bytes)
        // A new line ends as the file's last line ending does (CR LF or LF).
        let lastLF = bytes.lastIndex(of: 0x0A)
        let ending: [UInt8] = lastLF.map { $0 > 0 && bytes[$0 - 1] == 0x0D } == true ? [0x0D, 0x0A] : [0x0A]
        switch edit {
        case .add:
            if file.isMember(user, of: group) { return nil }
            if let last = file.entries.last(where: { $0.group == group }) {
                var line = lines[last.line - 1]
                let hadCR = line.last == 0x0D
                if hadCR { line.removeLast() }
                while let end = line.last, end == 0x20 || end == 0x09 { line.removeLast() }
                line += [0x20] + Array(user.utf8) + (hadCR ? [0x0D] : [])
                lines[last.line - 1] = line
                return join(lines, bytes)
            }
            var out = bytes
            // An unterminated last line gets its ending (only the LF after a CR it ends in).
            if let end = out.last, end != 0x0A { out += end == 0x0D ? [0x0A] : ending }
            return out + Array("\(group): \(user)".utf8) + ending
        case .remove:
            let touched = file.entries.filter { $0.group == group && $0.members.contains(user) }
            if touched.isEmpty { return nil }
            for entry in touched {
                let kept = entry.members.filter { $0 != user }
                let hadCR = lines[entry.line - 1].last == 0x0D
                let text = "\(group):" + (kept.isEmpty ? "" : " " + kept.joined(separator: " "))
                lines[entry.line - 1] = Array(text.utf8) + (hadCR ? [0x0D] : [])
            }
            return join(lines, bytes)
        }
    }

    private static func checkName(_ name: String, what: String, colonAllowed: Bool) throws {
        let bytes = Array(name.utf8)
        // A member may start with `#` (`g: #x` is no comment); a group may not.
        guard !bytes.isEmpty, colonAllowed || bytes.first != UInt8(ascii: "#"),
            !bytes.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0 }),
            colonAllowed || !bytes.contains(UInt8(ascii: ":"))
        else {
            throw CredFileError.usage(
                "a \(what) name in a group file is one word with no blank\(colonAllowed ? "" : " or colon")")
        }
    }

    // MARK: Reading lines

    /// The lines of `bytes` split at LF (a CR before it stays in the line; a final line
    /// with no LF counts).
    static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// `lines` joined by LF, ending as `original` ended.
    private static func join(_ lines: [[UInt8]], _ original: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for (index, line) in lines.enumerated() {
            out += line
            if index < lines.count - 1 || original.last == 0x0A { out.append(0x0A) }
        }
        return out
    }

    private enum Parsed: Equatable {
        case skip
        case group(String, [String])
        case bad(String)
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// One line: skipped, a group, or why it is refused (never quoting the line).
    private static func parse(_ raw: [UInt8]) -> Parsed {
        var line = raw[...]
        if line.last == 0x0D { line = line.dropLast() }
        line = line.drop(while: isBlank)
        if line.isEmpty || line.first == UInt8(ascii: "#") { return .skip }
        guard String(validating: line, as: UTF8.self) != nil else { return .bad("not UTF-8") }
        guard !line.contains(0), !line.contains(0x0D) else { return .bad("a control byte in the line") }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return .bad("no colon after the group's name") }
        var name = line[..<colon]
        while let end = name.last, isBlank(end) { name = name.dropLast() }
        guard !name.isEmpty else { return .bad("no group name before the colon") }
        guard !name.contains(where: isBlank) else { return .bad("a blank inside the group's name") }
        let members = line[(colon + 1)...].split(whereSeparator: isBlank).map { String(decoding: $0, as: UTF8.self) }
        return .group(String(decoding: name, as: UTF8.self), members)
    }
}
