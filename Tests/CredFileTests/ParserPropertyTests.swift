import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import _CredFileFuzzChecks

// Seeded property tests of the parser: thousands of random files built from the lines
// SPEC §2 talks about, checked against the bytes they came from and against the naive,
// independent reference the fuzz targets use (`_CredFileFuzzChecks.Reference`, written
// without the library's classifier). A failure prints the seed and file index, so it
// replays exactly.

extension ParserPropertyTests {
    /// Builds random credential files from a fixed seed.
    struct Generator {
        var rng: SeededRandom

        /// Names that collide under NFC, differ by case, or contain one another.
        static let names: [String] = [
            "valencia", "xvalencia", "ncia", "bob", "admin", "Admin", "caf\u{E9}", "cafe\u{301}", "Kate", "\u{212A}ate",
            "\u{C5}sa", "A\u{30A}sa", "\u{212B}sa", "\u{D55C}", "\u{1112}\u{1161}\u{11AB}", "\u{F1}and\u{FA}",
            "n\u{303}andu\u{301}", "日本", "\u{FB01}ona", "fiona", "\u{FEFF}bob", " bob", "bob ", "o\u{308}", "\u{F6}",
            "q\u{307}\u{323}", "q\u{323}\u{307}", "\u{1E0B}\u{323}", "\u{1E0D}\u{307}",
        ]

        static let invalidUTF8: [[UInt8]] = [
            [0x80], [0xFF], [0xFE], [0xC0, 0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98],
        ]

        /// Hash syntax of schemes no verified family owns (SPEC §3.2): unsupported hashes.
        static let unsupported: [String] = [
            "$H$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0", "$P$984478476IagS59wHZvyQMArzfx58u.", "$md5$rounds=904$salt$hash",
            "$sha1$40000$salt$hash", "$gy$j9T$salt$hash", "$sm3$salt$hash", "$2x$10$abc", "$3$$hash", "$hunter2$x",
            "{MD5}X03MO1qnZdYdgyfeuILPmQ==", "{SMD5}abc", "{CLEARTEXT}pw", "{ARGON2}x", "{hunter2}x",
            "unsalted_md5$abc",
            "crypt$$abc",
        ]

        /// Prefixes a verified family owns (SPEC §3.2), well-formed (a peer hash) or not
        /// (malformed): the family's exact syntax decides, never "unsupported".
        static let peers: [String] = [
            // Well-formed, as the peers write them.
            "$2b$05$Mey1/eqXqYWDCiO1EFF0P.DwEQKnF0pm425362qNAL3BfRsaDp/PW",
            "$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/",
            "$6$lw+2YcVPen9OCKVH$Sghu5hui6xwFeIENQ7eRbt9Y5tFNUJu9X0Y69j+T7mgSmwe+MZLCdxhZE3Fyw+OBT84uy3SA8JEuAve3lmKW2w==",
            "$7$101$tOJvNLYX5nw2mGOW$HWoFWiGzvqnUTstBUkRNyGJrdJ8jptuGoWJ/8d8CWfrXjSlCecaxHgGCJTby6eguiPbeeRnpxO2pKiO79AJu1Q==",
            "$7$CU..../....2SWmUw7Vgpq/JQAcNEVO3.$yJB0XFz0sPChC6JvT7HwEzIOsnCwHjiuIPJmAQIJ6GB",
            "$1$7IE/nXqy$Iz9JntCPPO/a5pn28wE4H1", "$apr1$1xrgQkSI$oehaBezUg.4bR0ynO2qUF0",
            "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "{SSHA}FJ3Kk1ffrHPsPsLwD2HOHhoKP08aNwE5", "{CRYPT}/69ivQihm45dQ",
            "md5$7fgN2fKz1AW3$26c5bacf71e89bba868cd88862539979",
            // The same prefixes, broken.
            "$2y$10$abcdefghijklmnopqrstuv", "$2b$12$x", "$6$salt$hash", "$6$a$b+", "$7$101$salt$hash", "$7$x$y$z",
            "$1$abc$def", "$apr1$a$b", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA", "$argon2x$v=19",
            "{ssha}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "{SHA}x", "{CRYPT}$6$a$b", "{PBKDF2-SHA256}1000$a$b", "{BLF-CRYPT}x",
            "{ARGON2ID}$argon2i$x", "argon2$x", "bcrypt$x", "scrypt$1$2", "sha1$s$00", "scrypt:1:2:3$s$h",
            "pbkdf2:sha256$x",
        ]

