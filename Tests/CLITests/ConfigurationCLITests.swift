import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The configuration file (SPEC §5) through the real binary: where it is found, the
/// order of precedence, `[PATH]` sections through symlinks, refusals that name
/// FILE:LINE and write nothing, and `calibrate`'s advice reaching `add` and `verify`.
@Suite struct ConfigurationCLITests {
    /// Runs the binary with the password `password` (if any) on stdin.
    static func run(
        _ session: CLISession, _ arguments: [String], password: String? = nil,
        environment: [String: String] = BuiltBinary.environment()
    ) throws -> CLIResult {
        try BuiltBinary.run(
            arguments, stdin: password.map { Array(($0 + "\n").utf8) }, in: session, environment: environment)
    }

    /// The rounds `list` shows for `user` in `file`.
    static func rounds(_ session: CLISession, _ file: String, _ user: String) throws -> Int? {
        let list = try run(session, ["list", file, "--json", "--config", "/dev/null"])
        let entries = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []
        return entries.first { $0["user"] as? String == user }?["rounds"] as? Int
    }

    /// A configuration file at `name`, mode 0600.
    @discardableResult
    static func configure(_ session: CLISession, _ name: String, _ text: String) throws -> String {
        try session.write(name, text)
    }

    /// `credfile.conf`, mode 0600.
    @discardableResult
    static func configure(_ session: CLISession, _ text: String) throws -> String {
        try configure(session, "credfile.conf", text)
    }

