import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// The built `credfile` executable, run as a process: real file descriptors, real
/// `main.swift`, real exit statuses.
@Suite struct BinaryTests {
    func run(_ session: CLISession, _ arguments: [String], stdin: String?, lang: String = "C") throws -> CLIResult {
        try BuiltBinary.run(
            arguments, stdin: stdin.map { Array($0.utf8) }, in: session,
            environment: BuiltBinary.environment(lang: lang))
    }

    @Test func theExecutableIsThere() throws {
        let path = try BuiltProduct.path("credfile")
        #expect(FileManager.default.isExecutableFile(atPath: path))
    }

    @Test func exitStatusesAndTheErrorPrefix() throws {
        try withSession { session in
            let file = session.path("users.txt")
            let pw = session.password("Binary-Pass-1~~")
            let added = try run(session, ["add", file, "alice", "--iterations", "1"], stdin: pw + "\n")
            #expect(added.status == 0 && added.stdout.isEmpty, "\(added)")
            #expect(added.stderr == "credfile: warning: 1 iterations is below the minimum of 600000 (OWASP)\n")

            let granted = try run(session, ["verify", file, "alice", "--iterations", "1"], stdin: pw + "\n")
            #expect(granted == CLIResult(status: 0, stdout: "", stderr: ""))

            let denied = try run(
                session, ["verify", file, "alice", "--iterations", "1"],
                stdin: session.password("Wrong-2~~~~~~~~") + "\n")
            let unknown = try run(session, ["verify", file, "nobody", "--iterations", "1"], stdin: pw + "\n")
            #expect(denied == CLIResult(status: 1, stdout: "", stderr: "credfile: Wrong username or password.\n"))
            #expect(unknown == denied)

            let exists = try run(session, ["add", file, "alice", "--iterations", "1"], stdin: pw + "\n")
            #expect(exists.status == 3, "\(exists)")
            expectErrorFormat(exists)

            let usage = try run(session, [Canary.option, "verify", file, Canary.word], stdin: pw + "\n")
            expectUsageError(usage)
            #expect(usage.stdout.isEmpty)

            try session.write("bad.txt", "bob,$pbkdf2-sha256$x\n")
            let malformed = try run(
                session, ["passwd", session.path("bad.txt"), "bob", "--iterations", "1"], stdin: pw + "\n")
            #expect(malformed.status == 4, "\(malformed)")
            expectErrorFormat(malformed)

            let missing = try run(session, ["list", session.path("missing.txt")], stdin: nil)
            #expect(missing.status == 5, "\(missing)")
            expectErrorFormat(missing)
        }
    }

