extension CredentialStore {
    /// A warning for every plaintext entry whose password is on one of
    /// ``passwordPolicy``'s blocklists (`check --passwords`, SPEC §8), by line, kind
    /// ``Finding/Kind/blocklisted``. The password is never in the message. Such entries
    /// still log in: passwords already in a file are not judged at login. (`check`
    /// streams them among the other findings: ``forEachFinding(blocklisted:adding:_:)``.)
    /// - Throws: ``CredFileError/Code/io`` when the file or a blocklist cannot be read.
    public func blocklistFindings() throws -> [Finding] {
        var findings: [Finding] = []
        _ = try forEachFinding(blocklisted: true) { if $0.kind == .blocklisted { findings.append($0) } }
        return findings
    }
}
