import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// argon2id as the policy's algorithm (SPEC §3.1): the PHC strings credfile writes are
/// verified by the real peers that read that format — argon2-cffi and passlib, Django
/// (`argon2$argon2id$…`), Dovecot (`{ARGON2ID}`), OpenLDAP (`{ARGON2}`, slapd's argon2
/// module) — with the right password only.
@Suite(.serialized) struct Argon2PolicyTests {
    /// The strings to check: `credfile hash --algorithm argon2id` at OWASP's parameters,
    /// and the library's at other memory, passes and lanes.
    static func madeByCredfile(_ password: String, in session: CLISession) throws -> [String] {
        let cli = try BuiltBinary.run(
            ["hash", "--algorithm", "argon2id"], stdin: Array((password + "\n").utf8), in: session)
        try #require(cli.status == 0, "\(cli)")
        let owasp = cli.stdout.trimmingCharacters(in: .newlines)
        #expect(owasp.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        let other = try HashPolicy(algorithm: .argon2id, argon2: Argon2Parameters(memoryKiB: 65_536, time: 3, lanes: 4))
        let library = try other.hash(Password(password))
        #expect(library.hasPrefix("$argon2id$v=19$m=65536,t=3,p=4$"))
        return [owasp, library]
    }

    /// Prints, per JSON line {"password", "hash"} on stdin, three digits: argon2-cffi,
    /// passlib and Django (`argon2` + the PHC string), 1 when each verifies.
    static let pythonPeers = """
        import json, sys
        import django
        from django.conf import settings
        settings.configure(PASSWORD_HASHERS=["django.contrib.auth.hashers.Argon2PasswordHasher"])
        django.setup()
        from django.contrib.auth.hashers import check_password
        from argon2 import PasswordHasher
        from argon2.exceptions import VerifyMismatchError
        from passlib.hash import argon2 as passlib_argon2
        def cffi(password, h):
            try:
                return PasswordHasher().verify(h, password)
            except VerifyMismatchError:
                return False
        for line in sys.stdin:
            item = json.loads(line)
            p, h = item["password"], item["hash"]
            print("%d%d%d" % (cffi(p, h), passlib_argon2.verify(p, h), check_password(p, "argon2" + h)))
        """

