extension CredentialStore {
    /// A warning for every plaintext entry whose password is on one of
    /// ``passwordPolicy``'s blocklists (`check --passwords`, SPEC §8), by line, kind
    /// ``Finding/Kind/blocklisted``. The password is never in the message. Such entries
    /// still log in: passwords already in a file are not judged at login.
    /// - Throws: ``CredFileError/Code/io`` when the file or a blocklist cannot be read.
    public func blocklistFindings() throws -> [Finding] {
        var findings: [Finding] = []
        for line in try read().lines {
            guard let entry = line.entry, case .plaintext = entry.secret else { continue }
            let password = Password(utf8: entry.secretBytes)
            for list in passwordPolicy.blocklists where try list.contains(password) {
                findings.append(Finding(line: line.number, severity: .warning, detail: .blocklisted(user: Array(entry.username))))
                break
            }
        }
        return findings
    }
}
