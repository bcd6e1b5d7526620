extension CredentialFile {
    /// Whether a line's content starts at `offset`: the changes name lines by where they
    /// start, so applying them needs no line index; an offset from another file's line
    /// that is no line start here is ignored, never spliced into the middle of a line.
    func isLineStart(_ offset: Int) -> Bool {
        let first = hasBOM ? Self.bom.count : 0
        return offset >= first && offset < storage.count && (offset == first || storage[offset - 1] == FileSyntax.lf)
    }

    /// Edits to apply in one rewrite: lines replaced or removed, entries appended.
    public struct Changes: Sendable {
        enum Edit: Sendable {
            case replace([UInt8])
            case remove
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
            edited[line.offset] = .replace(try Self.entryLine(entry.username, secret))
        }

        /// Removes `line` with its ending.
        public mutating func remove(_ line: CredentialLine) {
            edited[line.offset] = .remove
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
