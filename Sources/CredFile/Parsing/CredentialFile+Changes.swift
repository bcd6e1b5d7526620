extension CredentialFile {
    /// Whether a line's content starts at `offset`: the changes name lines by where they
    /// start, so applying them needs no line index.
    func isLineStart(_ offset: Int) -> Bool {
        let first = hasBOM ? Self.bom.count : 0
        return offset >= first && offset < source.count && (offset == first || source[offset - 1] == FileSyntax.lf)
    }

    /// Checks that every line `changes` edits is a line of this file: a line starts at
    /// its offset and holds the same bytes. A ``CredentialLine`` from an earlier read,
    /// applied after another writer changed the file, would otherwise replace or remove
    /// whichever line starts there now (another user's).
    /// - Throws: ``CredFileError/Code/malformedFile`` naming the line, when one is not.
    public func check(_ changes: Changes) throws {
        for (offset, edit) in changes.edited {
            let holdsLine =
                isLineStart(offset)
                && source.withUnsafeBytes { file in
                    let (content, _) = FileSyntax.line(at: offset, in: file)
                    return UnsafeRawBufferPointer(rebasing: file[content]).elementsEqual(edit.line)
                }
            guard holdsLine else {
                throw CredFileError(
                    .malformedFile,
                    "line \(edit.number) of the file the change was made from is not a line of this file "
                        + "(it changed since it was read): nothing was changed")
            }
        }
    }

    /// Edits to apply in one rewrite: lines replaced or removed, entries appended.
    public struct Changes: Sendable {
        /// What happens to one line, and the line it happens to.
        struct Edit: Sendable {
            enum Action: Sendable {
                case replace([UInt8])
                case remove
            }
            let action: Action
            /// The line's content as it was read: the file the change is applied to must
            /// hold these bytes there (``CredentialFile/check(_:)``).
            let line: ArraySlice<UInt8>
            /// Its number then, for the error when it is not there.
            let number: Int
        }
        /// By the offset where the line's content starts.
        var edited: [Int: Edit] = [:]
        var appended: [[UInt8]] = []

        /// No change yet.
        public init() {}

        /// Whether nothing would change.
        public var isEmpty: Bool { edited.isEmpty && appended.isEmpty }

        /// Replaces the secret of the entry on `line`, keeping its username bytes and ending.
        /// - Throws: ``CredFileError/Code/usage`` when `line` holds no entry with a name,
        ///   or when the new line would not be a well-formed entry (an empty secret, a
        ///   line break or other control byte, invalid UTF-8, too long): a change never
        ///   writes a second line or a malformed one.
        public mutating func replaceSecret(of line: CredentialLine, with secret: String) throws {
            guard let entry = line.entry, entry.hasName else {
                throw CredFileError(.usage, "line \(line.number) holds no entry to change")
            }
            edited[line.offset] = Edit(
                action: .replace(try Self.entryLine(entry.username, secret)), line: line.content, number: line.number)
        }

        /// Removes `line` with its ending.
        public mutating func remove(_ line: CredentialLine) {
            edited[line.offset] = Edit(action: .remove, line: line.content, number: line.number)
        }

        /// Appends `username,secret` with an LF at the end of the file.
        /// - Throws: ``CredFileError/Code/usage`` when `username` breaks a rule for new
        ///   names (``Username/problem(_:)``: a comma, a control character such as a line
        ///   break or NUL, …) or the secret would not make a well-formed entry.
        public mutating func append(username: String, secret: String) throws {
            let name = Array(username.utf8)
            if let problem = Username.problem(name) { throw CredFileError(refusing: .username(problem)) }
            appended.append(try Self.entryLine(name[...], secret))
        }

        /// `name,secret`, checked to read back as exactly that entry.
        private static func entryLine(_ name: ArraySlice<UInt8>, _ secret: String) throws -> [UInt8] {
            let secretBytes = Array(secret.utf8)
            guard !secretBytes.isEmpty else { throw CredFileError(refusing: .secret(.emptySecret)) }
            let line = Array(name) + [FileSyntax.comma] + secretBytes
            if let problem = FileSyntax.lineProblem(line[...]) { throw CredFileError(refusing: .secret(problem)) }
            if case .malformed(let reason) = SecretSyntax.classify(secretBytes[...]) {
                throw CredFileError(refusing: .secret(.malformedHash(reason)))
            }
            return line
        }
    }
}
