import CredFileTestSupport
import Testing

@testable import CredFile

// The writer splices: it writes slices of the bytes it read and the changed lines
// (CredentialFile.writeRendered) instead of a rendered copy of the whole file. The
// bytes written must be exactly render(applying:), whatever the file and the changes.

/// The pieces `writeRendered` hands on, joined.
private func spliced(_ file: CredentialFile, _ changes: CredentialFile.Changes) -> [UInt8] {
    var out: [UInt8] = []
    file.writeRendered(applying: changes) { out += $0 }
    return out
}

@Suite("Splice: the writer's pieces join to render(applying:)")
struct SpliceTests {
    /// Lines with every shape the renderer treats apart: BOM, U+FEFF at a line start,
    /// CRLF, a lone CR, blank and comment lines, and sometimes no final newline.
    static func randomFile(_ rng: inout SeededRandom) -> [UInt8] {
        let shapes: [[UInt8]] = [
            Array("user,secret".utf8), Array("\u{FEFF}admin,pw".utf8), Array("# comment".utf8), [],
            Array(" \t".utf8), Array("a,$pbkdf2-sha256$1$AAAA$BBBB".utf8), Array("cr,x\r".utf8),
            Array(String(repeating: "long,", count: 30_000).utf8),
        ]
        var bytes: [UInt8] = rng.chance(0.3) ? CredentialFile.bom : []
        for _ in 0..<Int.random(in: 0..<12, using: &rng) {
            bytes += rng.pick(shapes)
            bytes += rng.chance(0.3) ? [0x0D, 0x0A] : [0x0A]
        }
        if rng.chance(0.3) {
            bytes += rng.pick(shapes)  // no final newline
        }
        return bytes
    }

    @Test("firstEntryContent, scanning in pieces of 1–64 bytes (1,000–5,000 for long lines), agrees with firstEntry on 300 seeded random files")
    func pieceScanAgrees() throws {
        var rng = SeededRandom(seed: 0xA5E17)
        let names = ["user", "\u{FEFF}admin", "admin", "a", "cr", "long", "# comment", "Caf\u{E9}", "nobody"]
        try withTemporaryDirectory { dir in
            let path = dir.file("pieces.txt")
            for round in 0..<300 {
                var bytes = Self.randomFile(&rng)
                if rng.chance(0.3) { bytes += Array("Cafe\u{301},x\n".utf8) }  // NFD, found as NFC
                try writeBytes(path, bytes)
                let file = CredentialFile(bytes: bytes)
                let store = CredentialStore(path: path)
                for name in names {
                    // Tiny pieces; a file with a 150 KB line gets larger ones (still many per line).
                    let pieceSize = Int.random(in: bytes.count > 10_000 ? 1000...5000 : 1...64, using: &rng)
                    let scanned = try store.firstEntryContent(named: name, pieceSize: pieceSize)
                    #expect(scanned.map(Array.init) == file.firstEntry(named: name).map { Array($0.content) }, "round \(round), \(name), pieces of \(pieceSize)")
                }
            }
            #expect(throws: CredFileError.self) { try CredentialStore(path: dir.file("missing")).hasEntry(named: "a") }
        }
    }

    @Test("200 seeded random files and edits: spliced bytes == rendered bytes")
    func randomEdits() {
        var rng = SeededRandom(seed: 0x5911CE)
        for round in 0..<200 {
            let file = CredentialFile(bytes: Self.randomFile(&rng))
            var changes = CredentialFile.Changes()
            for line in file.lines where rng.chance(0.4) {
                if rng.chance(0.5) {
                    changes.remove(line)
                } else {
                    // A change the library refuses (a line that would be malformed) is skipped.
                    try? changes.replaceSecret(of: line, with: rng.chance(0.5) ? "new" : String(repeating: "h", count: 60_000))
                }
            }
            if rng.chance(0.2) { try? changes.append(username: "added", secret: "pw") }
            #expect(spliced(file, changes) == file.render(applying: changes), "round \(round)")
        }
    }

    @Test(
        "Named cases: top lines removed up to a U+FEFF line, the only line removed, no change, a big file's middle line",
        arguments: [
            ("bom-line-comes-first", "a,1\n\u{FEFF}b,2\n", [1]),
            ("bom-file-first-removed", "\u{FEFF}a,1\nb,2\n", [1]),
            ("only-line", "a,1", [1]),
            ("nothing", "a,1\nb,2\r\n", []),
            ("last-without-newline", "a,1\nb,2", [2]),
        ])
    func namedRemovals(name: String, text: String, remove: [Int]) {
        let file = CredentialFile(text)
        var changes = CredentialFile.Changes()
        for number in remove { changes.remove(file.line(number)) }
        #expect(spliced(file, changes) == file.render(applying: changes), "\(name)")
    }

    @Test("A one-line change in a file of 200,000 lines is handed on in few pieces, most of them slices")
    func fewPieces() throws {
        let text = (0..<200_000).map { "user\($0),secret\($0)\n" }.joined()
        let file = CredentialFile(text)
        var changes = CredentialFile.Changes()
        try changes.replaceSecret(of: file.line(100_000), with: "changed")
        var pieces = 0
        var out: [UInt8] = []
        file.writeRendered(applying: changes) {
            pieces += 1
            out += $0
        }
        #expect(out == file.render(applying: changes))
        #expect(pieces <= 4, "\(pieces) pieces")
    }
}
