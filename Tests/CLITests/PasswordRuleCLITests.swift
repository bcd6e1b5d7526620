import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile

/// SPEC §8 through the CLI (`add`, `passwd`, `import`, the `register` screen, `check
/// --passwords`) and SPEC §5's `import --hashed` / `--from`, in-process.
@Suite struct PasswordRuleCLITests {
    static let fast = ["--iterations", "1"]

    struct Refusal: CustomTestStringConvertible, Sendable {
        let name: String
        let password: String
        let options: [String]
        let english: String
        let spanish: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        .init(
            name: "14 characters (the default is 15)", password: "Qz7#Lm9!Kp2$Wx", options: [],
            english: "at least 15 characters", spanish: "al menos 15 caracteres"),
        .init(
            name: "14 characters that are 28 bytes", password: "ñçøåéüßñçøåéüß", options: [],
            english: "at least 15 characters", spanish: "al menos 15 caracteres"),
        .init(
            name: "--min-length 20", password: "Qz7#Lm9!Kp2$Wx-Rt5v", options: ["--min-length", "20"],
            english: "at least 20 characters", spanish: "al menos 20 caracteres"),
        .init(
            name: "--min-length 8, 7 characters", password: "Qz7#Lm9", options: ["--min-length", "8"],
            english: "at least 8 characters", spanish: "al menos 8 caracteres"),
        .init(
            name: "built-in list, case-folded", password: "1Q2w3E4r5T6y7U8i9O0p", options: [], english: "commonly used",
            spanish: "uso común"),
        .init(
            name: "built-in list under --min-length 8", password: "PassWord123", options: ["--min-length", "8"],
            english: "commonly used", spanish: "uso común"),
        .init(
            name: "the username", password: "xx-CAROL-garden", options: [], english: "contains the username",
            spanish: "nombre de usuario"),
        .init(
            name: "the file's name", password: "my-users-garden", options: [], english: "name of this file",
            spanish: "nombre de este archivo"),
        .init(name: "credfile", password: "credfile-garden", options: [], english: "(credfile)", spanish: "(credfile)"),
    ]

    @Test("add refuses, says which rule in English and Spanish, exits 2, writes nothing", arguments: refusals)
    func addRefuses(_ r: Refusal) throws {
        try withSession { (session) throws in
            let file = try session.write("users.txt", "# keep\nalice,old-plain-1\n")
            let before = session.bytes("users.txt")
            for (lang, words) in [("C", r.english), ("es_ES.UTF-8", r.spanish)] {
                let result = session.run(
                    ["add", file, "carol"] + r.options + Self.fast, stdin: [session.password(r.password)],
                    environment: ["LANG": lang])
                expectUsageError(result)
                #expect(result.stderr.contains(words), "\(result)")
                #expect(!result.stderr.contains("--help"))
                #expect(session.bytes("users.txt") == before)
            }
            // passwd and import refuse the same way.
            let passwd = session.run(
                ["passwd", file, "alice"] + r.options + Self.fast,
                stdin: [r.password.replacingOccurrences(of: "CAROL", with: "alice")])
            expectUsageError(passwd)
            let imported = session.run(
                ["import", file] + r.options + Self.fast,
                stdin: ["dora,fine-garden-trees-and-more-1", "carol,\(r.password)"])
            expectUsageError(imported)
            #expect(imported.stderr.contains("standard input line 2"), "\(imported)")
            #expect(session.bytes("users.txt") == before)
        }
    }

