/// How many errors and warnings `check` found.
public struct FindingCounts: Equatable, Sendable {
    /// Findings of severity error.
    public var errors = 0
    /// Findings of severity warning.
    public var warnings = 0

    /// No findings yet.
    public init() {}

    /// Counts `finding`.
    mutating func count(_ finding: Finding) {
        if finding.severity == .error { errors += 1 } else { warnings += 1 }
    }
}

extension CredentialFile {
    /// Every problem of the file's lines, in line order (SPEC §2, §3): malformed
    /// entries, unsupported hashes and shadowed duplicates are errors; weak hashes and
    /// odd usernames are warnings. Plaintext passwords get one warning for the whole
    /// file, at the first of them, with their count (a legacy file is all plaintext; a
    /// warning per line would bury the real problems). No finding quotes a secret.
    /// (The file's permissions are ``CredentialStore/findings()``'s: bytes have none.)
    /// To have them one at a time, without holding them all, see
    /// ``forEachFinding(policy:isBlocklisted:_:)``.
    public func findings(policy: HashPolicy = .standard) -> [Finding] {
        findings(policy: policy, fastPath: true)
    }

    /// The findings of ``findings(policy:)``, handed to `body` one at a time in line
    /// order as they are decided, so memory holds a block of lines' findings, never all
    /// of them (a million weak hashes made 324 MB of findings). With `isBlocklisted`, a
    /// plaintext entry whose password it says is listed gets a ``Finding/Kind/blocklisted``
    /// warning after its line's other findings (`check --passwords`, SPEC §8; the store
    /// asks its policy's blocklists).
    /// - Returns: how many errors and warnings were handed on.
    /// - Throws: what `body` or `isBlocklisted` throws (nothing more is judged).
    public func forEachFinding(
        policy: HashPolicy = .standard, isBlocklisted: ((Password) throws -> Bool)? = nil,
        _ body: (Finding) throws -> Void
    ) throws -> FindingCounts {
        let starts = lineStarts
        return try source.withUnsafeBytes { (file) throws -> FindingCounts in
            try starts.withUnsafeBufferPointer { starts in
                try Self.forEachFinding(
                    file: file, starts: starts, policy: policy, isBlocklisted: isBlocklisted, fastPath: true,
                    copiesLines: source.isMapped, beforeFirst: {}, body)
            }
        }
    }

    /// `fastPath: false` classifies every line fully; tests check both give the same.
    func findings(policy: HashPolicy, fastPath: Bool) -> [Finding] {
        var findings: [Finding] = []
        withRawLines { file, starts in
            // `body` only appends and no blocklist is asked: nothing can throw.
            _ = try? Self.forEachFinding(
                file: file, starts: starts, policy: policy, isBlocklisted: nil, fastPath: fastPath, copiesLines: false,
                beforeFirst: {}, { findings.append($0) })
        }
        return findings
    }

    /// The findings of the file whose bytes are `file`, as ``forEachFinding(policy:isBlocklisted:_:)``
    /// gives them. The bytes may be a mapping of a file that another program changes in
    /// place meanwhile: each line is copied before it is judged, and no pass trusts what
    /// an earlier one saw of the bytes beyond the line starts (kept ascending and in
    /// bounds by ``LineIndex``), so the findings are of no state the file was ever in,
    /// perhaps, but nothing traps. `beforeFirst` runs once the file has been read through
    /// and before the first finding is handed on: a caller that learns there that the
    /// file changed throws, and reads it again.
    static func forEachFinding(
        in file: UnsafeRawBufferPointer, policy: HashPolicy, isBlocklisted: ((Password) throws -> Bool)?,
        beforeFirst: () throws -> Void, _ body: (Finding) throws -> Void
    ) throws -> FindingCounts {
        try LineIndex.lineStarts(of: file).withUnsafeBufferPointer {
            try forEachFinding(
                file: file, starts: $0, policy: policy, isBlocklisted: isBlocklisted, fastPath: true, copiesLines: true,
                beforeFirst: beforeFirst, body)
        }
    }

