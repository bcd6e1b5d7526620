import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// `credfile export FILE --to ldif` loaded into a real slapd (Debian `slapd` +
/// `slapd-contrib`'s `pw-pbkdf2`) and bound with `ldapwhoami` for every user; and the
/// export's refusals and escaping on their own.
@Suite(.serialized) struct IntegrationLDAPTests {
    /// Users whose names exercise RFC 4514 (`+`, `;`, `<`, `>`, `"`, `\`; a leading `#`
    /// or space cannot start a new name, so those are covered by the unit test below) and RFC 2849 (non-ASCII → base64).
    static let users: [(String, String)] = [
        ("alice", "Alice-Pass-2026!"),
        ("José Núñez+admin", "p@ss:w rd ñandú 2026"),
        ("x#hash;semi<lt>\"q\"", "Hash-Name-Pass-1"),
        ("back\\slash", "Back-Slash-Pass-1"),
    ]

    /// The DN the test expects for `name`, escaped here by hand from RFC 4514 §2.4.
    static let expectedDNs: [String: String] = [
        "alice": "uid=alice,ou=people,dc=example,dc=org",
        "José Núñez+admin": "uid=José Núñez\\+admin,ou=people,dc=example,dc=org",
        "x#hash;semi<lt>\"q\"": "uid=x#hash\\;semi\\<lt\\>\\\"q\\\",ou=people,dc=example,dc=org",
        "back\\slash": "uid=back\\\\slash,ou=people,dc=example,dc=org",
    ]