        static let dollarJunk: [String] = ["$", "$abc", "$$", "$a b$c", "$-$", "{}", "{a b}", "{SSHA", "{", "{}x"]

        mutating func name() -> [UInt8] {
            if rng.chance(0.75) { return Array(rng.pick(Self.names).utf8) }
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789._-".utf8)
            return (0..<Int.random(in: 1...8, using: &rng)).map { _ in rng.pick(alphabet) }
        }

        mutating func plaintext() -> [UInt8] {
            var out: [UInt8] = []
            for _ in 0..<Int.random(in: 1...16, using: &rng) {
                switch Int.random(in: 0..<20, using: &rng) {
                case 0: out += Array("é".utf8)
                case 1: out += Array("e\u{301}".utf8)
                case 2: out += Array("😀".utf8)
                case 3: out.append(0x09)
                case 4: out.append(UInt8(ascii: ","))
                default: out.append(UInt8.random(in: 0x20...0x7E, using: &rng))
                }
            }
            return out
        }

        mutating func wellFormedHash() -> [UInt8] {
            let algorithm: HashAlgorithm = rng.chance(0.7) ? .sha256 : .sha512
            let rounds =
                rng.chance(0.3)
                ? rng.pick([1, 999, 1000, 599_999, 600_000, 1_200_000, 50_000_000])
                : Int.random(in: 1...50_000_000, using: &rng)
            let salt = rng.bytes(rng.chance(0.1) ? Int.random(in: 0...64, using: &rng) : 16)
            let checksum = rng.bytes(algorithm.digestCount)
            do {
                return Array(
                    try PasswordHash(algorithm: algorithm, rounds: rounds, salt: salt, checksum: checksum).string.utf8)
            } catch {
                preconditionFailure("parts are in range by construction: \(error)")
            }
        }

        /// A `$pbkdf2…` string that is usually, not always, broken.
        mutating func brokenHash() -> [UInt8] {
            var hash = wellFormedHash()
            let dollars = hash.indices.filter { hash[$0] == UInt8(ascii: "$") }
            switch Int.random(in: 0..<9, using: &rng) {
            case 0: hash.removeLast(Int.random(in: 1...4, using: &rng))  // short checksum
            case 1: hash.removeSubrange(dollars[3]...)  // no checksum field
            case 2: hash.insert(UInt8(ascii: "0"), at: dollars[2] + 1)  // leading zero
            case 3:  // rounds out of range or not a number
                let rounds = rng.pick(["0", "2147483648", "", "-5", "1e3", "999999999999"])
                hash.replaceSubrange((dollars[2] + 1)..<dollars[3], with: Array(rounds.utf8))
            case 4: hash[Int.random(in: (dollars[3] + 1)..<hash.count, using: &rng)] = rng.pick(Array("+=!$ *".utf8))
            case 5: hash.append(UInt8(ascii: "$"))
            case 6:  // another variant
                let variant = rng.pick(["pbkdf2-sha1", "pbkdf2", "pbkdf2-sha384", "pbkdf2-SHA256"])
                hash.replaceSubrange(1..<dollars[1], with: Array(variant.utf8))
            case 7:  // any alphabet character: may stay canonical, may not
                let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./".utf8)
                hash[hash.count - 1] = rng.pick(alphabet)
            default: hash = Array("$pbkdf2".utf8) + (rng.chance(0.5) ? Array("-sha256$".utf8) : [])
            }
            return hash
        }