    /// What the first pass learns of each line (one byte a line).
    private struct LineFlags {
        /// The line has findings of its own (judged as if no earlier line had its name).
        static let hasFindings: UInt8 = 1
        /// The line holds a plaintext password.
        static let plaintext: UInt8 = 2
    }

    /// The findings of `file`, whose lines start at `starts`, handed to `body` in order.
    ///
    /// One pass over the lines, in pieces at once, judges each line without keeping a
    /// finding: it makes its name's word for ``FirstLines`` while the line is in the
    /// cache and notes in a byte whether the line has findings and holds plaintext. The
    /// lines that repeat an earlier name (few) then trade their findings for a duplicate
    /// error. A second pass goes through the lines in blocks, judges again (in pieces at
    /// once) only the lines that had findings, and hands those on in order.
    private static func forEachFinding(
        file: UnsafeRawBufferPointer, starts: UnsafeBufferPointer<Int>, policy: HashPolicy,
        isBlocklisted: ((Password) throws -> Bool)?, fastPath: Bool, copiesLines: Bool, beforeFirst: () throws -> Void,
        _ body: (Finding) throws -> Void
    ) throws -> FindingCounts {
        let count = starts.count
        let judge = LineJudge(file: file, starts: starts, policy: policy, fastPath: fastPath, copiesLines: copiesLines)
        var flags = [UInt8](repeating: 0, count: count)
        let tagger = FirstLines.Tagger()
        let (words, pieces) = flags.withUnsafeMutableBufferPointer { flags in
            FirstLines.gatherWords(count: count) { range, words -> (plaintext: Int, firstLine: Int) in
                var sink = LineJudge.Sink(keeps: false)
                var plaintext = (plaintext: 0, firstLine: 0)
                for index in range {
                    sink.found = false
                    let line = judge.judge(index + 1, into: &sink)
                    if let key = line.key { words.add(tagger.word(key, line: index, in: file)) }
                    if sink.found { flags[index] |= LineFlags.hasFindings }
                    if line.plaintext {
                        flags[index] |= LineFlags.plaintext
                        if plaintext.plaintext == 0 { plaintext.firstLine = index + 1 }
                        plaintext.plaintext += 1
                    }
                }
                return plaintext
            }
        }
        let firstLines = FirstLines(count: count, words: words, file: file) {
            Self.nameKey(ofLineAt: Self.span(of: $0, starts: starts, in: file).0, in: file)
        }
        // A shadowed line's only finding is that it is shadowed (and its plaintext
        // password, if any, is not counted: it is never used).
        var plaintextCount = pieces.reduce(0) { $0 + $1.plaintext }
        for index in firstLines.repeated where flags[index] & LineFlags.plaintext != 0 { plaintextCount -= 1 }
        // The plaintext warning sits at the first line that holds one and is not shadowed.
        var plaintextLine: Int?
        if plaintextCount > 0, let first = pieces.first(where: { $0.plaintext > 0 })?.firstLine {
            plaintextLine = (first...count).first { number in
                flags[number - 1] & LineFlags.plaintext != 0 && firstLines.earlierLine(of: number) == nil
            }
        }
        try beforeFirst()

        var counts = FindingCounts()
        func hand(_ finding: Finding) throws {
            counts.count(finding)
            try body(finding)
        }
        let block = 1 << 15
        var blockStart = 0
        while blockStart < count {
            let lines = blockStart..<min(count, blockStart + block)
            // The findings of the block's lines that have some and are not shadowed, in
            // line order (each piece's in order, the pieces in order).
            let judged = Parallel.map(lines.count, minimum: 1 << 11) { piece -> [Finding] in
                var sink = LineJudge.Sink(keeps: true)
                for index in piece where flags[lines.lowerBound + index] & LineFlags.hasFindings != 0 {
                    let number = lines.lowerBound + index + 1
                    if firstLines.earlierLine(of: number) == nil { _ = judge.judge(number, into: &sink) }
                }
                return sink.findings
            }.joined()
            var next = judged.startIndex
            for index in lines {
                let number = index + 1
                if number == plaintextLine {
                    try hand(Finding(line: number, severity: .warning, detail: .plaintext(count: plaintextCount)))
                }
                if let first = firstLines.earlierLine(of: number) {
                    // Named by its key, as compared (NFC when not ASCII).
                    let content = Self.span(of: index, starts: starts, in: file).0
                    let name = Self.nameKey(ofLineAt: content, in: file)?.bytes(in: file) ?? []
                    try hand(Finding(line: number, severity: .error, detail: .duplicate(user: name, firstLine: first)))
                }
                while next < judged.endIndex, judged[next].line == number {
                    try hand(judged[next])
                    next = judged.index(after: next)
                }
                if let isBlocklisted, flags[index] & LineFlags.plaintext != 0,
                    let finding = try blocklisted(number, file: file, starts: starts, isBlocklisted)
                {
                    try hand(finding)
                }
            }
            blockStart = lines.upperBound
        }
        return counts
    }

