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
            if: ExternalTool.runnable("slapd", "slapadd", "ldapwhoami"),
            Comment(rawValue: ExternalTool.skipNote("slapd", "slapadd", "ldapwhoami"))))
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

            let slapd = try Slapd(in: session, modules: ["pw-pbkdf2"], entries: export.stdout)
            defer { slapd.stop() }
            let bind = slapd.bind
            for (user, password) in Self.users {
                let dn = try #require(Self.expectedDNs[user])
                let good = try bind(dn, password)
                #expect(good.status == 0, "\(user): \(good)\n\(slapd.output)")
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
