/// Locking and unlocking an entry (SPEC §2), as `usermod -L` / `usermod -U` do to
/// `/etc/shadow`: a locked entry is `!` before its hash and never authenticates; the
/// hash is kept, so unlocking brings the same password back.
extension CredentialStore {
    /// Locks `username`'s first entry: writes `!` before its hash. A plaintext entry is
    /// hashed under the store's policy first (a `!` before a legacy password would only
    /// be a longer password). One locked rewrite; every other line is kept byte for byte.
    /// - Returns: false when the entry was locked already (nothing is written).
    /// - Throws: ``CredFileError/Code/userNotFound`` when the name has no entry;
    ///   ``CredFileError/Code/malformedFile`` when its entry is malformed or holds a hash
    ///   credfile does not verify (there is no password to keep); I/O or lock errors.
    @discardableResult
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func lock(username: String) throws -> Bool {
        // A plaintext entry is hashed before the lock is taken; under the lock the line
        // must still be the one that was hashed.
        let before = try firstEntryContent(named: username).map(Array.init)
        var hashed: (content: [UInt8], secret: String)?
        if let before, case .entry(let entry) = LineClassifier.classify(before[...]), case .plaintext = entry.secret {
            let password = Password(utf8: entry.secretBytes)
            hashed = (before, try policy.hash(password))
        }
        return try rewrite { file in
            let line = try Self.lockableEntry(username, in: file)
            var changes = CredentialFile.Changes()
            guard let entry = line.entry else { return (changes, false) }
            switch entry.secret {
            case .locked:
                return (changes, false)
            case .pbkdf2, .peer:
                try changes.replaceSecret(of: line, with: "!" + String(decoding: entry.secretBytes, as: UTF8.self))
            case .plaintext:
                guard let hashed, hashed.content == Array(line.content) else {
                    throw CredFileError(.lock, "the entry changed while it was being locked; try again")
                }
                try changes.replaceSecret(of: line, with: "!" + hashed.secret)
            case .unsupportedHash, .malformed:
                throw CredFileError(
                    .malformedFile, "line \(line.number): cannot lock this entry: it holds no hash credfile verifies")
            }
            return (changes, true)
        }
    }

    /// Unlocks `username`'s first entry: removes the `!` before its hash and nothing else,
    /// and, when the store has a ``loginGuard``, clears the name's failures (ending a
    /// lockout, SPEC §9) whether or not the entry was locked.
    /// - Returns: false when the entry was not locked (the file is not written).
    /// - Throws: ``CredFileError/Code/userNotFound`` when the name has no entry; I/O or
    ///   lock errors (of the file or of the guard database).
    @discardableResult
    @available(*, noasync, message: "it blocks its thread; in async code use the async form (try await)")
    public func unlock(username: String) throws -> Bool {
        let unlocked = try rewrite { file in
            guard let line = file.firstEntry(named: username), let entry = line.entry else {
                throw CredFileError(.userNotFound, "user does not exist")
            }
            var changes = CredentialFile.Changes()
            guard case .locked = entry.secret else { return (changes, false) }
            try changes.replaceSecret(of: line, with: String(decoding: entry.secretBytes.dropFirst(), as: UTF8.self))
            return (changes, true)
        }
        try loginGuard?.resetFailures(username: username)
        return unlocked
    }

    /// The first entry of `username`, to lock.
    private static func lockableEntry(_ username: String, in file: CredentialFile) throws -> CredentialLine {
        guard let line = file.firstEntry(named: username), line.entry != nil else {
            throw CredFileError(.userNotFound, "user does not exist")
        }
        return line
    }
}
