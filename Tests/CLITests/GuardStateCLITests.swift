import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// Issue #33 item 4 through the binary: a relative `state` refused naming FILE:LINE,
// `failures` that creates nothing, `unlock` saying what it did, and the admin commands
// logged with who ran them. The library's side: GuardStateTests.

@Suite("Guard state through the binary (issue #33 item 4)", .serialized)
struct GuardStateCLITests {
    /// The real user's name, as the log names whoever ran an admin command.
    static var realUser: String { String(cString: getpwuid(getuid()).pointee.pw_name) }

    @Test("a relative state in the configuration file is refused: exit 2 naming FILE:LINE, nothing created")
    func relativeState() throws {
        try withSession { session in
            let file = try GuardCLITests.file(session)
            let conf = try session.write("credfile.conf", "log = stderr\nstate = guard/app.db\n")
            let result = try BuiltBinary.run(
                ["verify", file, "bob", "--config", conf], stdin: Array("whatever\n".utf8), in: session)
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("\(conf):2: state takes an absolute path"), "\(result)")
            #expect(!fileExists(session.path("guard")) && !fileExists(file + ".guard.db"))
            // An absolute one is taken.
            let absolute = try session.write("absolute.conf", "state = \(session.path("own.db"))\n")
            let listed = try BuiltBinary.run(["failures", file, "--config", absolute], stdin: nil, in: session)
            #expect(listed.status == 0, "\(listed)")
        }
    }

    @Test("failures without a database lists nothing and creates none")
    func failuresCreateNothing() throws {
        try withSession { session in
            let file = try GuardCLITests.file(session)
            for arguments in [["failures", file], ["failures", file, "bob"], ["failures", file, "--json"]] {
                let result = try BuiltBinary.run(arguments + ["--config", "/dev/null"], stdin: nil, in: session)
                #expect(result.status == 0 && !fileExists(file + ".guard.db"), "\(arguments): \(result)")
            }
        }
    }

    @Test("guard = no still logs every decision in SPEC §9's format (fail2ban keeps working), counts nothing")
    func unguardedLoginsAreLogged() throws {
        try withSession { session in
            let file = try GuardCLITests.file(session)
            let conf = try session.write("credfile.conf", "guard = no\nlog = stderr\n")
            for n in 1...8 {
                let wrong = try GuardCLITests.verify(session, file, "bob", "wrong-\(n)", ["--config", conf])
                #expect(wrong.status == 1, "\(wrong)")
                #expect(
                    wrong.stderr.contains(
                        "authentication failure; service=verify user=bob rhost= file=\(file) reason=wrong-password"),
                    "\(wrong)")
            }
            let unknown = try GuardCLITests.verify(session, file, "nobody", "wrong", ["--config", conf])
            #expect(unknown.stderr.contains("user=nobody rhost= file=\(file) reason=unknown-user"), "\(unknown)")
            // Never throttled: the right password after 8 failures is granted, and logged.
            let right = try GuardCLITests.verify(session, file, "bob", GuardCLITests.bob.1, ["--config", conf])
            #expect(right.status == 0, "\(right)")
            #expect(right.stderr.contains("authentication success; service=verify user=bob rhost= file=\(file)"))
            #expect(right.stderr.contains("guard disabled; service=verify"), "\(right)")
            // pam too, with PAM_RHOST as rhost.
            var environment = BuiltBinary.environment()
            environment["PAM_USER"] = "bob"
            environment["PAM_TYPE"] = "auth"
            environment["PAM_RHOST"] = "203.0.113.9"
            let pam = try BuiltBinary.run(
                ["pam", file, "--config", conf], stdin: Array("wrong".utf8), in: session, environment: environment)
            #expect(pam.status == 1 && pam.stderr.contains("service=pam user=bob rhost=203.0.113.9"), "\(pam)")
            #expect(!fileExists(file + ".guard.db"))
        }
    }

    @Test("unlock says what it did (entry, lockout, failures), and lock, unlock and failures --reset are logged")
    func unlockSaysAndAdminLogs() throws {
        try withSession { session in
            let file = try GuardCLITests.file(session)
            let options = guardOptions(free: 5, maxFailures: 2) + ["--config", "/dev/null"]
            for n in 1...2 { _ = try GuardCLITests.verify(session, file, "bob", "wrong-\(n)", options) }
            let locked = try GuardCLITests.verify(session, file, "bob", GuardCLITests.bob.1, options)
            #expect(locked.stderr.contains("reason=locked-out"), "\(locked)")
            let by = "by=\(GuardLog.value(Self.realUser)) uid=\(getuid())"
            // Locked out by the guard, the entry not locked.
            let unlock = try BuiltBinary.run(["unlock", file, "bob"] + options, stdin: nil, in: session)
            #expect(unlock.status == 0, "\(unlock)")
            #expect(unlock.stdout.contains("the entry was not locked; the guard's lockout ended (2 failures cleared)"))
            #expect(
                unlock.stderr.contains(
                    "user unlocked; user=bob file=\(file) \(by) entry=unchanged failures=2"), "\(unlock)")
            #expect(try GuardCLITests.verify(session, file, "bob", GuardCLITests.bob.1, options).status == 0)
            // The entry locked, no failures.
            let lock = try BuiltBinary.run(
                ["lock", file, "bob", "--log", "stderr", "--config", "/dev/null"], stdin: nil, in: session)
            #expect(lock.status == 0 && lock.stderr.contains("user locked; user=bob file=\(file) \(by)"), "\(lock)")
            let again = try BuiltBinary.run(["unlock", file, "bob"] + options, stdin: nil, in: session)
            #expect(again.stdout.contains("user unlocked; no failures recorded"), "\(again)")
            #expect(again.stderr.contains("entry=unlocked failures=0"), "\(again)")
            // failures --reset, one name and all.
            _ = try GuardCLITests.verify(session, file, "bob", "wrong-3", options)
            let reset = try BuiltBinary.run(["failures", file, "bob", "--reset"] + options, stdin: nil, in: session)
            #expect(reset.stderr.contains("failures reset; user=bob file=\(file) \(by) failures=1"), "\(reset)")
            let all = try BuiltBinary.run(["failures", file, "--reset"] + options, stdin: nil, in: session)
            #expect(all.stderr.contains("failures reset; file=\(file) \(by) names=0"), "\(all)")
        }
    }
}
