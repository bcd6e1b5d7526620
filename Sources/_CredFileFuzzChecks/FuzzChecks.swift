// Not API. The checks of the fuzz targets in Fuzz/, kept here so that the targets and
// the regression test (Tests/CredFileTests/FuzzRegressionTests.swift) run the very same
// code on an input. A separate module rather than an underscored type inside CredFile:
// the library ships no test code, and the checks can only use CredFile's public API,
// so the fuzzers test the contract a caller sees, not the internals.

import CredFile

/// A broken invariant: the fuzz targets trap with it, the regression test records it.
public struct FuzzFailure: Error, CustomStringConvertible {
    /// What was expected; it names lines and sizes, never quotes a secret.
    public let description: String
}

/// The fuzz targets, each named as its folder under `Fuzz/Sources/` and `Fuzz/Corpus/`
/// (`FuzzRegressionTests` holds the three to one another; `Fuzz/Package.swift` and
/// `Fuzz/run.sh` take the folders).
public enum FuzzTarget: String, CaseIterable, Sendable {
    case parser = "FuzzParser"
    case hash = "FuzzHash"
    case store = "FuzzStore"
    case loginRequests = "FuzzLoginRequests"
    case importReaders = "FuzzImport"
    case secret = "FuzzSecret"
    case configuration = "FuzzConfiguration"
    case serveRequests = "FuzzServeRequests"
    case portalRequests = "FuzzPortalRequests"
    case secondFactor = "FuzzSecondFactor"
    case groupFile = "FuzzGroupFile"
    case accessRules = "FuzzAccessRules"
    case passkeys = "FuzzPasskeys"
    case registration = "FuzzRegistration"
}

/// The fuzz targets' checks, one entry point per target.
public enum FuzzChecks {
    /// Runs the check of `target` on one input.
    /// - Parameter storeDirectory: where FuzzStore and FuzzImport keep their files
    ///   (default: one temporary directory per process, removed at exit).
    public static func run(_ target: FuzzTarget, _ input: [UInt8], storeDirectory: String? = nil) throws(FuzzFailure) {
        switch target {
        case .parser: try parser(input)
        case .hash: try hash(input)
        case .store: try store(input, directory: storeDirectory ?? StoreHarness.processDirectory.path)
        case .loginRequests: try loginRequests(input)
        case .importReaders: try importReaders(input, directory: storeDirectory ?? StoreHarness.processDirectory.path)
        case .secret: try secret(input)
        case .configuration: try configuration(input)
        case .serveRequests: try serveRequests(input)
        case .portalRequests: try portalRequests(input)
        case .secondFactor: try secondFactor(input)
        case .groupFile: try groupFile(input, directory: storeDirectory ?? StoreHarness.processDirectory.path)
        case .accessRules: try accessRules(input)
        case .passkeys: try passkeys(input)
        case .registration: try registration(input, directory: storeDirectory ?? StoreHarness.processDirectory.path)
        }
    }

    /// Traps with the failure's description: what a fuzz target does with a failure,
    /// so libFuzzer records the input as a crash.
    public static func trapOnFailure(_ body: () throws(FuzzFailure) -> Void) {
        do { try body() } catch { fatalError("fuzz check failed: \(error)") }
    }

