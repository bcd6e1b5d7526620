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
        let firstLines = firstLines()
        // The lines are judged in pieces at once; each piece's findings are in line order.
        // The common line is read through raw buffers only (see `span(of:starts:in:)`).
        let pieces = withRawLines { file, starts in
            Parallel.map(starts.count) {
                range -> (findings: [Finding], plaintext: (count: Int, firstLine: Int)) in
                var findings: [Finding] = []
                var plaintext = (count: 0, firstLine: 0)
                do {
                    for number in (range.lowerBound + 1)..<(range.upperBound + 1) {
                        let content = Self.span(of: number - 1, starts: starts, in: file).0
                        /// Reports the line when an earlier line has its name: then it is shadowed,
                        /// and nothing else about it matters.
                        func isDuplicate() -> Bool {
                            guard let first = firstLines.earlierLine(of: number) else { return false }
                            // Named by its key, as compared (NFC when not ASCII); a line
                            // with an earlier line has a name.
                            let name = Self.nameKey(ofLineAt: content, in: file)?.bytes(in: file) ?? []
                            findings.append(
                                Finding(
                                    line: number, severity: .error, detail: .duplicate(user: name, firstLine: first)))
                            return true
                        }
                        func report(_ severity: Finding.Severity, _ detail: Finding.Detail) {
                            findings.append(Finding(line: number, severity: severity, detail: detail))
                        }
                        /// The findings of a well-formed own-format hash's header.
                        func judge(_ header: PasswordHash.Header, user: @autoclosure () -> [UInt8]?) {
                            if policy.isWeak(header) {
                                report(
                                    .warning,
                                    .weakHash(
                                        user: user(), scheme: header.algorithm.identifier, rounds: header.rounds,
                                        minimumRounds: policy.minimumRounds))
                            }
                            if let times = policy.costRatio(header) {
                                report(.warning, .costlyHash(user: user(), scheme: header.description, times: times))
                            }
                        }
                        /// The findings of a well-formed line's secret (`user` holds a valid name).
                        func judge(_ secret: StoredSecret, user: @autoclosure () -> [UInt8]?) {
                            switch secret {
                            case .unsupportedHash(let scheme):
                                report(.error, .unsupportedHash(user: user(), scheme: scheme))
                            case .plaintext:
                                if plaintext.count == 0 { plaintext.firstLine = number }
                                plaintext.count += 1
                            case .pbkdf2(let hash):
                                judge(hash.header, user: user())
                            case .peer(let peer):  // SPEC §3.2: weak schemes and costlier-than-policy entries warn
                                if policy.isWeak(secret) {
                                    report(
                                        .warning,
                                        .weakHash(
                                            user: user(), scheme: peer.hash.description, rounds: nil, minimumRounds: nil
                                        ))
                                }
                                if let times = policy.costRatio(secret) {
                                    report(
                                        .warning, .costlyHash(user: user(), scheme: peer.hash.description, times: times)
                                    )
                                }
                            case .malformed(let reason):
                                report(.error, .malformedEntry(user: user(), reason: .malformedHash(reason)))
                            }
                        }
                        // The common line: printable ASCII with a name that breaks no rule, judged
                        // by its secret alone, without building an Entry (the secret classified once).
                        if fastPath, let comma = Self.cleanEntryComma(UnsafeRawBufferPointer(rebasing: file[content])) {
                            let name = UnsafeRawBufferPointer(
                                rebasing: file[content.lowerBound..<(content.lowerBound + comma)])
                            if !isDuplicate() {
                                let secret = (content.lowerBound + comma + 1)..<content.upperBound
                                switch SecretSyntax.quickSummary(UnsafeRawBufferPointer(rebasing: file[secret])) {
                                case .plaintext: judge(.plaintext, user: nil)
                                case .own(let header): judge(header, user: Array(name))
                                case nil: judge(SecretSyntax.classify(bytes[secret]), user: Array(name))
                                }
                            }
                            continue
                        }
                        guard case .entry(let entry) = LineClassifier.classify(bytes[content]) else { continue }
                        let user = entry.hasName ? Array(entry.username) : nil
                        if isDuplicate() { continue }
                        if let reason = entry.malformation {
                            report(.error, .malformedEntry(user: user, reason: reason))
                            continue
                        }
                        judge(entry.secret, user: user)
                        if let problem = Username.problem(entry.username) {
                            report(.warning, .username(problem))
                        }
                    }
                }
                return (findings, plaintext)
            }
        }
        var findings = pieces.flatMap(\.findings)
        let plaintext = (
            count: pieces.reduce(0) { $0 + $1.plaintext.count },
            firstLine: pieces.first { $0.plaintext.count > 0 }?.plaintext.firstLine ?? 0
        )
        if plaintext.count > 0 {
            let finding = Finding(
                line: plaintext.firstLine, severity: .warning, detail: .plaintext(count: plaintext.count))
            findings.insert(finding, at: findings.firstIndex { $0.line >= plaintext.firstLine } ?? findings.endIndex)
        }
        return findings
    }

    /// The comma of a line that is surely an entry whose only findings can come from its
    /// secret — each test asked of ``FileSyntax`` and ``Username``: printable ASCII (so
    /// no control byte and valid UTF-8) no longer than a line may be, a name that
    /// ``Username/problem(_:)`` accepts (so not blank, not a comment), a non-empty secret.
    /// Nil means "classify it fully".
    static func cleanEntryComma(_ line: UnsafeRawBufferPointer) -> Int? {
        guard line.count <= FileSyntax.maximumLineLength, FileSyntax.isPrintableASCII(line),
            let comma = FileSyntax.index(of: FileSyntax.comma, in: line, from: 0, to: line.count),
            comma + 1 < line.count,
            Username.problem(UnsafeRawBufferPointer(rebasing: line[..<comma])) == nil
        else { return nil }
        return comma
    }
}
