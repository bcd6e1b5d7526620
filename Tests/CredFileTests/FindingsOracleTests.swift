import CredFileTestSupport
import Testing

@testable import CredFile

// `check` judges every line and makes its name's hash in one pass, and only then learns
// which lines are shadowed (SPEC §2: the first line of a name decides). These tests hold
// that to the plain definition: a shadowed line has exactly one finding, that it is a
// duplicate of the first line with its name; any other line has the findings it has in a
// file of its own; the plaintext lines that are not shadowed get one warning, at the
// first of them, with their count.

@Suite("Findings against the line-by-line definition")
struct FindingsOracleTests {
    /// The findings the definition gives for `bytes`.
    static func expectedFindings(_ bytes: [UInt8]) -> [Finding] {
        let file = CredentialFile(bytes: bytes)
        var firstLineOfName: [[UInt8]: Int] = [:]
        var findings: [Finding] = []
        var plaintextLines: [Int] = []
        for line in file.lines {
            let content = Array(line.content)
            // A name: the bytes before the first comma of a line that is no comment, when
            // there are any; compared in NFC.
            if content.first != UInt8(ascii: "#"), let comma = content.firstIndex(of: UInt8(ascii: ",")), comma > 0 {
                let key = FileSyntax.nameKey(content[..<comma])
                if let first = firstLineOfName[key] {
                    findings.append(
                        Finding(line: line.number, severity: .error, detail: .duplicate(user: key, firstLine: first)))
                    continue
                }
                firstLineOfName[key] = line.number
            }
            // Alone in a file (after a BOM, so a U+FEFF that starts the line stays in it).
            for finding in CredentialFile(bytes: CredentialFile.bom + content).findings(policy: .standard) {
                #expect(finding.line == 1)
                if case .plaintext(let count) = finding.detail {
                    #expect(count == 1)
                    plaintextLines.append(line.number)
                } else {
                    findings.append(Finding(line: line.number, severity: finding.severity, detail: finding.detail))
                }
            }
        }
        if let first = plaintextLines.first {
            let warning = Finding(line: first, severity: .warning, detail: .plaintext(count: plaintextLines.count))
            findings.insert(warning, at: findings.firstIndex { $0.line >= first } ?? findings.endIndex)
        }
        return findings
    }

    @Test("seeded random files")
    func randomFiles() {
        let seed: UInt64 = 0x0F1D_1265_2026_1201
        var generator = ParserPropertyTests.Generator(rng: SeededRandom(seed: seed))
        for index in 0..<1_500 {
            let bytes = generator.file()
            let file = CredentialFile(bytes: bytes)
            let expected = Self.expectedFindings(bytes)
            let context = Comment(rawValue: "seed \(seed), file \(index)")
            #expect(file.findings(policy: .standard) == expected, context)
            #expect(file.findings(policy: .standard, fastPath: false) == expected, context)
        }
    }

    @Test("shadowed lines: plaintext ones are not counted, and the warning moves past them")
    func shadowedPlaintext() {
        let hash = "$pbkdf2-sha256$1200000$c2FsdHNhbHRzYWx0$4uW0wA3gCEfnUbWZqMX8EHqOH8.tW3t84nqPANJRvR8"
        let files = [
            "bob,\(hash)\nbob,plain\ncarol,plain\n",  // the first plaintext line is shadowed
            "bob,\(hash)\nbob,plain\n",  // the only one is: no warning
            "bob,plain\nbob,plain\nbob,plain\n",  // count 1, at line 1
            "a,x\n#c,y\nb,\(hash)\na,y\nb,z\nc,w\n",  // two shadowed, one of them plaintext
            "caf\u{E9},\(hash)\ncafe\u{301},pw\n\u{FEFF}x,pw\nx,pw\n",  // NFC names, U+FEFF in a name
            "bob,\n bob,x\nbob,y\n",  // a malformed first line still decides
        ]
        for text in files {
            let bytes = Array(text.utf8)
            let file = CredentialFile(bytes: bytes)
            #expect(file.findings(policy: .standard) == Self.expectedFindings(bytes), Comment(rawValue: text))
            #expect(file.findings(policy: .standard, fastPath: false) == Self.expectedFindings(bytes))
        }
        // The first file, spelled out.
        let findings = CredentialFile("bob,\(hash)\nbob,plain\ncarol,plain\n").findings(policy: .standard)
        #expect(findings.map(\.line) == [2, 3])
        #expect(findings.last?.detail == .plaintext(count: 1))
    }

    @Test("mapped or read, a file has the same findings")
    func mappedFile() throws {
        try withTemporaryDirectory { directory in
            // Above the mapping threshold, and with every kind of line.
            var generator = ParserPropertyTests.Generator(rng: SeededRandom(seed: 7))
            var bytes: [UInt8] = []
            while bytes.count < FileReader.mappingMinimum + 4096 { bytes += generator.file() + [0x0A] }
            let path = directory.path + "/big.txt"
            try writeBytes(path, bytes)
            let store = CredentialStore(path: path)
            #expect(
                try store.findings() == FilePermissions.findings(path: path) + CredentialFile(bytes: bytes).findings())
        }
    }
}