    @Test(
        "slapd with pw-pbkdf2 binds every exported user with the right password (0) and refuses a wrong one (49)",
        .enabled(
            if: ExternalTool.runnable("slapd", "slapadd", "slaptest", "slapmodify", "ldapwhoami"),
            Comment(rawValue: ExternalTool.skipNote("slapd", "slapadd", "slaptest", "slapmodify", "ldapwhoami"))))
    func slapdBindsEveryUser() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: Self.users)
            // One SHA-512 user too: {PBKDF2-SHA512}.
            try CredentialStore(path: file, policy: HashPolicy(algorithm: .sha512, rounds: Integration.rounds))
                .register(username: "carol", password: Password(session.password("Third-Pass-512!")), storage: .hashed)
            let export = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            try #require(export.status == 0, "\(export)")
            #expect(export.stdout.contains("userPassword: {PBKDF2-SHA256}\(Integration.rounds)$"))
            #expect(export.stdout.contains("userPassword: {PBKDF2-SHA512}\(Integration.rounds)$"))
            #expect(export.stdout.contains("dn:: "), "the non-ASCII DN must be base64 (RFC 2849)")

            try Self.withSlapd(session, modules: ["pw-pbkdf2"], ldif: export.stdout) { bind in
                for (user, password) in Self.users {
                    let dn = try #require(Self.expectedDNs[user])
                    let (good, wrong) = (try bind(dn, password), try bind(dn, password + "x"))
                    #expect(good == 0, "\(user)")
                    #expect(wrong == 49, "\(user)")
                }
                let carol = "uid=carol,ou=people,dc=example,dc=org"
                let results = (try bind(carol, "Third-Pass-512!"), try bind(carol, "Alice-Pass-2026!"))
                #expect(results.0 == 0 && results.1 == 49)
                #expect(try bind("uid=mallory,ou=people,dc=example,dc=org", "Alice-Pass-2026!") == 49)
            }
        }
    }

    /// A slapd on a free loopback port over `ldif` (after the base entries), with
    /// `modules` loaded; `body` gets a bind function (ldapwhoami's exit status, the
    /// password in a 0600 file, never on argv). slapd is stopped by PID at the end.
    static func withSlapd(
        _ session: CLISession, modules: [String], ldif: String,
        _ body: ((String, String) throws -> Int32) throws -> Void
    ) throws {
        let slapd = try ExternalTool.path("slapd")
        let ldapwhoami = try ExternalTool.path("ldapwhoami")
        let base = try Self.slapadd(session, folder: "ldap", modules: modules, ldif: ldif)
        try #require(base.added.status == 0, "slapadd: \(base.added)")
        let port = try Integration.freePort()
        // -d 0: stay in the foreground, so the test owns the PID.
        let daemon = try Daemon(
            slapd, ["-d", "0", "-h", "ldap://127.0.0.1:\(port)/", "-F", base.path + "/slapd.d"], logIn: session)
        defer { daemon.stop() }
        try Integration.waitForPort(port)
        try body { dn, password in
            let pwfile = session.path("ldap/pw")
            unlink(pwfile)
            try session.write("ldap/pw", password)
            chmod(pwfile, 0o600)
            return try Integration.run(
                ldapwhoami, ["-x", "-H", "ldap://127.0.0.1:\(port)/", "-D", dn, "-y", pwfile], in: session
            ).status
        }
    }

    /// slapadd of the shipped base entries (`Examples/openldap/base.ldif`) and `ldif` into
    /// a fresh mdb database in `session`'s `folder`, with `modules` loaded: the folder's
    /// path and slapadd's result.
    ///
    /// slapd is configured in cn=config (`slapd.d`) as Debian runs it: a slapd.conf made
    /// into one by slaptest, then `pw-pbkdf2` loaded by the shipped
    /// `Examples/openldap/pw-pbkdf2.ldif` applied with slapmodify (offline, as `ldapmodify
    /// -Y EXTERNAL` applies it online), so a recipe that no longer loads the module fails
    /// every bind of a PBKDF2 user. Other modules are loaded by the slapd.conf.
    static func slapadd(
        _ session: CLISession, folder: String, modules: [String], ldif: String
    ) throws -> (path: String, added: CLIResult) {
        let base = session.path(folder)
        _ = try Integration.run("/bin/rm", ["-rf", base], in: session)
        mkdir(base, 0o755)
        mkdir(base + "/db", 0o700)
        mkdir(base + "/slapd.d", 0o700)
        let config = """
            include /etc/ldap/schema/core.schema
            include /etc/ldap/schema/cosine.schema
            include /etc/ldap/schema/inetorgperson.schema
            modulepath /usr/lib/ldap
            moduleload back_mdb
            \(modules.filter { $0 != "pw-pbkdf2" }.map { "moduleload \($0)" }.joined(separator: "\n"))
            pidfile \(base)/slapd.pid
            database config
            database mdb
            suffix "dc=example,dc=org"
            rootdn "cn=admin,dc=example,dc=org"
            directory \(base)/db

            """
        try session.write("\(folder)/slapd.conf", config)
        let slapdDirectory = base + "/slapd.d"
        let converted = try Integration.run(
            try ExternalTool.path("slaptest"), ["-n", "0", "-f", base + "/slapd.conf", "-F", slapdDirectory],
            in: session)
        try #require(converted.status == 0, "slaptest: \(converted)")
        if modules.contains("pw-pbkdf2") {
            let recipe = BuiltProduct.packageRoot.appendingPathComponent("Examples/openldap/pw-pbkdf2.ldif").path
            let loaded = try Integration.run(
                try ExternalTool.path("slapmodify"), ["-F", slapdDirectory, "-n0", "-l", recipe], in: session)
            try #require(loaded.status == 0, "slapmodify pw-pbkdf2.ldif: \(loaded)")
        }
        try session.write("\(folder)/all.ldif", try Integration.example("openldap/base.ldif") + "\n" + ldif)
        let added = try Integration.run(
            try ExternalTool.path("slapadd"), ["-F", slapdDirectory, "-n1", "-l", base + "/all.ldif"], in: session)
        return (base, added)
    }

    /// The hashes the peers write that a directory verifies: exported in the scheme slapd
    /// knows them by ({SHA}, {SSHA}, {SSHA512}, {ARGON2}, {PBKDF2-*}, {CRYPT}) and bound in
    /// a real slapd with the right password (0) and a wrong one (49) — issue #26.
    @Test(
        "slapd binds the peers' hashes as the export writes them",
        .enabled(
            if: ExternalTool.runnable(
                "slapd", "slapadd", "slaptest", "slapmodify", "ldapwhoami", "slappasswd", "doveadm", "argon2",
                "mkpasswd"),
            Comment(
                rawValue: ExternalTool.skipNote(
                    "slapd", "slapadd", "slaptest", "slapmodify", "ldapwhoami", "slappasswd", "doveadm", "argon2",
                    "mkpasswd"))))
    func slapdBindsPeerHashes() throws {
        try withSession { session in
            func tool(_ name: String, _ arguments: [String], stdin: String? = nil) throws -> String {
                let result = try Integration.run(
                    try ExternalTool.path(name), arguments, stdin: stdin.map { Array($0.utf8) }, in: session)
                try #require(result.status == 0, "\(name): \(result)")
                return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let password = session.password("Peer-Hash-Pass-26")
            let modules = ["-o", "module-path=/usr/lib/ldap"]
            let hashes: [(user: String, hash: String, scheme: String)] = [
                ("sha", try tool("slappasswd", ["-h", "{SHA}", "-s", password]), "{SHA}"),
                ("ssha", try tool("slappasswd", ["-h", "{SSHA}", "-s", password]), "{SSHA}"),
                ("ssha512", try tool("doveadm", ["pw", "-s", "SSHA512", "-p", password]), "{SSHA512}"),
                (
                    "ldappbkdf2",
                    try tool(
                        "slappasswd",
                        modules + ["-o", "module-load=pw-pbkdf2", "-h", "{PBKDF2-SHA256}", "-s", password]),
                    "{PBKDF2-SHA256}"
                ),
                ("dovecotpbkdf2", try tool("doveadm", ["pw", "-s", "PBKDF2", "-p", password]), "{PBKDF2-SHA1}"),
                (
                    "argon2id", try tool("argon2", ["somesaltsalt", "-id", "-e", "-m", "12"], stdin: password),
                    "{ARGON2}$argon2id$"
                ),
                (
                    "ldapargon2",
                    try tool("slappasswd", modules + ["-o", "module-load=argon2", "-h", "{ARGON2}", "-s", password]),
                    "{ARGON2}$argon2i$"
                ),
                ("sha512crypt", try tool("mkpasswd", ["-m", "sha512crypt", "--stdin"], stdin: password), "{CRYPT}$6$"),
            ]
            let file = try session.write("users.txt", hashes.map { "\($0.user),\($0.hash)\n" }.joined())
            let export = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            try #require(export.status == 0, "\(export)")
            for (user, _, scheme) in hashes {
                #expect(export.stdout.contains("dn: uid=\(user),ou=people,dc=example,dc=org\n"), "\(user)")
                #expect(export.stdout.contains("userPassword: \(scheme)"), "\(user): \(scheme)")
            }
            try Self.withSlapd(session, modules: ["pw-pbkdf2", "pw-sha2", "argon2"], ldif: export.stdout) { bind in
                for (user, _, _) in hashes {
                    let dn = "uid=\(user),ou=people,dc=example,dc=org"
                    let (right, wrong) = (try bind(dn, password), try bind(dn, password + "x"))
                    #expect(right == 0, "\(user) with the right password")
                    #expect(wrong == 49, "\(user) with a wrong one")
                }
            }
        }
    }

    /// Names credfile keeps apart but LDAP's `uid` (caseIgnoreMatch, RFC 4518) takes for
    /// one: the export refuses them (exit 4, each naming the other's line) unless
    /// --skip-unexportable, which leaves both out and says so; a real slapd confirms that
    /// each pair it folds is one DN to it (slapadd refuses the second), and keeps a control
    /// pair apart. RFC 4518 also removes a soft hyphen and folds `ß` to `ss`, which slapd
    /// 2.5 does not: those are refused too (another directory, or slapd's next version,
    /// that prepares strings as the RFC says would merge them).
    @Test(
        "look-alike DNs are refused, both of them, and slapd agrees they are one",
        .enabled(
            if: ExternalTool.runnable("slapd", "slapadd", "slaptest", "slapmodify"),
            Comment(rawValue: ExternalTool.skipNote("slapd", "slapadd", "slaptest", "slapmodify"))))
    func lookalikeDNs() throws {
        let pairs = [
            ("admin", "ADMIN"), ("john smith", "john  smith"), ("bob", "\u{FF42}\u{FF4F}\u{FF42}"),
            ("soft", "so\u{AD}ft"),
            ("stra\u{DF}e", "STRASSE"), ("nb sp", "nb\u{A0}sp"),
        ]
        try withSession { session in
            var lines: [String] = []
            for (a, b) in pairs { lines += ["\(a),\(Self.hash(saltCount: 16))", "\(b),\(Self.hash(saltCount: 16))"] }
            lines.append("alice,\(Self.hash(saltCount: 16))")
            lines.append("alicia,\(Self.hash(saltCount: 16))")
            let file = try session.write("users.txt", lines.joined(separator: "\n") + "\n")
            let refused = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            #expect(refused.status == 4 && refused.stdout.isEmpty, "\(refused)")
            for index in 0..<pairs.count {
                let (first, second) = (2 * index + 1, 2 * index + 2)
                #expect(refused.stderr.contains("\(file):\(first): error: cannot export"), "line \(first)")
                #expect(refused.stderr.contains("same to LDAP as line \(second)'s"), "line \(first) names \(second)")
                #expect(refused.stderr.contains("same to LDAP as line \(first)'s"), "line \(second) names \(first)")
            }
            let skipped = try BuiltBinary.run(
                ["export", file, "--to", "ldif", "--skip-unexportable"], stdin: nil, in: session)
            #expect(skipped.status == 0, "\(skipped)")
            #expect(skipped.stderr.components(separatedBy: "warning: skipped").count == 2 * pairs.count + 1)
            #expect(
                skipped.stdout.components(separatedBy: "objectClass: inetOrgPerson").count == 3, "alice and alicia only"
            )
            // slapd: each pair it folds is one DN (the second add fails), the control pair two.
            let rfcOnly: Set<String> = ["soft", "stra\u{DF}e"]
            for (a, b) in pairs + [("alice", "alicia")] where !rfcOnly.contains(a) {
                let ldif = [a, b].map { name in
                    LDIFExport.attribute(
                        "dn", "uid=" + LDIFExport.escapedRDNValue(name) + ",ou=people,dc=example,dc=org")
                        + "objectClass: inetOrgPerson\n" + LDIFExport.attribute("uid", name) + "cn: x\nsn: x\n\n"
                }.joined()
                let added = try Self.slapadd(session, folder: "dn-check", modules: [], ldif: ldif).added
                #expect((added.status == 0) == (a == "alice"), "\(a) / \(b): \(added)")
            }
        }
    }

    // MARK: The export on its own

    /// A passlib-form hash with a salt of `count` bytes (the checksum is not checked by export).
    static func hash(saltCount: Int) -> String {
        "$pbkdf2-sha256$1000$" + AdaptedBase64.encode([UInt8](repeating: 7, count: saltCount)) + "$"
            + AdaptedBase64.encode([UInt8](repeating: 9, count: 32))
    }

    struct RefusalCase: CustomTestStringConvertible, Sendable {
        let name: String
        let line: String
        let exportable: Bool
        var testDescription: String { name }
    }

    static let refusalCases: [RefusalCase] = [
        RefusalCase(name: "16-byte salt: exported", line: "u," + hash(saltCount: 16), exportable: true),
        RefusalCase(name: "15-byte salt: refused", line: "u," + hash(saltCount: 15), exportable: false),
        RefusalCase(name: "17-byte salt: refused", line: "u," + hash(saltCount: 17), exportable: false),
        RefusalCase(
            name: "12-byte salt (mosquitto's size): refused", line: "u," + hash(saltCount: 12), exportable: false),
        RefusalCase(name: "plaintext: refused", line: "u,Legacy-Pass-9", exportable: false),
        RefusalCase(name: "malformed pbkdf2: refused", line: "u,$pbkdf2-sha256$0$$", exportable: false),
        RefusalCase(name: "unsupported hash: refused", line: "u,{SSHA}abcdefgh", exportable: false),
        RefusalCase(name: "no comma: refused", line: "just-a-name", exportable: false),
    ]

    @Test(
        "refusals: exit 4 with the line and nothing printed; --skip-unexportable leaves them out",
        arguments: refusalCases)
    func refusal(_ row: RefusalCase) throws {
        try withSession { session in
            let good = "alice," + Self.hash(saltCount: 16)
            let file = try session.write("users.txt", "# comment\n\(good)\n\(row.line)\n")
            let plain = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            let skip = try BuiltBinary.run(
                ["export", file, "--to", "ldif", "--skip-unexportable"], stdin: nil, in: session)
            #expect(skip.status == 0, "\(skip)")
            #expect(skip.stdout.contains("dn: uid=alice,ou=people,dc=example,dc=org\n"))
            if row.exportable {
                #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain)")
                #expect(plain.stdout.components(separatedBy: "objectClass: inetOrgPerson").count == 3)
            } else {
                #expect(plain.status == 4 && plain.stdout.isEmpty, "\(plain)")
                expectErrorFormat(plain)
                #expect(plain.stderr.contains("\(file):3: error: cannot export"), "\(plain)")
                #expect(skip.stderr.contains("\(file):3: warning: skipped"), "\(skip)")
                #expect(skip.stdout.components(separatedBy: "objectClass: inetOrgPerson").count == 2)
                #expect(!plain.stderr.contains("Legacy-Pass-9") && !skip.stderr.contains("Legacy-Pass-9"))
            }
        }
    }

    @Test("--base-dn, --json, shadowed duplicates left out, bad options are usage errors")
    func optionsAndJSON() throws {
        try withSession { session in
            let hash = Self.hash(saltCount: 16)
            let file = try session.write("users.txt", "alice,\(hash)\nalice,other-Legacy-1\n")
            let custom = try BuiltBinary.run(
                ["export", file, "--to", "ldif", "--base-dn", "ou=staff,dc=corp,dc=test"], stdin: nil, in: session)
            #expect(custom.status == 0, "\(custom)")
            #expect(
                custom.stdout.hasPrefix(
                    "dn: uid=alice,ou=staff,dc=corp,dc=test\nobjectClass: inetOrgPerson\nuid: alice\ncn: alice\nsn: alice\nuserPassword: {PBKDF2-SHA256}"
                        + hash.dropFirst("$pbkdf2-sha256$".count) + "\n\n"), "\(custom)")
            let json = try BuiltBinary.run(["export", file, "--to", "ldif", "--json"], stdin: nil, in: session)
            #expect(json.status == 0, "\(json)")
            #expect(
                json.stdout.hasPrefix(
                    "{\"baseDN\":\"ou=people,dc=example,dc=org\",\"entries\":[{\"line\":1,\"user\":\"alice\""),
                "\(json)")
            for arguments in [
                ["export", file], ["export", file, "--to", "csv"], ["export", file, "--to", "ldif", "--base-dn", ""],
                ["export", file, "--to", "ldif", "--base-dn", "no-equals-sign"],
                ["export", file, "--to", "ldif", "--base-dn", "ou=a\nb,dc=x"],
            ] {
                expectUsageError(try BuiltBinary.run(arguments, stdin: nil, in: session))
            }
            let missing = try BuiltBinary.run(
                ["export", session.path("missing.txt"), "--to", "ldif"], stdin: nil, in: session)
            #expect(missing.status == 5, "\(missing)")
        }
    }

    @Test(
        "RFC 2849 safe strings and RFC 4514 escapes",
        arguments: [
            ("alice", "alice", true),
            (" lead", "\\ lead", false),
            ("trail ", "trail\\ ", false),
            ("#x", "\\#x", true),
            ("a#b", "a#b", true),
            (":colon", ":colon", false),
            ("<lt", "\\<lt", false),
            ("ñ", "ñ", false),
            ("a,b+c;d", "a\\,b\\+c\\;d", true),
        ])
    func escaping(_ name: String, _ escaped: String, _ safe: Bool) {
        #expect(LDIFExport.escapedRDNValue(name) == escaped)
        #expect(LDIFExport.isSafeString(Array(name.utf8)) == safe)
    }

    @Test func base64MatchesRFC4648() {
        #expect(LDIFExport.base64(Array("".utf8)) == "")
        #expect(LDIFExport.base64(Array("f".utf8)) == "Zg==")
        #expect(LDIFExport.base64(Array("fo".utf8)) == "Zm8=")
        #expect(LDIFExport.base64(Array("foo".utf8)) == "Zm9v")
        #expect(LDIFExport.base64([0xFB, 0xFF]) == "+/8=")
    }
}
