/// What the portal's sessions read of FILE (SPEC §11): the line a session's keyed digest
/// is taken of, at sign-in and at each request.
extension CredentialStore {
    /// The bytes of `username`'s first entry line, without its line ending (from the cache
    /// when the store has one); nil when FILE has no entry of that name. A session
    /// remembers a keyed digest of it (``PortalSessions``), so any change of the line —
    /// `passwd`, `lock`, `delete`, a rehash, another tool's edit — ends the session.
    /// - Throws: ``CredFileError/Code/io`` when FILE is missing or unreadable.
    public func entryLine(named username: String) throws -> [UInt8]? {
        try firstEntryContent(named: username).map { Array($0) }
    }
}