    @Test func theCommandLineWinsOverASectionWhichWinsOverTheTopWhichWinsOverTheDefaults() throws {
        try withSession { session in
            let password = session.password("naranjo-en-flor-2026")
            let conf = try Self.configure(
                session,
                """
                # site policy
                iterations = 1000
                [\(session.path("web.txt"))]
                iterations = 2000
                """)
            let file = session.path("web.txt")
            #expect(
                try Self.run(
                    session, ["add", file, "cli", "--config", conf, "--iterations", "3000"], password: password
                ).status == 0)
            #expect(try Self.run(session, ["add", file, "section", "--config", conf], password: password).status == 0)
            #expect(
                try Self.run(session, ["add", session.path("other.txt"), "top", "--config", conf], password: password)
                    .status == 0)
            #expect(try Self.rounds(session, file, "cli") == 3000)
            #expect(try Self.rounds(session, file, "section") == 2000)
            #expect(try Self.rounds(session, session.path("other.txt"), "top") == 1000)
            // No configuration: the default.
            #expect(
                try Self.run(session, ["add", file, "default", "--config", "/dev/null"], password: password).status == 0
            )
            #expect(try Self.rounds(session, file, "default") == HashPolicy.defaultRounds)
        }
    }

    @Test func aSectionNamingASymlinkAppliesToItsTargetAndTheOtherWayRound() throws {
        try withSession { session in
            let password = session.password("naranjo-en-flor-2026")
            try session.write("real.txt", "")
            #expect(symlink(session.path("real.txt"), session.path("link.txt")) == 0)
            try session.write("real2.txt", "")
            #expect(symlink(session.path("real2.txt"), session.path("link2.txt")) == 0)
            let conf = try Self.configure(
                session,
                """
                iterations = 1000
                [\(session.path("link.txt"))]
                iterations = 2000
                [\(session.path("real2.txt"))]
                iterations = 4000
                """)
            #expect(
                try Self.run(session, ["add", session.path("real.txt"), "a", "--config", conf], password: password)
                    .status == 0)
            #expect(try Self.run(session, ["add", "link2.txt", "b", "--config", conf], password: password).status == 0)
            #expect(try Self.rounds(session, session.path("real.txt"), "a") == 2000)
            #expect(try Self.rounds(session, session.path("real2.txt"), "b") == 4000)
        }
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var mode: mode_t = 0o600
        var owner: uid_t? = nil
        /// What stderr must contain after the escaped path.
        var place: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        Refusal(
            name: "unknown key", text: "iterations = 1000\n\niteration = 1000\n", place: ":3: unknown key 'iteration'"),
        Refusal(name: "bad value", text: "# ok\nlock-timeout = soon\n", place: ":2: lock-timeout takes seconds"),
        Refusal(name: "bad flag", text: "upgrade = maybe\n", place: ":1: upgrade takes yes, no, true or false"),
        Refusal(
            name: "bad value in a section", text: "[/etc/x]\nmin-length = 0\n",
            place: ":2: min-length takes a whole number"),
        Refusal(
            name: "group-writable", text: "iterations = 1000\n", mode: 0o620,
            place: ": its group or others can write it (mode 0620)"),
        Refusal(
            name: "world-writable", text: "iterations = 1000\n", mode: 0o606,
            place: ": its group or others can write it (mode 0606)"),
        Refusal(name: "foreign owner", text: "iterations = 1000\n", owner: 65534, place: ": it belongs to uid 65534"),
    ])
    func aBadConfigurationIsAUsageErrorNamingFileAndLineAndNothingIsWritten(_ refusal: Refusal) throws {
        if refusal.owner != nil && getuid() != 0 {
            // Only root can give a file to another user; under CI the suite runs as root.
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "the foreign-owner case needs root under CI")
            return
        }
        try withSession { session in
            let password = session.password("naranjo-en-flor-2026")
            // A name with a bidi control: printed escaped, as every path.
            let conf = try Self.configure(session, "odd\u{202E}.conf", refusal.text)
            chmod(conf, refusal.mode)
            if let owner = refusal.owner { #expect(chown(conf, owner, owner) == 0) }
            let shown = session.path("odd\\u{202e}.conf")
            let file = session.path("users.txt")
            for environment in [["CREDFILE_CONFIG": conf], [:]] {
                let arguments = environment.isEmpty ? ["add", file, "ana", "--config", conf] : ["add", file, "ana"]
                let result = try Self.run(
                    session, arguments, password: password,
                    environment: BuiltBinary.environment().merging(environment) { $1 })
                expectUsageError(result)
                #expect(result.stderr.hasPrefix("credfile: \(shown)\(refusal.place)"), "\(result)")
                #expect(!FileManager.default.fileExists(atPath: file), "a file was written on a refused configuration")
            }
            // A command that writes nothing and takes no file refuses it too.
            expectUsageError(try Self.run(session, ["hash", "--config", conf], password: password))
        }
    }

    @Test func theFileIsFoundThroughConfigOrCREDFILE_CONFIGAndMissingOnlyWhenNotNamed() throws {
        try withSession { session in
            let password = session.password("naranjo-en-flor-2026")
            let one = try Self.configure(session, "one.conf", "iterations = 1000\n")
            let two = try Self.configure(session, "two.conf", "iterations = 2000\n")
            let file = session.path("users.txt")
            var environment = BuiltBinary.environment()
            environment["CREDFILE_CONFIG"] = one
            #expect(
                try Self.run(session, ["add", file, "env"], password: password, environment: environment).status == 0)
            #expect(
                try Self.run(
                    session, ["add", file, "flag", "--config", two], password: password, environment: environment
                ).status == 0)
            #expect(try Self.rounds(session, file, "env") == 1000)
            #expect(try Self.rounds(session, file, "flag") == 2000)
            // Named but missing: refused. An empty CREDFILE_CONFIG is unset.
            environment["CREDFILE_CONFIG"] = session.path("missing.conf")
            let missing = try Self.run(session, ["list", file], environment: environment)
            expectUsageError(missing)
            #expect(missing.stderr.hasPrefix("credfile: \(session.path("missing.conf")): cannot read it"), "\(missing)")
            expectUsageError(try Self.run(session, ["list", file, "--config", session.path("missing.conf")]))
            environment["CREDFILE_CONFIG"] = ""
            #expect(try Self.run(session, ["list", file], environment: environment).status == 0)
        }
    }

    @Test func calibratesLinePastedIntoTheFileReachesAddAndVerify() throws {
        try withSession { session in
            let password = session.password("naranjo-en-flor-2026")
            let conf = session.path("credfile.conf")
            let calibrate = try Self.run(session, ["calibrate", "--target-ms", "2", "--config", conf + ".none"])
            expectUsageError(calibrate)  // a named file that is missing
            let advice = try Self.run(session, ["calibrate", "--target-ms", "2", "--config", "/dev/null"])
            #expect(advice.status == 0, "\(advice)")
            let line = try #require(
                advice.stdoutLines.first { $0.hasPrefix("iterations = ") }.map(String.init), "\(advice)")
            #expect(advice.stdout.contains("Put in /dev/null, in its top part"), "\(advice)")
            let rounds = try #require(Int(line.dropFirst("iterations = ".count)))
            try Self.configure(session, "# from calibrate\n\(line)\nupgrade = yes\n")
            let file = session.path("users.txt")
            #expect(try Self.run(session, ["add", file, "new", "--config", conf], password: password).status == 0)
            #expect(try Self.rounds(session, file, "new") == rounds)
            // verify: `upgrade = yes` from the file, the policy's rounds from calibrate.
            #expect(
                try Self.run(
                    session, ["add", file, "old", "--iterations", "1", "--config", "/dev/null"], password: password
                ).status == 0)
            #expect(try Self.rounds(session, file, "old") == 1)
            #expect(try Self.run(session, ["verify", file, "old", "--config", conf], password: password).status == 0)
            #expect(try Self.rounds(session, file, "old") == rounds)
        }
    }

    @Test func aKeyForAnOptionTheCommandDoesNotTakeIsIgnored() throws {
        try withSession { session in
            let password = session.password("naranjo-en-flor-2026")
            let conf = try Self.configure(
                session, "upgrade = yes\njobs = 2\nbase-dn = dc=example,dc=org\nbackup = yes\n")
            let file = session.path("users.txt")
            #expect(try Self.run(session, ["add", file, "ana", "--config", conf], password: password).status == 0)
            // a new file has no previous version
            #expect(FileManager.default.fileExists(atPath: file + ".bak") == false)
            #expect(try Self.run(session, ["add", file, "bea", "--config", conf], password: password).status == 0)
            #expect(FileManager.default.fileExists(atPath: file + ".bak"), "backup = yes reaches add")
            let list = try Self.run(session, ["list", file, "--config", conf])
            #expect(list.status == 0 && list.stdout.contains("ana"), "\(list)")
            // On the command line the same option is still refused where it does not apply.
            expectUsageError(try Self.run(session, ["list", file, "--upgrade", "--config", conf]))
        }
    }

    @Test func blocklistLinesAccumulateAndMinLengthComesFromTheFile() throws {
        try withSession { session in
            let a = try session.write("a.txt", "primera-palabra-larga\n")
            let b = try session.write("b.txt", "segunda-palabra-larga\n")
            let conf = try Self.configure(session, "blocklist = \(a)\nblocklist = \(b)\nmin-length = 6\n")
            let file = session.path("users.txt")
            for word in ["primera-palabra-larga", "segunda-palabra-larga"] {
                let refused = try Self.run(
                    session, ["add", file, "ana", "--config", conf], password: session.password(word))
                expectUsageError(refused)
                #expect(refused.stderr.contains("blocklist"), "\(refused)")
            }
            let short = try Self.run(
                session, ["add", file, "ana", "--config", conf, "--iterations", "1"],
                password: session.password("abcdef7"))
            #expect(short.status == 0, "\(short)")
            #expect(
                short.stderr.contains("warning: a minimum password length of 6 is below NIST's floor of 8"), "\(short)")
        }
    }

    @Test func theDefaultMinimumIsFifteenAndMinLengthEightAllowsEight() throws {
        try withSession { session in
            let file = session.path("users.txt")
            let fourteen = session.password("catorce-letras")
            let refused = try Self.run(session, ["add", file, "ana", "--config", "/dev/null"], password: fourteen)
            expectUsageError(refused)
            #expect(refused.stderr.contains("at least 15 characters"), "\(refused)")
            let eight = try Self.run(
                session, ["add", file, "ana", "--config", "/dev/null", "--min-length", "8", "--iterations", "1"],
                password: fourteen)
            #expect(eight.status == 0 && !eight.stderr.contains("NIST"), "\(eight)")
        }
    }
}
