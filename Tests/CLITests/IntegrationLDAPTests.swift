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
            let slapd = try ExternalTool.path("slapd")
            let slapadd = try ExternalTool.path("slapadd")
            let ldapwhoami = try ExternalTool.path("ldapwhoami")
            let file = try Integration.makeUserFile(in: session, users: Self.users)
            // One SHA-512 user too: {PBKDF2-SHA512}.
            try CredentialStore(path: file, policy: HashPolicy(algorithm: .sha512, rounds: Integration.rounds))
                .register(username: "carol", password: Password(session.password("Third-Pass-512!")), storage: .hashed)
            let export = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            try #require(export.status == 0, "\(export)")
            #expect(export.stdout.contains("userPassword: {PBKDF2-SHA256}\(Integration.rounds)$"))
            #expect(export.stdout.contains("userPassword: {PBKDF2-SHA512}\(Integration.rounds)$"))
            #expect(export.stdout.contains("dn:: "), "the non-ASCII DN must be base64 (RFC 2849)")

            // slapd as Debian runs it, configured in cn=config (slapd.d): a slapd.conf made
            // into one by slaptest, then the shipped Examples/openldap/pw-pbkdf2.ldif applied
            // to it (slapmodify, offline, as `ldapmodify -Y EXTERNAL` would online): the
            // module is loaded by that file alone, so a recipe that no longer loads it fails
            // every bind below. The base entries are the shipped base.ldif.
            let base = session.path("ldap")
            mkdir(base, 0o755)
            mkdir(base + "/db", 0o700)
            mkdir(base + "/slapd.d", 0o700)
            let config = """
                include /etc/ldap/schema/core.schema
                include /etc/ldap/schema/cosine.schema
                include /etc/ldap/schema/inetorgperson.schema
                modulepath /usr/lib/ldap
                moduleload back_mdb
                pidfile \(base)/slapd.pid
                database config
                database mdb
                suffix "dc=example,dc=org"
                rootdn "cn=admin,dc=example,dc=org"
                directory \(base)/db

                """
            try session.write("ldap/slapd.conf", config)
            let slapdDirectory = base + "/slapd.d"
            let converted = try Integration.run(
                try ExternalTool.path("slaptest"), ["-n", "0", "-f", base + "/slapd.conf", "-F", slapdDirectory], in: session)
            try #require(converted.status == 0, "slaptest: \(converted)")
            let module = BuiltProduct.packageRoot.appendingPathComponent("Examples/openldap/pw-pbkdf2.ldif").path
            let loaded = try Integration.run(try ExternalTool.path("slapmodify"), ["-F", slapdDirectory, "-n0", "-l", module], in: session)
            try #require(loaded.status == 0, "slapmodify pw-pbkdf2.ldif: \(loaded)")
            let top = try Integration.example("openldap/base.ldif")
            try session.write("ldap/all.ldif", top + "\n" + export.stdout)
            let added = try Integration.run(slapadd, ["-F", slapdDirectory, "-n1", "-l", base + "/all.ldif"], in: session)
            try #require(added.status == 0, "slapadd: \(added)")
            let port = try Integration.freePort()
            // -d 0: stay in the foreground, so the test owns the PID.
            let daemon = try Daemon(slapd, ["-d", "0", "-h", "ldap://127.0.0.1:\(port)/", "-F", slapdDirectory], logIn: session)
            defer { daemon.stop() }
            try Integration.waitForPort(port)
            /// ldapwhoami's exit status, the password in a 0600 file (-y), not on argv.
            func bind(_ dn: String, _ password: String) throws -> CLIResult {
                let pwfile = session.path("ldap/pw")
                unlink(pwfile)
                try session.write("ldap/pw", password)
                chmod(pwfile, 0o600)
                return try Integration.run(ldapwhoami, ["-x", "-H", "ldap://127.0.0.1:\(port)/", "-D", dn, "-y", pwfile], in: session)
            }
            for (user, password) in Self.users {
                let dn = try #require(Self.expectedDNs[user])
                let good = try bind(dn, password)
                #expect(good.status == 0, "\(user): \(good)\n\(daemon.output)")
                let wrong = try bind(dn, password + "x")
                #expect(wrong.status == 49, "\(user): \(wrong)")
            }
            #expect(try bind("uid=carol,ou=people,dc=example,dc=org", "Third-Pass-512!").status == 0)
            #expect(try bind("uid=carol,ou=people,dc=example,dc=org", "Alice-Pass-2026!").status == 49)
            #expect(try bind("uid=mallory,ou=people,dc=example,dc=org", "Alice-Pass-2026!").status == 49)
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
        RefusalCase(name: "12-byte salt (mosquitto's size): refused", line: "u," + hash(saltCount: 12), exportable: false),
        RefusalCase(name: "plaintext: refused", line: "u,Legacy-Pass-9", exportable: false),
        RefusalCase(name: "malformed pbkdf2: refused", line: "u,$pbkdf2-sha256$0$$", exportable: false),
        RefusalCase(name: "unsupported hash: refused", line: "u,{SSHA}abcdefgh", exportable: false),
        RefusalCase(name: "no comma: refused", line: "just-a-name", exportable: false),
    ]

    @Test("refusals: exit 4 with the line and nothing printed; --skip-unexportable leaves them out", arguments: refusalCases)
    func refusal(_ row: RefusalCase) throws {
        try withSession { session in
            let good = "alice," + Self.hash(saltCount: 16)
            let file = try session.write("users.txt", "# comment\n\(good)\n\(row.line)\n")
            let plain = try BuiltBinary.run(["export", file, "--to", "ldif"], stdin: nil, in: session)
            let skip = try BuiltBinary.run(["export", file, "--to", "ldif", "--skip-unexportable"], stdin: nil, in: session)
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
            let custom = try BuiltBinary.run(["export", file, "--to", "ldif", "--base-dn", "ou=staff,dc=corp,dc=test"], stdin: nil, in: session)
            #expect(custom.status == 0, "\(custom)")
            #expect(custom.stdout.hasPrefix("dn: uid=alice,ou=staff,dc=corp,dc=test\nobjectClass: inetOrgPerson\nuid: alice\ncn: alice\nsn: alice\nuserPassword: {PBKDF2-SHA256}" + hash.dropFirst("$pbkdf2-sha256$".count) + "\n\n"), "\(custom)")
            let json = try BuiltBinary.run(["export", file, "--to", "ldif", "--json"], stdin: nil, in: session)
            #expect(json.status == 0, "\(json)")
            #expect(json.stdout.hasPrefix("{\"baseDN\":\"ou=people,dc=example,dc=org\",\"entries\":[{\"line\":1,\"user\":\"alice\""), "\(json)")
            for arguments in [["export", file], ["export", file, "--to", "csv"], ["export", file, "--to", "ldif", "--base-dn", ""],
                              ["export", file, "--to", "ldif", "--base-dn", "no-equals-sign"], ["export", file, "--to", "ldif", "--base-dn", "ou=a\nb,dc=x"]] {
                expectUsageError(try BuiltBinary.run(arguments, stdin: nil, in: session))
            }
            let missing = try BuiltBinary.run(["export", session.path("missing.txt"), "--to", "ldif"], stdin: nil, in: session)
            #expect(missing.status == 5, "\(missing)")
        }
    }

    @Test("RFC 2849 safe strings and RFC 4514 escapes", arguments: [
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