    /// The ``Finding/Kind/blocklisted`` warning of line `number` when it is a plaintext
    /// entry whose password `isBlocklisted` says is listed.
    private static func blocklisted(
        _ number: Int, file: UnsafeRawBufferPointer, starts: UnsafeBufferPointer<Int>,
        _ isBlocklisted: (Password) throws -> Bool
    ) throws -> Finding? {
        let content = span(of: number - 1, starts: starts, in: file).0
        guard case .entry(let entry) = LineClassifier.classify(ArraySlice(file[content])),
            case .plaintext = entry.secret
        else { return nil }
        guard try isBlocklisted(Password(utf8: entry.secretBytes)) else { return nil }
        return Finding(line: number, severity: .warning, detail: .blocklisted(user: Array(entry.username)))
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
    /// Whether each line is copied before it is judged: the bytes are a mapping that
    /// another program may change while they are read (every test of a line must see
    /// the same bytes, or a range made from one read is wrong for the next).
    let copiesLines: Bool

    /// Where a line's findings go: kept, or only noticed (the first pass keeps none, and
    /// makes none: a finding's values are built only when kept).
    struct Sink {
        let keeps: Bool
        var findings: [Finding] = []
        /// Whether a finding was reported since this was last reset.
        var found = false
    }

    /// Reports line `number`'s findings to `sink`; tells whether it holds a plaintext
    /// password (counted in the file's one plaintext warning, not reported per line) and
    /// gives its name key (nil for a line without a name; a range of `file`).
    func judge(_ number: Int, into sink: inout Sink) -> (plaintext: Bool, key: FirstLines.Key?) {
        let content = CredentialFile.span(of: number - 1, starts: starts, in: file).0
        guard copiesLines, !content.isEmpty else { return judge(number, content: content, in: file, into: &sink) }
        return withUnsafeTemporaryAllocation(byteCount: content.count, alignment: 8) { copy in
            copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: file[content]))
            // The copy, at the offsets of the line in the file: only `content` is read
            // (`copy` is non-empty, so its base address exists).
            let view = UnsafeRawBufferPointer(start: copy.baseAddress! - content.lowerBound, count: content.upperBound)
            return judge(number, content: content, in: view, into: &sink)
        }
    }

    /// ``judge(_:into:)`` of the line whose bytes are `file[content]`.
    private func judge(_ number: Int, content: Range<Int>, in file: UnsafeRawBufferPointer, into sink: inout Sink) -> (
        plaintext: Bool, key: FirstLines.Key?
    ) {
        func report(_ severity: Finding.Severity, _ detail: @autoclosure () -> Finding.Detail) {
            sink.found = true
            if sink.keeps { sink.findings.append(Finding(line: number, severity: severity, detail: detail())) }
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
                    // A broken scheme says so; one that is only cheaper than the policy's
                    // minimum (bcrypt 9 under 600,000 rounds) names the minimum it misses.
                    let minimum = peer.hash.isWeak ? nil : policy.minimumRounds
                    report(
                        .warning,
                        .weakHash(user: user(), scheme: peer.hash.description, rounds: nil, minimumRounds: minimum))
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