    @Test func passwordsFromStandardInputWithCRLFOrNoFinalNewline() throws {
        try withSession { session in
            let file = session.path("users.txt")
            let crlf = session.password("Cr1f-Pass-3~~~~")
            let bare = session.password("B4re-Pass-4~~~~")
            #expect(try run(session, ["add", file, "crlf", "--iterations", "1"], stdin: crlf + "\r\n").status == 0)
            #expect(try run(session, ["add", file, "bare", "--iterations", "1"], stdin: bare).status == 0)
            // Only the first line is the password; what follows is not read.
            #expect(
                try run(session, ["add", file, "first", "--iterations", "1"], stdin: bare + "\n" + crlf + "\n").status
                    == 0)
            #expect(try libraryGrants(file, "crlf", crlf))
            #expect(try libraryGrants(file, "bare", bare))
            #expect(try libraryGrants(file, "first", bare))
            #expect(!session.text("users.txt").contains("\r"))
            for ending in ["", "\n", "\r\n"] {
                for (user, password) in [("crlf", crlf), ("bare", bare)] {
                    let result = try run(
                        session, ["verify", file, user, "--iterations", "1"], stdin: password + ending)
                    #expect(
                        result == CLIResult(status: 0, stdout: "", stderr: ""), "\(user) \(ending.debugDescription)")
                }
            }
            // A CR is part of the line ending only before LF.
            #expect(try run(session, ["verify", file, "bare", "--iterations", "1"], stdin: bare + "\r").status == 1)
            // A hash from stdin, with CRLF.
            let hashed = try run(session, ["hash", "--iterations", "1"], stdin: crlf + "\r\n")
            #expect(hashed.status == 0, "\(hashed)")
            let hash = try #require(PasswordHash(hashed.stdout.trimmingCharacters(in: .newlines)))
            #expect(try hash.verify(Password(crlf)))
            #expect(hashed.stdout.hasPrefix("$pbkdf2-sha256$1$") && hashed.stdout.hasSuffix("\n"))
        }
    }

    @Test func standardInputAtEndIsAUsageError() throws {
        try withSession { session in
            let file = session.path("users.txt")
            for (arguments, stdin) in [
                (["add", file, "alice"], nil), (["add", file, "alice"], ""), (["hash"], nil),
                (["verify", file, "alice"], nil),
            ] as [([String], String?)] {
                let result = try run(session, arguments + ["--iterations", "1"], stdin: stdin)
                expectUsageError(result)
                #expect(result.stderr.contains("credfile: no password on standard input\n"), "\(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: file), "nothing was written")
            let spanish = try run(session, ["hash"], stdin: nil, lang: "es_ES.UTF-8")
            #expect(
                spanish.status == 2 && spanish.stderr.hasPrefix("credfile: no hay contraseña en la entrada estándar\n"))
        }
    }

    @Test func checkOutputLines() throws {
        try withSession { session in
            let weak = try PasswordHash(
                hashing: Password(session.password("Weak-5~~~~~~~~~")), policy: HashPolicy(rounds: 1)
            ).string
            try session.write(
                "usuarios.txt",
                "valencia,\(session.password("contrasena123"))\r\n# comment\r\nusuario2,\(weak)\r\nbob,\r\nvalencia,\(session.password("dup-6"))"
            )
            // A relative FILE is printed as given.
            let result = try run(session, ["check", "usuarios.txt"], stdin: nil)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.isEmpty)
            #expect(
                result.stdout == """
                    usuarios.txt:1: warning: plaintext password; run 'credfile upgrade'
                    usuarios.txt:3: warning: weak hash for user 'usuario2': 1 rounds, below the minimum of 600000
                    usuarios.txt:4: error: malformed entry for user 'bob': empty secret
                    usuarios.txt:5: error: duplicate entry for user 'valencia' (first at line 1); it never authenticates

                    """)
            let json = try run(session, ["check", "--json", "usuarios.txt"], stdin: nil)
            #expect(json.status == 1)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect((object["findings"] as? [Any])?.count == 4)
        }
    }

    @Test func unreadableFileIsAnIOError() throws {
        try withSession { session in
            // chmod 000 does not stop root: a directory and a dangling symlink do.
            try FileManager.default.createDirectory(atPath: session.path("dir"), withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(
                atPath: session.path("link"), withDestinationPath: session.path("gone"))
            let pw = session.password("Io-Pass-7~~~~~~")
            for name in ["dir", "link"] {
                let file = session.path(name)
                for (arguments, stdin) in [
                    (["list", file], nil), (["check", file], nil), (["verify", file, "alice"], pw + "\n"),
                    (["add", file, "alice"], pw + "\n"), (["delete", file, "alice"], nil),
                ] as [([String], String?)] {
                    let result = try run(session, arguments + ["--iterations", "1"], stdin: stdin)
                    #expect(result.status == 5, "\(arguments): \(result)")
                    expectErrorFormat(result)
                }
            }
            #expect(!FileManager.default.fileExists(atPath: session.path("gone")))
        }
    }

    @Test func helpVersionAndNoCommand() throws {
        try withSession { session in
            let help = try run(session, ["--help"], stdin: nil)
            #expect(help.status == 0 && help.stdout.contains("Usage: credfile") && help.stderr.isEmpty)
            let version = try run(session, ["--version"], stdin: nil)
            #expect(version.status == 0 && version.stdout.hasPrefix("credfile ") && version.stderr.isEmpty)
            let none = try run(session, [], stdin: nil)
            expectUsageError(none)
            #expect(none.stdout.isEmpty)
        }
    }
}
