import Foundation
import Testing

@testable import CredFile
@testable import credfile

/// What the CLI prints from the library's values: escaped names and paths (SPEC §5),
/// `check --json` kinds, file-level findings, and the Spanish catalog.
@Suite struct OutputValuesTests {
    @Test func listShowsLookAlikeNamesDistinctly() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt",
                "admin,\(session.password("A-Pass-1~~~~~~~"))\nadmin\u{200B},\(session.password("B-Pass-2~~~~~~~"))\n"
                    + "\u{202E}nimda,\(session.password("C-Pass-3~~~~~~~"))\nadm\u{1B}[8min,\(session.password("D-Pass-4~~~~~~~"))\n"
            )
            let result = session.run(["list", file])
            #expect(result.status == 0, "\(result)")
            #expect(
                result.stdoutLines == [
                    "admin\tplaintext", "admin\\u{200b}\tplaintext", "\\u{202e}nimda\tplaintext",
                    "adm\\u{1b}[8min\tmalformed",
                ])
            #expect(
                !result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{202E}")
                    && !result.stdout.contains("\u{200B}"))
        }
    }

    @Test func checkEscapesNamesAndTheFilePath() throws {
        try withSession { session in
            let name = "x\nusers.txt:1: error: forged\u{1B}[2J\u{202E}"
            let path = session.path(name)
            try Data(
                "bob,\(session.password("P-1"))\n\u{202E}eve\u{200B},\(session.password("P-2"))\n\u{202E}eve\u{200B},\(session.password("P-3"))\n"
                    .utf8
            )
            .write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            let result = session.run(["check", path])
            #expect(result.status == 1, "\(result)")
            let shown = Escaped.path(path)
            #expect(result.stdoutLines.count == 2, "\(result)")
            for line in result.stdoutLines {
                #expect(line.hasPrefix(shown + ":"), "\(line)")
                #expect(!line.contains("\u{1B}") && !line.contains("\u{202E}") && !line.contains("\u{200B}"), "\(line)")
            }
            #expect(result.stdout.contains("'\\u{202e}eve\\u{200b}'"), "\(result)")
        }
    }

    /// Every error about a path prints it escaped, whichever layer made the message (the
    /// reader, the writer, the lock, the front door): a directory name cannot forge a
    /// second line of stderr or move the cursor.
    @Test(arguments: ["missing file", "hard links", "not a regular file", "lock file is a directory"])
    func errorsEscapeThePathTheyName(_ failure: String) throws {
        try withSession { session in
            let directory = session.path("x\nusers.txt:1: error: forged\u{1B}[2J\u{202E}")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let file = directory + "/users.txt"
            let arguments: [String]
            switch failure {
            case "missing file":
                arguments = ["list", file]
            case "hard links":
                try Data("bob,\(session.password("P-1"))\n".utf8).write(to: URL(fileURLWithPath: file))
                chmod(file, 0o600)
                link(file, directory + "/second")
                arguments = ["delete", file, "bob"]
            case "not a regular file":
                mkfifo(file, 0o600)
                arguments = ["list", file]
            default:
                try Data("bob,\(session.password("P-1"))\n".utf8).write(to: URL(fileURLWithPath: file))
                chmod(file, 0o600)
                try FileManager.default.createDirectory(atPath: file + ".lock", withIntermediateDirectories: false)
                arguments = ["delete", file, "bob"]
            }
            let result = session.run(arguments)
            #expect(result.status != 0, "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.contains(Escaped.path(directory)), "\(result)")
            #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{202E}"), "\(result)")
        }
    }

    @Test func checkJSONHasAKindPerFinding() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt", "bob,\(session.password("P-1"))\nbob,\(session.password("P-2"))\nann,\nx,$H$10$abc\n")
            let result = session.run(["check", "--json", file])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let findings = try #require(object["findings"] as? [[String: Any]])
            #expect(
                findings.map { $0["kind"] as? String } == [
                    "plaintext", "duplicate", "malformedEntry", "unsupportedHash",
                ])
        }
    }

    @Test func aFileOthersCanReadIsAWarningWithoutALine() throws {
        try withSession { session in
            let file = try session.write("users.txt", "bob,\(try InProcessTests.hash(session.password("P-1")))\n")
            chmod(file, 0o644)
            let result = session.run(["check", file])
            #expect(result.status == 0, "\(result)")
            #expect(
                result.stdoutLines.first?.hasPrefix(
                    "\(file): warning: the file can be read or written by group or others (mode 0644)") == true,
                "\(result)")
            let json = session.run(["check", "--json", file])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let findings = try #require(object["findings"] as? [[String: Any]])
            #expect(findings.first?["kind"] as? String == "permissions" && findings.first?["line"] as? Int == 0)
        }
    }

    @Test func findingsAndRefusalsInSpanish() throws {
        try withSession { session in
            let file = try session.write("users.txt", "bob,\(session.password("P-1"))\nann,\n")
            let spanish = ["LANG": "es_ES.UTF-8"]
            let result = session.run(["check", file], environment: spanish)
            #expect(
                result.stdoutLines == [
                    "\(file):1: warning: contraseña en texto plano; ejecute 'credfile upgrade'",
                    "\(file):2: error: entrada malformada del usuario 'ann': secreto vacío",
                ], "\(result)")
            let refused = session.run(
                ["add", file, "a,b"], stdin: [session.password("Never-Read-1~~~")], environment: spanish)
            #expect(refused.status == 2)
            #expect(
                refused.stderr == "credfile: el nombre de usuario contiene una coma\n",
                "no help hint for a refused name: \(refused)")
            let english = session.run(["add", file, "a,b"], stdin: [session.password("Never-Read-1~~~")])
            #expect(english.stderr == "credfile: username contains a comma\n", "\(english)")
        }
    }

    @Test func importNamesItsOwnLinesFromTheErrorValues() throws {
        try withSession { session in
            let file = try InProcessTests.twoUsers(session)
            let result = session.run(
                ["import", file, "--iterations", "1", "--plaintext"],
                stdin: [
                    "carol,\(session.password("C4rol-Pass-1~~~"))", "", "dave,\(session.password("D4ve-Pass-2~~~~"))",
                    "carol,\(session.password("Again-3-x~~~~~~"))",
                ],
                environment: ["LANG": "es_ES.UTF-8"])
            #expect(result.status == 2)
            #expect(
                result.stderr.hasPrefix("credfile: standard input line 4: el mismo usuario que la línea 1\n"),
                "\(result)")
        }
    }
}