        mutating func secret() -> [UInt8] {
            switch Int.random(in: 0..<13, using: &rng) {
            case 0, 1: wellFormedHash()
            case 2: brokenHash()
            case 3: Array(rng.pick(Self.unsupported).utf8)
            case 4: Array(rng.pick(Self.peers).utf8)
            case 5: Array(rng.pick(Self.dollarJunk).utf8)
            default: plaintext()
            }
        }

        mutating func line() -> [UInt8] {
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<8: return (0..<Int.random(in: 0...4, using: &rng)).map { _ in rng.pick([0x20, 0x09] as [UInt8]) }
            case 8..<14: return Array("#".utf8) + plaintext()
            case 14..<17: return Array(",".utf8) + secret()  // empty username
            case 17..<20: return name() + Array(",".utf8)  // empty secret
            case 20..<22: return name()  // no comma
            case 22..<28:  // a control byte somewhere
                var line = name() + Array(",".utf8) + secret()
                line.insert(rng.pick(ParserFixture.controlBytes), at: Int.random(in: 0...line.count, using: &rng))
                return line
            case 28..<34:  // invalid UTF-8 somewhere
                var line = name() + Array(",".utf8) + secret()
                line.insert(contentsOf: rng.pick(Self.invalidUTF8), at: Int.random(in: 0...line.count, using: &rng))
                return line
            case 34..<36:  // garbage, LF and CR included
                return rng.bytes(Int.random(in: 1...24, using: &rng))
            default: return name() + Array(",".utf8) + secret()
            }
        }

        /// A line of 65,536 + `excess` bytes (the limit is 65,536 without the ending).
        mutating func longLine(excess: Int) -> [UInt8] {
            let head = name() + Array(",".utf8)
            let count = FileSyntax.maximumLineLength + excess - head.count
            return head + [UInt8](repeating: rng.pick(Array("aZ$,é".utf8)), count: count - 1) + [UInt8(ascii: "z")]
        }

        /// A file of up to 14 random lines; with `longLine`, one of them is that long line.
        mutating func file(longLine excess: Int? = nil) -> [UInt8] {
            var bytes = rng.chance(0.3) ? CredentialFile.bom : []
            let count = Int.random(in: excess == nil ? 0...14 : 1...14, using: &rng)
            let long = excess == nil ? -1 : Int.random(in: 0..<count, using: &rng)
            for index in 0..<count {
                if let excess, index == long { bytes += longLine(excess: excess) } else { bytes += line() }
                let last = index == count - 1
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<5: bytes.append(0x0A)
                case 5..<8: bytes += [0x0D, 0x0A]
                // lone CR at the end
                case 8: if !last { bytes.append(0x0A) } else if rng.chance(0.5) { bytes.append(0x0D) }
                default: if !last { bytes += [0x0D, 0x0A] }  // no final newline
                }
            }
            return bytes
        }
    }

    /// The fuzz targets' oracle (`_CredFileFuzzChecks.Reference`: the one independent,
    /// naive reading of SPEC §2 in the repo), seen through the coarse kinds these tests
    /// count. Nothing here restates a rule.
    enum Oracle {
        enum Kind: Hashable {
            case blank, comment, malformed, hash, plaintext, hashOrMalformed, locked, lockedOrPlaintext
        }

        static let comma = UInt8(ascii: ",")

        /// What SPEC §2 says a line is. `hashOrMalformed`: a prefix a verified peer family
        /// owns or shares (SPEC §3.2): the family's exact syntax decides, never plaintext.
        static func classify(_ line: [UInt8]) -> Kind {
            switch Reference.classify(line) {
            case .blank: .blank
            case .comment: .comment
            case .entry(_, _, .malformed): .malformed
            case .entry(_, _, .plaintext): .plaintext
            case .entry(_, _, .pbkdf2), .entry(_, _, .unsupported): .hash
            case .entry(_, _, .peer): .hashOrMalformed
            case .entry(_, _, .locked(.pbkdf2)): .locked
            case .entry(_, _, .locked): .lockedOrPlaintext  // `!` before a peer's prefix: the family decides
            }
        }

        static func isControl(_ byte: UInt8) -> Bool { Reference.isControl(byte) }

        /// `$…` or `{SCHEME}…`: anything the oracle does not read as plaintext.
        static func hasHashSyntax(_ secret: [UInt8]) -> Bool { Reference.classifySecret(secret) != .plaintext }

        /// A name's comparison key: the oracle's key (text or raw bytes), as NFC bytes
        /// through Foundation (ICU), so it can key a dictionary.
        static func key(_ field: some Collection<UInt8>) -> [UInt8] {
            switch Reference.Key(Array(field)) {
            case .text(let text): Array(text.precomposedStringWithCanonicalMapping.utf8)
            case .raw(let bytes): bytes
            }
        }
    }
}