    @Test("a good password is accepted by add, passwd and import; --min-length lowers the bar too")
    func accepted() throws {
        try withSession { (session) throws in
            let file = session.path("users.txt")
            #expect(
                session.run(["add", file, "carol"] + Self.fast, stdin: [session.password("Qz7#Lm9!Kp2$Wx5")]).status
                    == 0)
            #expect(try libraryGrants(file, "carol", "Qz7#Lm9!Kp2$Wx5"))
            #expect(
                session.run(["passwd", file, "carol"] + Self.fast, stdin: [session.password("ñçøåéüßðñçøåéüß")]).status
                    == 0)
            #expect(
                session.run(["import", file] + Self.fast, stdin: ["dora,\(session.password("fine-garden-trees-1"))"])
                    .status == 0)
            // 8 is NIST's floor for one factor of several: no warning; below it, a warning.
            let eight = session.run(
                ["add", file, "gwen", "--min-length", "8"] + Self.fast, stdin: [session.password("Qz7#Lm9!")])
            #expect(eight.status == 0 && !eight.stderr.contains("NIST"), "\(eight)")
            let four = session.run(
                ["add", file, "erin", "--min-length", "4"] + Self.fast, stdin: [session.password("Qz7#")])
            #expect(four.status == 0, "\(four)")
            #expect(
                four.stderr.contains(
                    "credfile: warning: a minimum password length of 4 is below NIST's floor of 8 characters"),
                "\(four)")
            let spanish = session.run(
                ["passwd", file, "erin", "--min-length", "7"] + Self.fast, stdin: [session.password("Qz7#Lm9")],
                environment: ["LANG": "es_ES.UTF-8"])
            #expect(
                spanish.status == 0
                    && spanish.stderr.contains("credfile: aviso: una longitud mínima de contraseña de 7"), "\(spanish)")
            expectUsageError(session.run(["add", file, "finn", "--min-length", "0"], stdin: ["whatever-long"]))
            expectUsageError(session.run(["add", file, "finn", "--min-length", "65"], stdin: ["whatever-long"]))
        }
    }

    @Test("--blocklist FILE in both forms")
    func blocklistFiles() throws {
        try withSession { (session) throws in
            let file = session.path("users.txt")
            let plain = try session.write("banned.txt", "Garden-Trees-42\n")
            let sha1 = try Blocklist.sha1Hex(Array("Garden-Trees-43".utf8))
            let pwned = try session.write(
                "pwned.txt",
                "0000000000000000000000000000000000000000:1\n\(String(decoding: sha1, as: UTF8.self)):3\nFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:2\n"
            )
            let one = session.run(
                ["add", file, "carol", "--blocklist", plain] + Self.fast, stdin: [session.password("garden-trees-42")])
            expectUsageError(one)
            #expect(one.stderr.contains("blocklist"))
            let two = session.run(
                ["add", file, "carol", "--blocklist", pwned] + Self.fast, stdin: [session.password("Garden-Trees-43")])
            expectUsageError(two)
            #expect(
                session.run(
                    ["add", file, "carol", "--blocklist", pwned, "--blocklist", plain] + Self.fast,
                    stdin: ["Garden-Trees-44"]
                ).status == 0)
            // A missing list is an I/O error, before anything is written.
            let missing = session.run(
                ["add", file, "dora", "--blocklist", session.path("nope")] + Self.fast, stdin: ["Garden-Trees-45"])
            #expect(missing.status == 5)
        }
    }

    @Test("the register screen asks again after a refusal, then gives up")
    func registerAsksAgain() throws {
        try withSession { (session) throws in
            let file = session.path("users.txt")
            // --min-length 8, so the built-in list (of short passwords) is what refuses "password".
            let retried = session.run(
                ["register", file, "--min-length", "8"] + Self.fast,
                stdin: ["carol", "password", session.password("Qz7#Lm9!-garden")])
            #expect(retried.status == 0, "\(retried)")
            #expect(retried.stdout.contains("commonly used"))
            #expect(try libraryGrants(file, "carol", "Qz7#Lm9!-garden"))
            let before = session.bytes("users.txt")
            let gaveUp = session.run(
                ["register", file, "--min-length", "8"] + Self.fast,
                stdin: ["dora", "short", "password", "dora-garden", "never-read-garden"],
                environment: ["LANG": "es_ES.UTF-8"])
            #expect(gaveUp.status == 2)
            #expect(
                gaveUp.stdout.contains("al menos 8 caracteres") && gaveUp.stdout.contains("uso común")
                    && gaveUp.stdout.contains("nombre de usuario"))
            #expect(session.lastUnreadInput == 1)
            #expect(session.bytes("users.txt") == before)
        }
    }

    @Test("check --passwords reports blocklisted plaintext entries by line; login is not judged")
    func checkPasswords() throws {
        try withSession { (session) throws in
            let file = try session.write(
                "users.txt", "ann,password\nbea,\(session.password("a-long-unusual-phrase"))\ncid,Qwerty123\n")
            #expect(session.run(["verify", file, "ann"] + Self.fast, stdin: ["password"]).status == 0)
            let plain = session.run(["check", file])
            #expect(!plain.stdout.contains("blocklist"))
            let result = session.run(["check", file, "--passwords"])
            #expect(result.stdout.contains("\(file):1: warning: plaintext password for user 'ann' is on a blocklist"))
            #expect(result.stdout.contains("\(file):3: warning: plaintext password for user 'cid' is on a blocklist"))
            #expect(!result.stdout.contains(":2: warning: plaintext password is on"))
            #expect(!result.stdout.contains("Qwerty123") && !result.stdout.contains("ann,password"))
            let spanish = session.run(["check", file, "--passwords"], environment: ["LANG": "es_ES.UTF-8"])
            #expect(spanish.stdout.contains("lista de contraseñas prohibidas"))
        }
    }

    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CredFileTests/Vectors/peers")

    @Test("import --from shadow: hashes stored byte for byte, locked users reported", arguments: ["C", "es_ES.UTF-8"])
    func importShadow(lang: String) throws {
        try withSession { (session) throws in
            let file = session.path("users.txt")
            let input = try String(contentsOf: Self.peers.appendingPathComponent("shadow.txt"), encoding: .utf8)
            let result = session.run(
                ["import", file, "--from", "shadow"], stdin: input.split(separator: "\n").map(String.init),
                environment: ["LANG": lang])
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 4)
            #expect(
                result.stderr.contains(
                    lang == "C"
                        ? "line 3: root skipped: the account is locked" : "línea 3 de la entrada estándar: root omitido"
                ))
            #expect(session.text("users.txt").contains("dave,{CRYPT}CYwEk/GrgbXYQ\n"))
            #expect(session.text("users.txt").contains("alice,$6$xp0BVBIMEmv44aSJ$"))
        }
    }

    @Test("import --hashed and --from refuse bad input with its line and write nothing")
    func importRefusals() throws {
        try withSession { (session) throws in
            let file = try session.write("users.txt", "ann,old-plain-1\n")
            let before = session.bytes("users.txt")
            let hashed = session.run(
                ["import", file, "--hashed"],
                stdin: [
                    "bob,$2y$05$5s6UTPiI.KE.p3cMtnNfS.7m8ghVqxLw.JhkcnC9LWIIdEckm/kdC",
                    "cid,\(session.password("hunter2-garden"))",
                ])
            expectUsageError(hashed)
            #expect(hashed.stderr.contains("standard input line 2: the secret is not a hash"))
            let htpasswd = session.run(
                ["import", file, "--from", "htpasswd"],
                stdin: ["bob:zkwV5jyzYo5hw", "bob:$apr1$SOCH89go$U6qDV0JWPS7RyZbW/8aUL."])
            expectUsageError(htpasswd)
            #expect(htpasswd.stderr.contains("standard input line 2: the same user as line 1"))
            expectUsageError(session.run(["import", file, "--from", "nginx"], stdin: []))
            expectUsageError(session.run(["import", file, "--from", "hashed"], stdin: []))
            expectUsageError(session.run(["import", file, "--hashed", "--from", "shadow"], stdin: []))
            expectUsageError(session.run(["import", file, "--hashed", "--plaintext"], stdin: []))
            expectUsageError(session.run(["add", file, "x", "--hashed"], stdin: []))
            #expect(session.bytes("users.txt") == before)
            let good = session.run(["import", file, "--hashed"], stdin: ["ann,{SHA}k/wNAGQUdECf1ROLsOyy/s7xrIs="])
            #expect(good.status == 0 && good.stdout.contains("0 added, 1 updated"), "\(good)")
            #expect(session.text("users.txt") == "ann,{SHA}k/wNAGQUdECf1ROLsOyy/s7xrIs=\n")
        }
    }

    /// SPEC §5 `import --existing`: the seed's own three-line file (Examples/usuarios.txt)
    /// holds passwords already in use; SPEC §8 judges passwords chosen now, so without the
    /// flag the whole import is refused, and the refusal names `--existing` and `upgrade`.
    @Test("import --existing takes the seed's three users; without it the refusal names --existing and upgrade")
    func importExisting() throws {
        let seed = try String(
            contentsOf: BuiltProduct.packageRoot.appendingPathComponent("Examples/usuarios.txt"), encoding: .utf8)
        let lines = seed.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        try withSession { (session) throws in
            let file = session.path("users.txt")
            for (lang, words) in [
                ("C", ["--existing", "credfile upgrade"]),
                ("es_ES.UTF-8", ["--existing", "credfile upgrade", "ya están en uso"]),
            ] {
                let refused = session.run(["import", file] + Self.fast, stdin: lines, environment: ["LANG": lang])
                expectUsageError(refused)
                #expect(refused.stderr.contains("standard input line 1"), "\(refused)")
                for word in words { #expect(refused.stderr.contains(word), "\(refused)") }
                #expect(!FileManager.default.fileExists(atPath: file))
            }
            let imported = session.run(["import", file, "--existing"] + Self.fast, stdin: lines)
            #expect(imported.status == 0 && imported.stdout.contains("3 added"), "\(imported)")
            for line in lines {
                let (user, password) = (String(line.prefix { $0 != "," }), String(line.drop { $0 != "," }.dropFirst()))
                #expect(session.run(["verify", file, user] + Self.fast, stdin: [password]).status == 0, "\(user)")
                #expect(
                    session.run(["verify", file, user] + Self.fast, stdin: ["x" + password]).status == 1, "\(user)")
            }
            #expect(!session.text("users.txt").contains("contrasena123"), "hashed, not plaintext")
            // The rules of SPEC §2 still hold, and --existing means nothing to hashes.
            expectUsageError(session.run(["import", file, "--existing"] + Self.fast, stdin: ["eve,"]))
            expectUsageError(
                session.run(["import", file, "--existing"] + Self.fast, stdin: [" eve,leading-space-name-1"]))
            expectUsageError(session.run(["import", file, "--existing", "--hashed"], stdin: []))
        }
    }

    @Test("import --hashed refuses what credfile never verifies, naming the scheme; {CRYPT} wraps are verified")
    func importRefusesUnverifiedSchemes() throws {
        try withSession { (session) throws in
            let file = try session.write("users.txt", "ann,old-plain-1\n")
            let before = session.bytes("users.txt")
            for secret in [
                "{MD5}Xr4ilOzQ4PCOq3aQ0qbuaQ==", "$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0", "crypt$$ab1Hv2Lg7ltQo",
                "$3$$dc27cd31305aec6f18c9a63095eedff1",
            ] {
                let result = session.run(["import", file, "--hashed"], stdin: ["bob,\(secret)"])
                expectUsageError(result)
                #expect(
                    result.stderr.contains("standard input line 1:") && result.stderr.contains("does not verify"),
                    "\(result)")
                #expect(!result.stdout.contains("added"))
            }
            #expect(session.bytes("users.txt") == before)
            let wrapped = session.run(
                ["import", file, "--hashed"], stdin: ["bob,{CRYPT}$3$$dc27cd31305aec6f18c9a63095eedff1"])
            #expect(wrapped.status == 0, "\(wrapped)")
            #expect(session.run(["verify", file, "bob"] + Self.fast, stdin: ["migrated-Passw0rd"]).status == 0)
        }
    }
}
