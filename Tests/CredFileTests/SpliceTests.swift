import CredFileTestSupport
import Testing

@testable import CredFile

// The writer splices: it writes stretches of the file it read and the changed lines
// (CredentialFile.writeRendered) instead of a rendered copy of the whole file, and
// render(applying:) joins those same pieces. The joined bytes must be exactly what the
// straightforward renderer below makes (the one credfile had before the pieces; the
// properties of rendering itself are ParserPropertyTests').

/// The pieces `writeRendered` hands on, joined (a stretch of the file as its bytes).
private func spliced(_ file: CredentialFile, _ changes: CredentialFile.Changes) -> [UInt8] {
    var out: [UInt8] = []
    file.writeRendered(applying: changes) { piece in
        switch piece {
        case .original(let range): out += file.bytes[range]
        case .new(let bytes): out += bytes
        }
    }
    return out
}

/// `changes` applied by building the new file in one array, line by line.
private func renderedInMemory(_ file: CredentialFile, _ changes: CredentialFile.Changes) -> [UInt8] {
    let bytes = file.bytes
    var out: [UInt8] = []
    var cursor = 0  // bytes before it are written
    for start in changes.edited.keys.sorted() where file.isLineStart(start) {
        let (content, ending) = bytes.withUnsafeBytes { FileSyntax.line(at: start, in: $0) }
        out.append(contentsOf: bytes[cursor..<content.lowerBound])
        if case .replace(let newContent)? = changes.edited[start]?.action {
            out.append(contentsOf: newContent)
            out.append(contentsOf: ending.bytes)
        }
        cursor = content.upperBound + ending.bytes.count
    }
    out.append(contentsOf: bytes[cursor...])
    if !changes.appended.isEmpty, let last = out.last, last != 0x0A, out.count > (file.hasBOM ? 3 : 0) {
        out += last == 0x0D ? [0x0D, 0x0A] : [0x0A]
    }
    for line in changes.appended { out += line + [0x0A] }
    if !file.hasBOM, out.starts(with: CredentialFile.bom) { out.insert(contentsOf: CredentialFile.bom, at: 0) }
    return out
}

@Suite("Splice: the writer's pieces join to the rendered bytes")
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

    @Test(
        "firstEntryContent, scanning in pieces of 1–64 bytes (1,000–5,000 for long lines), agrees with firstEntry on 300 seeded random files"
    )
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
                    #expect(
                        scanned.map(Array.init) == file.firstEntry(named: name).map { Array($0.content) },
                        "round \(round), \(name), pieces of \(pieceSize)")
                }
            }
            #expect(throws: CredFileError.self) { try CredentialStore(path: dir.file("missing")).hasEntry(named: "a") }
        }
    }

    @Test("200 seeded random files and edits: spliced bytes == rendered bytes")
    func randomEdits() throws {
        var rng = SeededRandom(seed: 0x5911CE)
        for round in 0..<200 {
            let file = CredentialFile(bytes: Self.randomFile(&rng))
            var changes = CredentialFile.Changes()
            for line in file.lines where rng.chance(0.4) {
                if rng.chance(0.5) {
                    changes.remove(line)
                } else {
                    // A change the library refuses (a line that would be malformed) is skipped.
                    try? changes.replaceSecret(
                        of: line, with: rng.chance(0.5) ? "new" : String(repeating: "h", count: 60_000))
                }
            }
            if rng.chance(0.2) {
                try? changes.append(username: rng.chance(0.3) ? "\u{FEFF}added" : "added", secret: "pw")
            }
            let expected = renderedInMemory(file, changes)
            #expect(spliced(file, changes) == expected, "round \(round)")
            #expect(try file.render(applying: changes) == expected, "round \(round)")
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
            ("bom-only-left", "\u{FEFF}a,1\n", [1]),
        ])
    func namedRemovals(name: String, text: String, remove: [Int]) throws {
        let file = CredentialFile(text)
        for appending in [false, true] {
            var changes = CredentialFile.Changes()
            for number in remove { changes.remove(file.line(number)) }
            if appending { try changes.append(username: "\u{FEFF}new", secret: "pw") }
            #expect(spliced(file, changes) == renderedInMemory(file, changes), "\(name), appending: \(appending)")
        }
    }

    @Test("Appending to an empty file, a BOM alone, a last line without an ending or ending in CR")
    func namedAppends() throws {
        for text in ["", "\u{FEFF}", "a,1", "a,1\r", "\u{FEFF}a,1", "a,1\n"] {
            for name in ["b", "\u{FEFF}b"] {
                let file = CredentialFile(text)
                var changes = CredentialFile.Changes()
                try changes.append(username: name, secret: "2")
                #expect(spliced(file, changes) == renderedInMemory(file, changes), "\(text.debugDescription) + \(name)")
            }
        }
    }

    @Test(
        "A one-line change in a file of 200,000 lines is handed on in few pieces, the large ones stretches of the file")
    func fewPieces() throws {
        let text = (0..<200_000).map { "user\($0),secret\($0)\n" }.joined()
        let file = CredentialFile(text)
        var changes = CredentialFile.Changes()
        try changes.replaceSecret(of: file.line(100_000), with: "changed")
        var pieces = 0
        var copied = 0
        file.writeRendered(applying: changes) { piece in
            pieces += 1
            if case .original(let range) = piece { copied += range.count }
        }
        #expect(spliced(file, changes) == renderedInMemory(file, changes))
        #expect(pieces <= 4, "\(pieces) pieces")
        #expect(
            copied > file.bytes.count - (1 << 17), "\(copied) of \(file.bytes.count) bytes left to the kernel's copy")
    }
}