    @Test(
        "argon2-cffi, passlib and Django verify credfile's argon2id strings, and refuse a wrong password",
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote(ExternalTool.peerPython))))
    func pythonPeersVerify() throws {
        try withSession { session in
            let password = session.password("Argon2-contraseña-2026")
            var input: [UInt8] = []
            for hash in try Self.madeByCredfile(password, in: session) {
                for candidate in [password, "x" + password] {
                    input += try JSONSerialization.data(withJSONObject: ["password": candidate, "hash": hash]) + [0x0A]
                }
            }
            let result = try Integration.run(
                try ExternalTool.path(ExternalTool.peerPython), ["-c", Self.pythonPeers], stdin: input, in: session)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdoutLines == ["111", "000", "111", "000"], "\(result)")
        }
    }

    @Test(
        "Dovecot's doveadm pw -t verifies {ARGON2ID} + credfile's string, and refuses a wrong password",
        .enabled(if: ExternalTool.runnable("doveadm"), Comment(rawValue: ExternalTool.skipNote("doveadm"))))
    func dovecotVerifies() throws {
        try withSession { session in
            let doveadm = try ExternalTool.path("doveadm")
            let password = session.password("Argon2-Dovecot-2026")
            for hash in try Self.madeByCredfile(password, in: session) {
                let right = try Integration.run(
                    doveadm, ["pw", "-t", "{ARGON2ID}" + hash, "-p", password], in: session)
                #expect(right.status == 0, "\(right)")
                let wrong = try Integration.run(
                    doveadm, ["pw", "-t", "{ARGON2ID}" + hash, "-p", password + "x"], in: session)
                #expect(wrong.status != 0, "\(wrong)")
            }
        }
    }

    @Test(
        "slapd with its argon2 module binds a user whose userPassword is {ARGON2} + credfile's string",
        .enabled(
            if: ExternalTool.runnable("slapd", "slapadd", "ldapwhoami"),
            Comment(rawValue: ExternalTool.skipNote("slapd", "slapadd", "ldapwhoami"))))
    func openLDAPBinds() throws {
        try withSession { session in
            let password = session.password("Argon2-LDAP-2026")
            let hashes = try Self.madeByCredfile(password, in: session)
            var entries = ""
            for (index, hash) in hashes.enumerated() {
                entries += "dn: uid=u\(index),ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: u\(index)\n"
                entries += "cn: u\(index)\nsn: u\(index)\nuserPassword: {ARGON2}\(hash)\n\n"
            }
            try IntegrationLDAPTests.withSlapd(session, modules: ["argon2"], ldif: entries) { bind in
                for index in hashes.indices {
                    let dn = "uid=u\(index),ou=people,dc=example,dc=org"
                    let (right, wrong) = (try bind(dn, password), try bind(dn, password + "x"))
                    #expect(right == 0, "u\(index) with the right password")
                    #expect(wrong == 49, "u\(index) with a wrong one")
                }
            }
        }
    }

    // MARK: The command line

    @Test(
        "calibrate's argon2id advice, pasted into the configuration file, reaches add, verify --upgrade, list and check"
    )
    func calibratesArgon2AdviceReachesEveryCommand() throws {
        try withSession { session in
            let password = session.password("naranjo-en-flor-argon2")
            let advice = try BuiltBinary.run(
                [
                    "calibrate", "--algorithm", "argon2id", "--memory", "64", "--target-ms", "5", "--config",
                    "/dev/null",
                ],
                stdin: nil, in: session)
            #expect(advice.status == 0, "\(advice)")
            let lines = advice.stdoutLines.filter { $0.contains(" = ") }.map(String.init)
            #expect(lines.first == "algorithm = argon2id" && lines.contains("memory = 64"), "\(advice)")
            let time = try #require(
                lines.first { $0.hasPrefix("time = ") }.flatMap { Int($0.dropFirst(7)) }, "\(advice)")
            let conf = try session.write("credfile.conf", lines.joined(separator: "\n") + "\nupgrade = yes\n")
            let file = session.path("users.txt")
            let input = Array((password + "\n").utf8)
            let added = try BuiltBinary.run(["add", file, "new", "--config", conf], stdin: input, in: session)
            #expect(added.status == 0, "\(added)")
            #expect(try session.text("users.txt").contains("new,$argon2id$v=19$m=64,t=\(time),p=1$"))
            // A PBKDF2 user logs in and is moved to argon2id by `upgrade = yes`.
            let old = try BuiltBinary.run(
                ["add", file, "old", "--iterations", "1", "--config", "/dev/null"], stdin: input, in: session)
            #expect(old.status == 0, "\(old)")
            let verified = try BuiltBinary.run(["verify", file, "old", "--config", conf], stdin: input, in: session)
            #expect(verified.status == 0, "\(verified)")
            #expect(try session.text("users.txt").contains("old,$argon2id$v=19$m=64,t=\(time),p=1$"))
            let denied = try BuiltBinary.run(
                ["verify", file, "old", "--config", conf], stdin: Array("x\n".utf8), in: session)
            #expect(denied.status == 1, "\(denied)")
            let list = try BuiltBinary.run(["list", file, "--config", conf], stdin: nil, in: session)
            #expect(list.stdoutLines == ["new\targon2id", "old\targon2id"], "\(list)")
            // 64 KiB × a few passes is below OWASP's floor: check says so, and add warned.
            let check = try BuiltBinary.run(["check", file, "--config", conf], stdin: nil, in: session)
            #expect(check.stdout.contains("weak"), "\(check)")
            #expect(added.stderr.contains("below OWASP's floor"), "\(added)")
            // At OWASP's own parameters nothing is weak.
            let owasp = try BuiltBinary.run(
                ["add", file, "owasp", "--algorithm", "argon2id", "--config", "/dev/null"], stdin: input, in: session)
            #expect(owasp.status == 0 && owasp.stderr.isEmpty, "\(owasp)")
            let checked = try BuiltBinary.run(
                ["check", file, "--algorithm", "argon2id", "--config", "/dev/null"], stdin: nil, in: session)
            #expect(!checked.stdout.contains("line 3") && !checked.stdout.contains(":3:"), "\(checked)")
        }
    }

    @Test(
        "memory, time and lanes outside their ranges (memory above max-memory too) are usage errors, and the file is not touched"
    )
    func argon2OptionsOutsideTheirRanges() throws {
        try withSession { session in
            let input = Array((session.password("naranjo-en-flor-argon2") + "\n").utf8)
            let file = session.path("users.txt")
            for options in [
                ["--memory", "7"], ["--memory", "1048577"], ["--time", "0"], ["--time", "11"], ["--lanes", "0"],
                ["--lanes", "256"], ["--memory", "31", "--lanes", "4"],
                // Above max-memory: its own new hashes would be too costly to verify.
                ["--memory", "2048", "--max-memory", "1M"], ["--memory", "262145"],
            ] {
                let result = try BuiltBinary.run(
                    ["add", file, "u", "--algorithm", "argon2id", "--config", "/dev/null"] + options, stdin: input,
                    in: session)
                expectUsageError(result)
                #expect(!FileManager.default.fileExists(atPath: file), "\(options)")
            }
            let fine = try BuiltBinary.run(
                [
                    "add", file, "u", "--algorithm", "argon2id", "--memory", "32", "--lanes", "4", "--time", "1",
                    "--config", "/dev/null",
                ],
                stdin: input, in: session)
            #expect(fine.status == 0, "\(fine)")
            #expect(try session.text("users.txt").contains("u,$argon2id$v=19$m=32,t=1,p=4$"))
        }
    }
}
