/// The one place where the store's parsed view meets the byte-level writer: the data
/// path `bytes → lines → entries → changes → bytes → writer` (SPEC §4).
extension CredentialStore {
    /// The writer of this store's file, with its backup choice and lock timeout.
    var writer: AtomicWriter { AtomicWriter(path: path, keepsBackup: keepsBackup, lockTimeout: lockTimeout) }

    /// Reads the file under the lock, parses it, lets `change` decide the changes, and has
    /// the writer replace the file with them spliced in (``CredentialFile/writeRendered(applying:to:)``),
    /// in one atomic rewrite; nothing is written
    /// when the changes are empty or `change` throws.
    /// - Parameters:
    ///   - createIfMissing: a missing file is parsed as empty and created (mode 0600) when
    ///     there are changes; otherwise a missing file is an I/O error.
    ///   - change: gets the current file; returns the changes and a result. It runs under
    ///     the lock: hash before calling.
    /// - Returns: the result `change` returned.
    ///   A large file is mapped, not read (``AtomicWriter/rewriteSplicing(createIfMissing:mapping:content:)``):
    ///   `change` may run a second time, on the bytes read into memory, when another
    ///   program changed the file in place meanwhile, so it must only compute.
    /// - Throws: what `change` throws, or what ``AtomicWriter/rewrite(createIfMissing:_:)``
    ///   throws (lock, I/O, a hard-linked file).
    func rewrite<R>(
        createIfMissing: Bool = false,
        _ change: (CredentialFile) throws -> (CredentialFile.Changes, R)
    ) throws -> R {
        try writer.rewriteSplicing(createIfMissing: createIfMissing) {
            (current: FileBytes?) throws -> (Splice.Content?, R) in
            let file = CredentialFile(source: current ?? FileBytes([]))
            let (changes, result) = try change(file)
            guard !changes.isEmpty else { return (nil, result) }
            try file.check(changes)
            // Spliced: stretches of the file as read and the changed lines, never a rendered copy.
            return ({ sink in try file.writeRendered(applying: changes, to: sink) }, result)
        }
    }
}
