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
    ///
    /// One pass over the lines, in pieces at once, judges each line and makes its name's
    /// word for ``FirstLines`` while the line is in the cache; the lines that turn out to
    /// repeat an earlier name (few) then trade their findings for a duplicate error.
    func findings(policy: HashPolicy, fastPath: Bool) -> [Finding] {
        withRawLines { Self.findings(file: $0, starts: $1, policy: policy, fastPath: fastPath) }
    }

    /// The findings of the file whose bytes are `file` (mapped or read; nothing is
    /// copied), as ``findings(policy:)`` gives them.
    static func findings(in file: UnsafeRawBufferPointer, policy: HashPolicy) -> [Finding] {
        LineIndex.lineStarts(of: file).withUnsafeBufferPointer {
            findings(file: file, starts: $0, policy: policy, fastPath: true)
        }
    }

    /// The findings of `file`, whose lines start at `starts`.
    private static func findings(
        file: UnsafeRawBufferPointer, starts: UnsafeBufferPointer<Int>, policy: HashPolicy, fastPath: Bool
    ) -> [Finding] {
        do {
            let judge = LineJudge(file: file, starts: starts, policy: policy, fastPath: fastPath)
            let tagger = FirstLines.Tagger()
            let (words, pieces) = FirstLines.gatherWords(count: starts.count) {
                range, words -> (findings: [Finding], plaintext: (count: Int, firstLine: Int)) in
                var findings: [Finding] = []
                var plaintext = (count: 0, firstLine: 0)
                for index in range {
                    let line = judge.judge(index + 1, into: &findings)
                    if let key = line.key { words.add(tagger.word(key, line: index, in: file)) }
                    if line.plaintext {
                        if plaintext.count == 0 { plaintext.firstLine = index + 1 }
                        plaintext.count += 1
                    }
                }
                return (findings, plaintext)
            }
            let firstLines = FirstLines(count: starts.count, words: words, file: file) {
                Self.nameKey(ofLineAt: Self.span(of: $0, starts: starts, in: file).0, in: file)
            }

            // A shadowed line's only finding is that it is shadowed (and its plaintext
            // password, if any, is not counted: it is never used).
            var plaintextCount = pieces.reduce(0) { $0 + $1.plaintext.count }
            var scratch: [Finding] = []
            let duplicates = firstLines.repeated.map { index -> Finding in
                scratch.removeAll(keepingCapacity: true)
                if judge.judge(index + 1, into: &scratch).plaintext { plaintextCount -= 1 }
                // Named by its key, as compared (NFC when not ASCII).
                let content = Self.span(of: index, starts: starts, in: file).0
                let name = Self.nameKey(ofLineAt: content, in: file)?.bytes(in: file) ?? []
                let first = firstLines.earlierLine(of: index + 1) ?? 0
                return Finding(line: index + 1, severity: .error, detail: .duplicate(user: name, firstLine: first))
            }
            var findings: [Finding] = []
            findings.reserveCapacity(pieces.reduce(duplicates.count) { $0 + $1.findings.count })
            var nextDuplicate = duplicates.startIndex
            for piece in pieces {
                for finding in piece.findings where firstLines.earlierLine(of: finding.line) == nil {
                    while nextDuplicate < duplicates.endIndex, duplicates[nextDuplicate].line < finding.line {
                        findings.append(duplicates[nextDuplicate])
                        nextDuplicate += 1
                    }
                    findings.append(finding)
                }
            }
            findings += duplicates[nextDuplicate...]

            // Plaintext passwords: one warning, at the first line that holds one and is
            // not shadowed.
            guard plaintextCount > 0,
                var firstLine = pieces.first(where: { $0.plaintext.count > 0 })?.plaintext.firstLine
            else { return findings }
            while firstLines.earlierLine(of: firstLine) != nil || !judge.judge(firstLine, into: &scratch).plaintext {
                firstLine += 1
            }
            let finding = Finding(line: firstLine, severity: .warning, detail: .plaintext(count: plaintextCount))
            findings.insert(finding, at: findings.firstIndex { $0.line >= firstLine } ?? findings.endIndex)
            return findings
        }
    }

    /// The comma of a line that is surely an entry whose only findings can come from its
    /// secret — each test asked of ``FileSyntax`` and ``Username``: printable ASCII (so
    /// no control byte and valid UTF-8) no longer than a line may be, a name that
    /// ``Username/problem(_:)`` accepts (so not blank, not a comment), a non-empty secret.
    /// Nil means "classify it fully".
    static func cleanEntryComma(_ line: UnsafeRawBufferPointer) -> Int? {
        guard let comma = cleanNameComma(line),
            Bytes.isPrintableASCII(UnsafeRawBufferPointer(rebasing: line[(comma + 1)...]))
        else { return nil }
        return comma
    }

    /// ``cleanEntryComma(_:)`` without the test of the secret's bytes, for a caller that
    /// tests them itself (a well-formed own hash is printable ASCII by its grammar).
    static func cleanNameComma(_ line: UnsafeRawBufferPointer) -> Int? {
        guard line.count <= FileSyntax.maximumLineLength,
            let comma = Bytes.index(ofNear: FileSyntax.comma, in: line, from: 0, to: line.count),
            comma + 1 < line.count
        else { return nil }
        let name = UnsafeRawBufferPointer(rebasing: line[..<comma])
        guard Bytes.isPrintableASCII(name), Username.problem(ofPrintableASCII: name) == nil else { return nil }
        return comma
    }
}

