import CredFileTestSupport
import Testing

@testable import CredFile

// check, list and the effective entries run their passes in pieces on every core
// (Parallel.map). On the machine's own sizes a piece is 32,768 lines or 4 MiB, so the
// other tests' files fit in one piece; here every pass is split into 2–8 pieces whatever
// the file's size, so piece boundaries fall everywhere (inside a BOM, between CR and LF,
// between a duplicate and its first line), and every answer must equal the one-piece one.
@Suite("Pieces: passes split at any boundary give the one-piece answers")
struct PieceTests {
    /// Lines that exercise every rule a pass applies: duplicates (also across NFC/NFD
    /// and after a BOM), comments, blanks, malformed entries, own and peer hashes, weak
    /// and costly ones, CRLF, a lone CR, names that need escaping.
    static func randomFile(_ rng: inout SeededRandom) -> [UInt8] {
        let shapes: [String] = [
            "alice,pw", "bob,$pbkdf2-sha256$1200000$AAAAAAAAAAAAAAAAAAAAAA$" + String(repeating: "A", count: 43),
            "carol,$pbkdf2-sha256$1$AAAA$" + String(repeating: "A", count: 43), "dave,$pbkdf2-sha512$99$x$y",
            "Caf\u{E9},1", "Cafe\u{301},2", "\u{FEFF}alice,3", "# comment", "", " \t", "no comma", ",empty",
            "eve,$2y$10$abcdefghijklmnopqrstuu", "back\\slash,1", "tab\tname,x", "mallory,{SSHA}abc",
            "x,pbkdf2_sha256$1000$salt$AAAA", "user\u{7F},1", "cr,x\r",
        ]
        var bytes: [UInt8] = rng.chance(0.2) ? CredentialFile.bom : []
        for _ in 0..<Int.random(in: 0..<60, using: &rng) {
            var line = rng.pick(shapes)
            if rng.chance(0.3) { line = "u\(Int.random(in: 0..<8, using: &rng))," + line }
            bytes += Array(line.utf8)
            bytes += rng.chance(0.2) ? [0x0D, 0x0A] : [0x0A]
        }
        if rng.chance(0.3) { bytes += Array(rng.pick(shapes).utf8) }  // no final newline
        return bytes
    }

    /// Everything the passes compute, for one file.
    struct Answers: Equatable {
        var starts: [Int]
        var earlier: [Int?]
        var findings: [Finding]
        var listed: [String]
        var listing: [UInt8]
        var effective: [Int]
    }

    static func answers(_ bytes: [UInt8], pieces: Int?) -> Answers {
        Parallel.$testPieceCount.withValue(pieces) {
            let file = CredentialFile(bytes: bytes)  // a fresh file: its line index is built here
            let firstLines = file.firstLines()
            var listing: [UInt8] = []
            file.forEachListingBlock(policy: .standard) { listing += $0 }
            return Answers(
                starts: file.lineStarts,
                earlier: (0..<file.lineCount).map { firstLines.earlierLine(of: $0 + 1) },
                findings: file.findings(policy: .standard),
                listed: file.listing(policy: .standard).map { "\($0.line) \(Escaped.name($0.username)) \($0.storage)" },
                listing: listing,
                effective: file.effectiveEntries().map(\.number))
        }
    }

    @Test("300 seeded random files, split into 2, 3, 5 and 8 pieces")
    func piecesAgree() {
        var rng = SeededRandom(seed: 0x9_1ECE5)
        for round in 0..<300 {
            let bytes = Self.randomFile(&rng)
            let whole = Self.answers(bytes, pieces: 1)
            for pieces in [2, 3, 5, 8] {
                #expect(Self.answers(bytes, pieces: pieces) == whole, "round \(round), \(pieces) pieces")
            }
        }
    }

    @Test("the split really happens: a pass over 8 lines in 8 pieces runs 8 bodies")
    func splitHappens() {
        let ranges = Parallel.$testPieceCount.withValue(8) { Parallel.map(8) { $0 } }
        #expect(ranges == (0..<8).map { $0..<($0 + 1) })
        #expect(Parallel.$testPieceCount.withValue(3) { Parallel.map(0) { $0 } } == [0..<0])
    }
}