    static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
        if !condition { throw FuzzFailure(description: message()) }
    }

    // MARK: FuzzParser

    /// Parses `input` as a credential file and checks it against SPEC §2 and the
    /// naive ``Reference``: exact round trip, line split, each line's meaning, the
    /// name lookups, the findings, and a rewrite with edits.
    public static func parser(_ input: [UInt8]) throws(FuzzFailure) {
        let file = CredentialFile(bytes: input)
        try expect(file.render() == input, "render() differs from the input")

        // BOM? + Σ(content + ending) == input, and the same split as the reference.
        let reference = Reference.split(input)
        let lines = Array(file.lines)
        try expect(file.hasBOM == reference.bom, "hasBOM is \(file.hasBOM)")
        var rebuilt = file.hasBOM ? CredentialFile.bom : []
        for line in lines { rebuilt += line.content + line.ending.bytes }
        try expect(rebuilt == input, "BOM + lines + endings differ from the input")
        try expect(
            lines.count == reference.lines.count && file.lineCount == lines.count,
            "\(lines.count) lines, the reference has \(reference.lines.count)")

        var kinds: [Reference.Kind] = []
        for (line, expected) in zip(lines, reference.lines) {
            let where_ = "line \(line.number)"
            try expect(line.number == kinds.count + 1, "\(where_) is numbered out of order")
            try expect(
                Array(line.content) == expected.content && line.ending == expected.ending,
                "\(where_): content or ending differs from the reference split")
            let kind = Reference.classify(expected.content)
            kinds.append(kind)
            try checkKind(line, expected: kind)
        }

        try checkLookups(file, kinds)
        try checkFindings(file, reference, kinds)
        try checkEdits(file, reference, kinds, seed: fnv1a(input))
    }

    /// One line's kind, username and secret against the reference, and the SPEC's
    /// rules for a usable entry spelled out on their own.
    static func checkKind(_ line: CredentialLine, expected: Reference.Kind) throws(FuzzFailure) {
        let at = "line \(line.number)"
        switch (line.kind, expected) {
        case (.blank, .blank), (.comment, .comment): return
        case (.entry(let entry), .entry(let username, let secretBytes, let secret)):
            try expect(Array(entry.username) == (username ?? []), "\(at): username differs from the reference")
            if secret != .peer {
                try expect(entry.isMalformed == (secret == .malformed), "\(at): malformed is \(entry.isMalformed)")
            }
            switch (entry.secret, secret) {
            case (.plaintext, .plaintext), (.malformed, .malformed), (.peer, .peer), (.malformed, .peer): break
            case (.locked(.peer), .locked(.peer)), (.plaintext, .locked(.peer)): break
            case (.locked(.pbkdf2(let hash)), .locked(.pbkdf2(let r))):
                try expect(
                    hash.algorithm == r.algorithm && hash.rounds == r.rounds && hash.salt == r.salt
                        && hash.checksum == r.checksum, "\(at): locked hash fields differ from the reference")
            case (.unsupportedHash(let a), .unsupported(let b)):
                // Only known schemes are named ($?$ / {?} otherwise: an unknown prefix of
                // a legacy secret may be the start of a password).
                let hidden = (a == "$?$" && b.hasPrefix("$")) || (a == "{?}" && b.hasPrefix("{"))
                try expect(a == b || hidden, "\(at): unsupported scheme \(a), the reference says \(b)")
            case (.pbkdf2(let hash), .pbkdf2(let r)):
                try expect(
                    hash.algorithm == r.algorithm && hash.rounds == r.rounds && hash.salt == r.salt
                        && hash.checksum == r.checksum, "\(at): hash fields differ from the reference")
                try expect(Array(hash.string.utf8) == secretBytes, "\(at): the hash does not format back to the secret")
            default:
                throw FuzzFailure(
                    description: "\(at): secret is \(entry.secret.storageDescription), the reference says \(secret)")
            }
            guard !entry.isMalformed else { return }
            // SPEC §2, rule by rule, for an entry that can authenticate.
            let content = Array(line.content)
            try expect(!entry.username.isEmpty && !entry.username.contains(UInt8(ascii: ",")), "\(at): bad username")
            try expect(!secretBytes.isEmpty, "\(at): empty secret")
            try expect(content.count <= Reference.longestEntryLine, "\(at): too long")
            try expect(!content.contains(where: Reference.isControl), "\(at): control byte")
            try expect(String(validating: content, as: UTF8.self) != nil, "\(at): not UTF-8")
            let meaning = Reference.classifySecret(secretBytes)
            let hashSyntax =
                secretBytes.first == UInt8(ascii: "$") || (meaning != .plaintext && meaning != .locked(.peer))
            if hashSyntax, case .plaintext = entry.secret {
                throw FuzzFailure(description: "\(at): a secret with hash syntax is plaintext")
            }
        default:
            throw FuzzFailure(description: "\(at): kind differs from the reference (\(expected))")
        }
    }

    /// `firstEntry(named:)`, `entries(named:)` and `effectiveEntries()` against a scan of
    /// the reference's lines, for a few names taken from the input.
    static func checkLookups(_ file: CredentialFile, _ kinds: [Reference.Kind]) throws(FuzzFailure) {
        var fields: [[UInt8]] = []
        for case .entry(let username?, _, _) in kinds where !username.isEmpty { fields.append(username) }
        // Each lookup classifies every line again: a few names keep the fuzzer fast.
        var names = fields.prefix(2).map { String(decoding: $0, as: UTF8.self) }
        if let first = names.first { names += [String(first.dropFirst()), "x" + first] }
        if fields.count > 2, let last = fields.last { names.append(String(decoding: last, as: UTF8.self)) }

        for (index, name) in names.enumerated() {
            var expected: [Int] = []
            for (index, kind) in kinds.enumerated() {
                if case .entry(let username, _, _) = kind, Reference.names(username, name) {
                    expected.append(index + 1)
                }
            }
            let first = file.firstEntry(named: name)?.number
            try expect(
                first == expected.first,
                "firstEntry(named:) of a \(name.utf8.count)-byte name is line \(first ?? 0), expected \(expected.first ?? 0)"
            )
            if index == 0 {  // entries(named:) classifies every line: once is enough
                try expect(
                    file.entries(named: name).map(\.number) == expected, "entries(named:) differs from the reference")
            }
        }

        var seen = Set<Reference.Key>()
        var effective: [Int] = []
        for (index, kind) in kinds.enumerated() {
            if case .entry(let username?, _, _) = kind, !username.isEmpty, seen.insert(Reference.Key(username)).inserted
            {
                effective.append(index + 1)
            }
        }
        try expect(file.effectiveEntries().map(\.number) == effective, "effectiveEntries() differs from the reference")
    }

    /// Findings: errors on exactly the malformed, unsupported and duplicate entries, one
    /// warning at the first plaintext entry that counts them all, and not one byte that depends on a plaintext
    /// secret: the findings of the file with every plaintext secret replaced by as many
    /// `Q`s must be identical. (A substring test would cry wolf on `bob,bobbybob`.)
    static func checkFindings(
        _ file: CredentialFile, _ reference: (bom: Bool, lines: [Reference.Line]), _ kinds: [Reference.Kind]
    ) throws(FuzzFailure) {
        let findings = file.findings()
        try expect(zip(findings, findings.dropFirst()).allSatisfy { $0.line <= $1.line }, "findings out of line order")
        var errors = Set<Int>()
        var unknown = Set<Int>()
        var plaintext: [Int] = []
        var seen = Set<Reference.Key>()
        for (index, kind) in kinds.enumerated() {
            guard case .entry(let username, _, let secret) = kind else { continue }
            if let username, !username.isEmpty, !seen.insert(Reference.Key(username)).inserted {
                errors.insert(index + 1)
                continue
            }
            switch secret {
            case .malformed, .unsupported: errors.insert(index + 1)
            case .plaintext: plaintext.append(index + 1)
            case .pbkdf2(let hash):  // too costly under the standard policy: malformed (SPEC §3.1)
                if Reference.isTooCostly(hash, policyRounds: HashPolicy.defaultRounds) { errors.insert(index + 1) }
            case .locked(.pbkdf2): break
            case .peer: unknown.insert(index + 1)  // a peer hash or malformed: the family decides
            case .locked:
                // `!` before a peer's prefix: locked when the family parses the hash, else the
                // legacy plaintext it always was (the family's syntax is checked above).
                if case .plaintext? = file.line(index + 1).entry?.secret { plaintext.append(index + 1) }
            }
        }
        let reported = Set(findings.filter { $0.severity == .error }.map(\.line)).subtracting(unknown)
        try expect(reported == errors, "errors on lines \(reported.sorted()), expected \(errors.sorted())")
        // The one plaintext warning, told by its kind, never by its prose.
        let summaries = findings.filter { $0.kind == .plaintext }
        if plaintext.isEmpty {
            try expect(summaries.isEmpty, "a plaintext warning without plaintext entries")
        } else {
            try expect(
                summaries.count == 1 && summaries[0].line == plaintext[0] && summaries[0].severity == .warning,
                "not one plaintext warning at the first plaintext entry")
            try expect(summaries[0].detail == .plaintext(count: plaintext.count), "the plaintext warning miscounts")
        }
        // Each kind has its severity; a library finding never tells an app what to run.
        for finding in findings {
            let errorKinds: Set<Finding.Kind> = [.malformedEntry, .duplicate, .unsupportedHash]
            try expect(
                (finding.severity == .error) == errorKinds.contains(finding.kind),
                "line \(finding.line): \(finding.kind) is an \(finding.severity)")
            try expect(
                !finding.message.contains("credfile"), "line \(finding.line): a library finding gives CLI advice")
            // Names are shown escaped: nothing in a message can move the cursor, turn the
            // text around or hide (the backslash only starts an escape).
            try expect(
                !finding.message.unicodeScalars.contains { $0 != "\\" && Escaped.needsEscape($0) },
                "line \(finding.line): a finding shows a character raw that must be escaped")
        }

        guard !plaintext.isEmpty else { return }
        var masked = reference.bom ? Reference.bom : []
        for (line, kind) in zip(reference.lines, kinds) {
            if case .entry(_, let secret, .plaintext) = kind {
                masked += line.content.dropLast(secret.count) + Array(repeating: UInt8(ascii: "Q"), count: secret.count)
            } else {
                masked += line.content
            }
            masked += line.ending.bytes
        }
        try expect(CredentialFile(bytes: masked).findings() == findings, "findings depend on a plaintext secret")
    }

    /// `render(applying:)`: removes and replaces some entries, appends some, and checks
    /// that every other line keeps its content and ending, the replaced ones keep their
    /// username and ending, and a last line without an ending only gains one.
    static func checkEdits(
        _ file: CredentialFile, _ reference: (bom: Bool, lines: [Reference.Line]), _ kinds: [Reference.Kind],
        seed: UInt64
    ) throws(FuzzFailure) {
        var random = SeededRandom(seed: seed)
        var changes = CredentialFile.Changes()
        var expected: [Reference.Line] = []
        var lastUsername: [UInt8]?
        for (line, (ref, kind)) in zip(file.lines, zip(reference.lines, kinds)) {
            guard case .entry(let username, _, _) = kind else {
                expected.append(ref)
                continue
            }
            if let username, !username.isEmpty { lastUsername = username }
            switch random.next() % 4 {
            case 0: changes.remove(line)
            case 1 where username != nil:
                // A change writes only a well-formed entry: it refuses (throws) when the
                // name is empty or the new line would be malformed (e.g. a control byte
                // in the name), and then the line stays as it was.
                let secret = "s\(line.number)"
                let replaced = (username ?? []) + [UInt8(ascii: ",")] + Array(secret.utf8)
                var wellFormed = false
                if case .entry(let name?, _, let meaning) = Reference.classify(replaced), !name.isEmpty,
                    meaning != .malformed
                {
                    wellFormed = true
                }
                let accepted = (try? changes.replaceSecret(of: line, with: secret)) != nil
                try expect(
                    accepted == wellFormed,
                    "replaceSecret \(accepted ? "accepted" : "refused") a line the reference calls \(wellFormed ? "well-formed" : "malformed")"
                )
                expected.append(accepted ? Reference.Line(content: replaced, ending: ref.ending) : ref)
            default: expected.append(ref)
            }
        }
        let name =
            lastUsername.map { String(decoding: $0, as: UTF8.self) }.flatMap {
                Reference.usernameIsValid($0) ? $0 : nil
            } ?? "fuzz"
        let appends = Int(random.next() % 3)
        for _ in 0..<appends {
            do {
                try changes.append(username: name, secret: "appended")
            } catch {
                throw FuzzFailure(description: "append of a valid name was refused: \(error)")
            }
        }
        let output: [UInt8]
        do {
            output = try file.render(applying: changes)
        } catch {
            throw FuzzFailure(description: "changes made from the file's own lines were refused: \(error)")
        }

        let reparsed = Reference.split(output)
        if appends > 0, let last = expected.last, last.ending == .none {
            try expect(
                reparsed.lines.count > expected.count - 1 && reparsed.lines[expected.count - 1].ending != .none,
                "the last line did not gain an ending before an append")
            expected[expected.count - 1].ending = reparsed.lines[expected.count - 1].ending
        }
        for _ in 0..<appends { expected.append(Reference.Line(content: Array("\(name),appended".utf8), ending: .lf)) }
        if reference.bom { try expect(reparsed.bom, "the BOM was lost") }
        for (index, (got, want)) in zip(reparsed.lines, expected).enumerated() {
            try expect(
                got == want, "after edits, line \(index + 1) of the output is not what was kept, replaced or appended")
        }
        try expect(
            reparsed.lines.count == expected.count,
            "after edits, \(reparsed.lines.count) lines, expected \(expected.count)")
    }

    // MARK: FuzzHash

    /// `PasswordHash(parsing:)` against the reference parser: the same strings parse,
    /// to the same fields, and format back to themselves; rounds outside 1…2,147,483,647
    /// (what PBKDF2 can run; what they cost is the cost limits' business) never parse. Then the same bytes build a hash from parts, and PBKDF2 runs only
    /// with one or two rounds.
    public static func hash(_ input: [UInt8]) throws(FuzzFailure) {
        let parsed = try? PasswordHash(parsing: input)
        let expected = Reference.parseHash(input)
        try expect(
            (parsed == nil) == (expected == nil),
            parsed == nil ? "a valid hash was refused" : "an invalid hash was accepted")
        if let hash = parsed, let expected {
            try expect(
                hash.algorithm == expected.algorithm && hash.rounds == expected.rounds && hash.salt == expected.salt
                    && hash.checksum == expected.checksum, "parsed fields differ from the reference")
            try expect((1...2_147_483_647).contains(hash.rounds), "rounds \(hash.rounds) accepted")
            try expect(Array(hash.string.utf8) == input, "a parsed hash does not format back to itself")
            try expect(PasswordHash(hash.string) == hash, "PasswordHash(String) differs from PasswordHash(parsing:)")
            if hash.rounds <= 2 { _ = try? hash.verify(Password(utf8: input.prefix(16))) }
        }

        // From parts: algorithm, rounds (often near the limits), salt and checksum sizes.
        var bytes = input.makeIterator()
        func byte() -> Int { Int(bytes.next() ?? 0) }
        let algorithm: HashAlgorithm = byte() & 1 == 0 ? .sha256 : .sha512
        let rounds: Int
        switch byte() % 4 {
        case 0: rounds = byte() - 2
        case 1: rounds = 2_147_483_647 + byte() - 128
        case 2: rounds = byte() << 24 | byte() << 16 | byte() << 8 | byte()
        default: rounds = -(byte() << 24 | byte() << 16 | byte() << 8 | byte())
        }
        let saltCount = byte() % 4 == 0 ? 1_000 + byte() : byte() % 40
        let checksumCount = byte() % 8 == 0 ? byte() % 70 : algorithm.digestCount
        let rest = Array(input.dropFirst(12))
        let salt = (0..<saltCount).map { rest.isEmpty ? UInt8(truncatingIfNeeded: $0) : rest[$0 % rest.count] }
        let checksum = (0..<checksumCount).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let valid = (1...2_147_483_647).contains(rounds) && saltCount <= 1024 && checksumCount == algorithm.digestCount
        do {
            let made = try PasswordHash(algorithm: algorithm, rounds: rounds, salt: salt, checksum: checksum)
            try expect(
                valid,
                "PasswordHash(algorithm:rounds:salt:checksum:) accepted rounds \(rounds), salt \(saltCount), checksum \(checksumCount)"
            )
            let text = made.string
            try expect(
                text
                    == "$pbkdf2-\(algorithm)$\(rounds)$\(Reference.encodeBase64(salt))$\(Reference.encodeBase64(checksum))",
                "string differs from the reference encoding")
            try expect((try? PasswordHash(parsing: text.utf8)) == made, "a formatted hash does not parse back")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            try expect(!valid, "valid parts were refused: \(error)")
        }

        // A real hash with a tiny round count verifies its password and no other.
        guard let policy = try? HashPolicy(algorithm: .pbkdf2(algorithm), rounds: 1 + byte() % 2),
            let made = try? PasswordHash(hashing: Password(utf8: rest.prefix(24)), policy: policy)
        else { throw FuzzFailure(description: "hashing with a tiny policy failed") }
        try expect((try? PasswordHash(parsing: made.string.utf8)) == made, "a new hash does not parse back")
        try expect(
            (try? made.verify(Password(utf8: rest.prefix(24)))) == true, "a new hash does not verify its password")
        try expect(
            (try? made.verify(Password(utf8: rest.prefix(24) + [0x21]))) == false,
            "a new hash verifies another password")
    }

    // MARK: Helpers

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