/// The findings of one line, judged as if no earlier line had its name (``findings(policy:)``
/// sets shadowed lines apart afterwards). Reads raw buffers only: it runs on several
/// threads at once.
private struct LineJudge {
    let file: UnsafeRawBufferPointer
    let starts: UnsafeBufferPointer<Int>
    let policy: HashPolicy
    let fastPath: Bool

    /// Appends line `number`'s findings to `findings`; tells whether it holds a
    /// plaintext password (counted in the file's one plaintext warning, not reported
    /// per line) and gives its name key (nil for a line without a name).
    func judge(_ number: Int, into findings: inout [Finding]) -> (plaintext: Bool, key: FirstLines.Key?) {
        let content = CredentialFile.span(of: number - 1, starts: starts, in: file).0
        func report(_ severity: Finding.Severity, _ detail: Finding.Detail) {
            findings.append(Finding(line: number, severity: severity, detail: detail))
        }
        /// The findings of a well-formed own-format hash's header.
        func judge(_ header: PasswordHash.Header, user: @autoclosure () -> [UInt8]?) {
            if case .tooCostly(let why) = policy.costVerdict(of: header) {
                return report(.error, .malformedEntry(user: user(), reason: .tooCostly(why)))
            }
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
        /// The findings of a well-formed line's secret (`user` holds a valid name); true
        /// when it is plaintext.
        func judge(_ secret: StoredSecret, user: @autoclosure () -> [UInt8]?) -> Bool {
            switch secret {
            case .unsupportedHash(let scheme):
                report(.error, .unsupportedHash(user: user(), scheme: scheme))
            case .plaintext:
                return true
            case .pbkdf2(let hash):
                judge(hash.header, user: user())
            case .peer(let peer):  // SPEC §3.2: weak schemes and costlier-than-policy entries warn
                if case .tooCostly(let why) = policy.costVerdict(of: peer.hash) {  // SPEC §3.1: malformed
                    report(.error, .malformedEntry(user: user(), reason: .tooCostly(why)))
                    break
                }
                if policy.isWeak(secret) {
                    report(
                        .warning,
                        .weakHash(user: user(), scheme: peer.hash.description, rounds: nil, minimumRounds: nil))
                }
                if let times = policy.costRatio(secret) {
                    report(.warning, .costlyHash(user: user(), scheme: peer.hash.description, times: times))
                }
            case .malformed(let reason):
                report(.error, .malformedEntry(user: user(), reason: .malformedHash(reason)))
            case .locked(let hash):  // deliberate, not a problem; the hash behind it is judged
                _ = judge(hash, user: user())
            }
            return false
        }
        // The common line: printable ASCII with a name that breaks no rule, judged by its
        // secret alone, without building an Entry (the secret classified once). Its name
        // is its own key.
        if fastPath, let comma = CredentialFile.cleanNameComma(UnsafeRawBufferPointer(rebasing: file[content])) {
            let name = content.lowerBound..<(content.lowerBound + comma)
            let secret = UnsafeRawBufferPointer(rebasing: file[(name.upperBound + 1)..<content.upperBound])
            // Plaintext in one pass (below: the summary, then the printable test).
            if SecretSyntax.isCleanPlaintext(secret) { return (true, .inFile(name)) }
            let summary = SecretSyntax.quickSummary(secret)
            // A hash read as well-formed is printable ASCII; any other secret is tested.
            if case .own(let header) = summary {
                judge(header, user: Array(file[name]))
                return (false, .inFile(name))
            }
            if Bytes.isPrintableASCII(secret) {
                if case .plaintext = summary { return (true, .inFile(name)) }
                return (judge(SecretSyntax.classify(ArraySlice(secret)), user: Array(file[name])), .inFile(name))
            }
        }
        let key = CredentialFile.nameKey(ofLineAt: content, in: file)
        // An unusual line (not printable ASCII, or a name that breaks a rule): classified
        // in full, from a copy of its bytes.
        guard case .entry(let entry) = LineClassifier.classify(ArraySlice(file[content])) else { return (false, key) }
        let user = entry.hasName ? Array(entry.username) : nil
        if let reason = entry.malformation {
            report(.error, .malformedEntry(user: user, reason: reason))
            return (false, key)
        }
        let plaintext = judge(entry.secret, user: user)
        if let problem = Username.problem(entry.username) {
            report(.warning, .username(problem))
        }
        return (plaintext, key)
    }
}
