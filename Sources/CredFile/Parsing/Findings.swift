extension CredentialFile {
    /// Every problem of the file's lines, in line order (SPEC §2, §3): malformed
    /// entries, unsupported hashes and shadowed duplicates are errors; weak hashes and
    /// odd usernames are warnings. Plaintext passwords get one warning for the whole
    /// file, at the first of them, with their count (a legacy file is all plaintext; a
    /// warning per line would bury the real problems). No finding quotes a secret.
    /// (The file's permissions are ``CredentialStore/findings()``'s: bytes have none.)
    public func findings(policy: HashPolicy = .standard) -> [Finding] {
        findings(policy: policy, fastPath: true)
    }

    /// `fastPath: false` classifies every line fully; tests check both give the same.
    func findings(policy: HashPolicy, fastPath: Bool) -> [Finding] {
        var findings: [Finding] = []
        let firstLine = FirstLineTable(capacity: lineCount)
        var plaintext = (count: 0, firstLine: 0)
        bytes.withUnsafeBytes { file in
            for number in stride(from: 1, through: lineCount, by: 1) {
                let content = span(of: number - 1).0
                func duplicate(of name: UnsafeRawBufferPointer, at offset: Int?) -> Bool {
                    guard let first = firstLine.insert(name, fileOffset: offset, line: number, file: file) else {
                        return false
                    }
                    findings.append(
                        Finding(line: number, severity: .error, detail: .duplicate(user: Array(name), firstLine: first)))
                    return true
                }
                // The common line, a clean plaintext entry, without building an Entry.
                if fastPath, let comma = Self.cleanPlaintextComma(UnsafeRawBufferPointer(rebasing: file[content])) {
                    let name = UnsafeRawBufferPointer(rebasing: file[content.lowerBound..<(content.lowerBound + comma)])
                    if !duplicate(of: name, at: content.lowerBound) {
                        if plaintext.count == 0 { plaintext.firstLine = number }
                        plaintext.count += 1
                    }
                    continue
                }
                guard case .entry(let entry) = LineClassifier.classify(bytes[content]) else { continue }
                func report(_ severity: Finding.Severity, _ detail: Finding.Detail) {
                    findings.append(Finding(line: number, severity: severity, detail: detail))
                }
                let user = entry.hasName ? Array(entry.username) : nil
                if entry.hasName {
                    let ascii = entry.username.withUnsafeBytes { FileSyntax.isASCII($0) }
                    let key = ascii ? Array(entry.username) : entry.usernameKey
                    let isDuplicate = key.withUnsafeBytes {
                        duplicate(of: $0, at: ascii ? entry.username.startIndex : nil)
                    }
                    if isDuplicate { continue }
                }
                if let reason = entry.malformation {
                    report(.error, .malformedEntry(user: user, reason: reason))
                    continue
                }
                switch entry.secret {
                case .unsupportedHash(let scheme):
                    report(.error, .unsupportedHash(user: user, scheme: scheme))
                case .plaintext:
                    if plaintext.count == 0 { plaintext.firstLine = number }
                    plaintext.count += 1
                case .pbkdf2(let hash):
                    if policy.isWeak(entry.secret) {
                        report(
                            .warning,
                            .weakHash(
                                user: user, scheme: hash.algorithm.identifier, rounds: hash.rounds,
                                minimumRounds: policy.minimumRounds))
                    }
                case .malformed:
                    break  // reported above, through `entry.malformation`
                }
                if let problem = Username.problem(entry.username) {
                    report(.warning, .username(problem))
                }
            }
        }
        if plaintext.count > 0 {
            let finding = Finding(line: plaintext.firstLine, severity: .warning, detail: .plaintext(count: plaintext.count))
            findings.insert(finding, at: findings.firstIndex { $0.line >= plaintext.firstLine } ?? findings.endIndex)
        }
        return findings
    }

    /// The comma of a line that is surely a well-formed plaintext entry with an
    /// unremarkable name — each test asked of ``FileSyntax``, ``Username`` and
    /// ``SecretSyntax``: printable ASCII no longer than a line may be, not a comment,
    /// a name that ``Username/problem(_:)`` accepts, a non-empty secret that is
    /// plaintext. Nil means "classify it fully".
    static func cleanPlaintextComma(_ line: UnsafeRawBufferPointer) -> Int? {
        guard line.count >= 3, line.count <= FileSyntax.maximumLineLength, FileSyntax.isPrintableASCII(line),
            let comma = FileSyntax.index(of: FileSyntax.comma, in: line, from: 0, to: line.count),
            comma + 1 < line.count,
            Username.problem(UnsafeRawBufferPointer(rebasing: line[..<comma])) == nil,
            !SecretSyntax.hasHashSyntax(UnsafeRawBufferPointer(rebasing: line[(comma + 1)...]))
        else { return nil }
        return comma
    }
}