@Suite("Parser properties, seeded")
struct ParserPropertyTests {
    static let seed: UInt64 = 0x00C0_FFEE_2024_0601
    static let fileCount = 2_000

    @Test("random files: exact bytes, invariants, lookups and edits")
    func randomFiles() throws {
        var generator = Generator(rng: SeededRandom(seed: Self.seed))
        var seen = (lines: 0, long: 0, overLong: 0, lookups: 0, shadowedLookups: 0)
        var kinds: [Oracle.Kind: Int] = [:]
        var secrets = (plaintext: 0, pbkdf2: 0, unsupported: 0, malformedHash: 0, peer: 0, malformedPeer: 0)
        for index in 0..<Self.fileCount {
            // Every 100th file holds one line at the limit: 1 under, at, 1 and 2 over, far over.
            // (Few, because a 64 KiB line costs milliseconds in a debug build.)
            let bytes = generator.file(longLine: index % 100 == 0 ? [-1, 0, 1, 2, 1000][index / 100 % 5] : nil)
            let file = CredentialFile(bytes: bytes)
            let context = Comment(rawValue: "seed \(Self.seed), file \(index)")
            seen.lines += file.lineCount

            // (a) render() is the identity; (b) the lines put back together are the bytes.
            #expect(file.render() == bytes, context)
            // check's fast path for clean plaintext lines says exactly what full classification says.
            #expect(
                file.findings(policy: .standard, fastPath: true) == file.findings(policy: .standard, fastPath: false),
                context)
            let lines = Array(file.lines)
            var rebuilt = file.hasBOM ? CredentialFile.bom : []
            for line in lines { rebuilt += line.content + line.ending.bytes }
            #expect(rebuilt == bytes, context)
            #expect(file.hasBOM == bytes.starts(with: CredentialFile.bom), context)
            for (offset, line) in lines.enumerated() {
                #expect(line.number == offset + 1, context)
                #expect(!line.content.contains(0x0A), context)
                let isLast = offset == lines.count - 1
                // Only the last line may lack an ending; a CR right before an LF is a CRLF ending.
                if !isLast { #expect(line.ending != .none, context) }
                if line.content.last == 0x0D { #expect(line.ending != .lf, context) }
            }

            // (c) invariants, and the classification against the reference.
            let kindsOfLines = lines.map(\.kind)  // classify each line once
            for (line, kind) in zip(lines, kindsOfLines) {
                let content = Array(line.content)
                let expected = Oracle.classify(content)
                kinds[expected, default: 0] += 1
                if content.count >= 65_535 { seen.long += 1 }
                if content.count > 65_536 { seen.overLong += 1 }
                let where_ = Comment(rawValue: "seed \(Self.seed), file \(index), line \(line.number)")
                switch kind {
                case .blank: #expect(expected == .blank, where_)
                case .comment: #expect(expected == .comment, where_)
                case .entry(let entry):
                    let comma = content.firstIndex(of: Oracle.comma)
                    #expect(Array(entry.username) == (comma.map { Array(content[..<$0]) } ?? []), where_)
                    #expect(Array(entry.secretBytes) == (comma.map { Array(content[($0 + 1)...]) } ?? []), where_)
                    let secret = Array(entry.secretBytes)
                    if entry.isMalformed {
                        #expect(expected == .malformed || expected == .hashOrMalformed, where_)
                        if secret.starts(with: Array("$pbkdf2".utf8)) { secrets.malformedHash += 1 }
                        if expected == .hashOrMalformed { secrets.malformedPeer += 1 }
                        continue
                    }
                    #expect(expected != .malformed, where_)
                    #expect(!entry.username.isEmpty && !secret.isEmpty, where_)
                    #expect(!entry.username.contains(Oracle.comma), where_)
                    #expect(!content.contains(where: Oracle.isControl), where_)
                    #expect(content.count <= 65_536, where_)
                    switch entry.secret {
                    case .plaintext:
                        secrets.plaintext += 1
                        #expect(expected == .plaintext || expected == .lockedOrPlaintext, where_)
                        if expected == .plaintext { #expect(!Oracle.hasHashSyntax(secret), where_) }
                    case .pbkdf2(let hash):
                        secrets.pbkdf2 += 1
                        #expect(Array(hash.string.utf8) == secret, where_)
                        #expect(expected == .hash, where_)
                    case .unsupportedHash:
                        secrets.unsupported += 1
                        #expect(Oracle.hasHashSyntax(secret) && !secret.starts(with: Array("$pbkdf2".utf8)), where_)
                        #expect(expected == .hash || expected == .hashOrMalformed, where_)
                    case .peer:
                        secrets.peer += 1
                        #expect(expected == .hashOrMalformed, where_)
                    case .locked:
                        #expect(expected == .locked || expected == .lockedOrPlaintext, where_)
                    case .malformed:
                        Issue.record("isMalformed disagrees with .malformed: \(where_.rawValue)")
                    }
                }
            }

            // (d) the fast scanner agrees with a naive first-match over the classified lines.
            let named: [(number: Int, key: [UInt8])] = zip(lines, kindsOfLines).compactMap { line, kind in
                guard case .entry(let entry) = kind, !entry.username.isEmpty else { return nil }
                return (line.number, Oracle.key(entry.username))
            }
            var counts: [[UInt8]: Int] = [:]
            for entry in named { counts[entry.key, default: 0] += 1 }
            var lookups = (0..<3).map { _ in String(decoding: generator.name(), as: UTF8.self) }
            let duplicated = named.filter { (counts[$0.key] ?? 0) > 1 }
            for entry in named.prefix(2) + duplicated.suffix(2) {
                guard let name = String(validating: entry.key, as: UTF8.self) else { continue }
                // Look the name up precomposed or decomposed, whichever the file holds.
                lookups.append(generator.rng.chance(0.5) ? name : name.decomposedStringWithCanonicalMapping)
            }
            for name in lookups {
                let key = Oracle.key(Array(name.utf8))
                let naive = named.first { $0.key == key }?.number
                #expect(file.firstEntry(named: name)?.number == naive, "\(context) name \(Array(name.unicodeScalars))")
                // Every entry of the name (what delete removes), through the same scanner.
                #expect(
                    file.entries(named: name).map(\.number) == named.filter { $0.key == key }.map(\.number), context)
                seen.lookups += 1
                if (counts[key] ?? 0) > 1 { seen.shadowedLookups += 1 }
            }
            if let name = lookups.last {
                let key = Oracle.key(Array(name.utf8))
                #expect(
                    file.entries(named: name).map(\.number) == named.filter { $0.key == key }.map(\.number), context)
            }
            var firstOfKey = Set<[UInt8]>()
            let naiveEffective = named.filter { firstOfKey.insert($0.key).inserted }.map(\.number)
            #expect(file.effectiveEntries().map(\.number) == naiveEffective, context)

            // (e) random edits leave every other line byte for byte.
            try checkEdits(file, lines: lines, kinds: kindsOfLines, generator: &generator, context: context)
        }

        // The generator reached every case it is meant to reach.
        #expect(seen.lines >= 5 * Self.fileCount && seen.lookups >= 3 * Self.fileCount, "\(seen)")
        #expect(seen.long >= 20 && seen.overLong >= 12, "long lines: \(seen.long), over the limit: \(seen.overLong)")
        #expect(seen.shadowedLookups >= 200, "lookups of shadowed names: \(seen.shadowedLookups)")
        for kind in [Oracle.Kind.blank, .comment, .malformed, .hash, .plaintext] {
            #expect(kinds[kind, default: 0] >= 500, "\(kind): \(kinds[kind, default: 0])")
        }
        #expect(secrets.pbkdf2 >= 500 && secrets.unsupported >= 200 && secrets.malformedHash >= 200, "\(secrets)")
        #expect(secrets.peer >= 200 && secrets.malformedPeer >= 200, "peer hashes, well-formed and not: \(secrets)")
    }

    /// Applies random replaceSecret / remove / append edits and checks the output
    /// against the same edits done by hand on the lines.
    private func checkEdits(
        _ file: CredentialFile, lines: [CredentialLine], kinds: [LineKind], generator: inout Generator,
        context: Comment
    ) throws {
        var changes = CredentialFile.Changes()
        // What each kept line should become; removed lines are left out.
        var kept: [(content: [UInt8], ending: LineEnding)] = []
        for (line, kind) in zip(lines, kinds) {
            let roll = Int.random(in: 0..<10, using: &generator.rng)
            if roll < 2 {
                changes.remove(line)
            } else if roll < 4, case .entry(let entry) = kind, entry.hasName {
                let secret =
                    String(decoding: generator.plaintext().filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self) + "!"
                let replaced = Array(entry.username) + [Oracle.comma] + Array(secret.utf8)
                // A change never writes a malformed line: refused exactly when the
                // replaced line would be malformed (a control byte or bad UTF-8 in the name).
                let wouldBeMalformed = Oracle.classify(replaced) == .malformed
                let accepted = (try? changes.replaceSecret(of: line, with: secret)) != nil
                #expect(accepted == !wouldBeMalformed, context)
                kept.append(accepted ? (replaced, line.ending) : (Array(line.content), line.ending))
            } else {
                kept.append((Array(line.content), line.ending))
            }
        }
        var appended: [[UInt8]] = []
        for _ in 0..<Int.random(in: 0...2, using: &generator.rng) {
            let name = "new\(Int.random(in: 0..<1000, using: &generator.rng))"
            #expect(throws: Never.self) { try changes.append(username: name, secret: "pw") }
            appended.append(Array("\(name),pw".utf8))
        }

        // By hand: the lines as they are, then one line ending after a last line without
        // one when something is appended: LF, or CRLF when the line ends in a CR (an LF
        // alone would turn that CR into the line's ending and change its meaning).
        let addsEnding = !appended.isEmpty && kept.last?.ending == LineEnding.none
        if addsEnding { kept[kept.count - 1].ending = kept[kept.count - 1].content.last == 0x0D ? .crlf : .lf }
        var expected = file.hasBOM ? CredentialFile.bom : []
        for line in kept { expected += line.content + line.ending.bytes }
        for line in appended { expected += line + [0x0A] }
        // A line starting with U+FEFF that comes to the very start gets a BOM in front,
        // or the parser would skip its U+FEFF (see ParserTests.bomNeverMovesToTheStart).
        if !file.hasBOM, expected.starts(with: CredentialFile.bom) { expected = CredentialFile.bom + expected }
        let output = try file.render(applying: changes)
        #expect(output == expected, context)

        // Parsed again, the kept lines are the same lines, then the appended ones.
        let again = Array(CredentialFile(bytes: output).lines)
        #expect(again.count == kept.count + appended.count, context)
        for (line, want) in zip(again, kept) {
            #expect(Array(line.content) == want.content, context)
            #expect(line.ending == want.ending, context)
        }
        for (line, want) in zip(again.dropFirst(kept.count), appended) {
            #expect(Array(line.content) == want && line.ending == .lf, context)
        }
    }
}
