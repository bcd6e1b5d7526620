import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §7 + §9 with the real callers, run as they run for real, and the log through a
// real syslog daemon to the real fail2ban-regex:
// * Linux-PAM: pamtester → pam_exec → `credfile pam`, with PAM_RHOST from `pamtester -I rhost=…`;
// * Dovecot 2.3: `doveadm auth test -x rip=…` → passdb checkpassword, run as `dovecot`;
// * Squid 5: curl through the proxy → `credfile helper`, run as `proxy`.
// Each is configured by the recipe the repository ships (`Examples/pam`, `Examples/dovecot`,
// `Examples/squid`: the caller's file and the section of /etc/credfile.conf with a `state`
// database its own user may write), only its paths replaced, after this test's guard limits.

/// The guard settings of these tests: no free failure, then 1, 2, 4, 8… s, lockout at
/// 5 (delays this long so that a loaded machine's slow caller still lands inside them).
private let guardConfiguration = """
    iterations = 1000
    free-failures = 0
    max-failures = 5
    max-delay = 60
    log = syslog

    """

/// `/usr/bin/credfile` on a host whose configuration is this test's guard settings and
/// then the recipe's section `Examples/RECIPE` for `file`, with its database at `state`.
private func configuredCredfile(
    _ session: CLISession, recipe: String, file: (recipe: String, test: String), state: (recipe: String, test: String)
) throws -> String {
    let configuration = try Integration.configuration(
        in: session, preamble: guardConfiguration, recipe: recipe,
        replacing: [file.recipe: file.test, state.recipe: state.test])
    return try Integration.credfile(in: session, configuration: configuration)
}

/// The users of every caller: names with capitals and non-ASCII letters, and `alice`,
/// whose capitalized `ALICE` must not be her.
private let users = [("Carol", "Carol-Pass-2026!"), ("José", "José-Contraseña-26"), ("alice", "Alice-Pass-2026!")]

/// Drives one caller through SPEC §9's sequence for `user` (no free failure, lockout at
/// 5): failures 1–4 (waiting out each delay: 1, 2, 4 s), an attempt with the right
/// password within the 8 s delay after the 4th (throttled), a 5th failure after that
/// delay (locked out), the right password again (locked out). `attempt` returns whether
/// the caller granted the login.
private func exerciseGuard(user: String, password: String, _ attempt: (String) throws -> Bool) throws {
    #expect(try !attempt("wrong-1"), "1st failure")
    usleep(1_200_000)
    #expect(try !attempt("wrong-2"), "2nd failure")
    usleep(2_200_000)
    #expect(try !attempt("wrong-3"), "3rd failure")
    usleep(4_200_000)
    #expect(try !attempt("wrong-4"), "4th failure")
    #expect(try !attempt(password), "\(user) was granted while throttled")  // within 8 s of the 4th
    usleep(8_200_000)
    #expect(try !attempt("wrong-5"), "5th failure")
    #expect(try !attempt(password), "\(user) was granted while locked out")
}

/// The reasons logged for `user`, in order, and whether a `locked out` line came.
private func loggedReasons(_ lines: [String], user: String) -> (reasons: [String], lockedOut: Bool) {
    let shown = GuardLog.value(user)
    let reasons = lines.filter { $0.contains("authentication failure;") && $0.contains(" user=\(shown) ") }.compactMap {
        $0.split(separator: " ").last.map { String($0.dropFirst("reason=".count)) }
    }
    return (reasons, lines.contains { $0.contains("locked out; user=\(shown) failures=5") })
}

private let expectedReasons = [
    "wrong-password", "wrong-password", "wrong-password", "wrong-password", "throttled", "wrong-password", "locked-out",
]

@Suite("Guarding logins with the real callers, rsyslogd and fail2ban (SPEC §7, §9)", .serialized)
struct GuardIntegrationTests {
    // MARK: PAM

    @Test(
        "pamtester → pam_exec → credfile pam: names as typed, throttling and lockout, rhost from PAM_RHOST, syslog lines, fail2ban",
        .enabled(
            if: ExternalTool.runnable("pamtester", "rsyslogd", "unshare", "fail2ban-regex")
                && (canWriteSystemPAM || ExternalTool.isCI),
            Comment(
                rawValue: ExternalTool.skipNote("pamtester", "rsyslogd", "unshare", "fail2ban-regex") + " (and root)")))
    func pam() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: users)
            let syslog = try SyslogDaemon(in: session.path("syslog"))
            defer { syslog.stop() }
            let state = try Integration.guardState(in: session, for: "root")
            let credfile = try configuredCredfile(
                session, recipe: "pam/credfile.conf", file: ("/etc/credfile/app.cred", file),
                state: ("/var/lib/credfile/www-data/app.guard.db", state))
            let service = try SystemPAMService(
                text: try Integration.example(
                    "pam/credfile-app", replacing: ["/usr/bin/credfile": credfile, "/etc/credfile/app.cred": file]))
            defer { service.remove() }
            let pamtester = try ExternalTool.path("pamtester")
            func attempt(_ user: String, _ password: String, rhost: String = "203.0.113.9") throws -> Bool {
                let (program, arguments) = syslog.namespaced(
                    pamtester, ["-I", "rhost=\(rhost)", service.name, user, "authenticate"])
                let result = try Integration.run(program, arguments, stdin: Array((password + "\n").utf8), in: session)
                return result.status == 0 && result.stdout.contains("successfully authenticated")
            }
            for (user, password) in users { #expect(try attempt(user, session.password(password)), "\(user)") }
            #expect(try !attempt("ALICE", users[2].1), "ALICE is not alice")
            try exerciseGuard(user: "Carol", password: users[0].1) { try attempt("Carol", $0) }
            // A name that tries to forge the address field, from another address.
            #expect(try !attempt("eve rhost=192.0.2.66", "x", rhost: "198.51.100.7"))
            let lines = syslog.waitForLines(in: syslog.authLog, containing: "user=eve", count: 1)
            let (reasons, lockedOut) = loggedReasons(lines, user: "Carol")
            #expect(reasons == expectedReasons, "\(lines.joined(separator: "\n"))")
            #expect(lockedOut)
            #expect(
                lines.contains {
                    $0.contains("credfile[")
                        && $0.contains("authentication success; service=pam user=José rhost=203.0.113.9 ")
                })
            #expect(
                lines.contains {
                    $0.contains(
                        "authentication failure; service=pam user=Carol rhost=203.0.113.9 file=\(GuardLog.value(file)) reason=throttled"
                    )
                }, "\(lines.joined(separator: "\n"))")
            #expect(lines.contains { $0.contains("user=eve\\x20rhost\\x3D192.0.2.66 rhost=198.51.100.7 ") })
            // Facility authpriv (only authpriv reaches auth.log), success at info, failures at notice.
            let levels = syslog.lines(of: syslog.levelLog)
            #expect(
                levels.contains {
                    $0.hasPrefix("authpriv.info credfile[")
                        && $0.contains("authentication success; service=pam user=Carol")
                })
            #expect(levels.contains { $0.hasPrefix("authpriv.notice credfile[") && $0.contains("reason=throttled") })
            #expect(
                levels.contains {
                    $0.hasPrefix("authpriv.warning credfile[") && $0.contains("locked out; user=Carol failures=5")
                })
            Canary.expectNoLeak(lines.joined(separator: "\n"), of: "syslog")
            for (_, password) in users { #expect(!lines.contains { $0.contains(password) }) }
            try checkFail2ban(
                session, authLog: syslog.authLog, banned: ["203.0.113.9", "198.51.100.7"], notBanned: ["192.0.2.66"])
        }
    }

    /// The shipped filter and jail, installed into a copy of /etc/fail2ban, read by the
    /// real fail2ban-regex against the lines rsyslogd wrote: the addresses it would ban.
    func checkFail2ban(_ session: CLISession, authLog: String, banned: [String], notBanned: [String]) throws {
        let regex = try ExternalTool.path("fail2ban-regex")
        let configuration = session.path("fail2ban")
        let copy = try Integration.run("/bin/cp", ["-R", "/etc/fail2ban", configuration], in: session)
        try #require(copy.status == 0, "\(copy)")
        let examples = BuiltProduct.packageRoot.appendingPathComponent("Examples/fail2ban").path
        for part in ["filter.d/credfile.conf", "jail.d/credfile.local"] {
            try writeBytes(configuration + "/" + part, try readBytes(examples + "/" + part), mode: 0o644)
        }
        let ips = try Integration.run(regex, ["-c", configuration, "-o", "ip", authLog, "credfile"], in: session)
        try #require(ips.status == 0, "\(ips)")
        let found = Set(ips.stdout.split(separator: "\n").map(String.init))
        #expect(found == Set(banned), "fail2ban-regex found \(found.sorted())")
        for address in notBanned { #expect(!found.contains(address)) }
        // Every failure line with an address matches; success lines and addressless ones do not.
        let summary = try Integration.run(regex, ["-c", configuration, authLog, "credfile"], in: session)
        let failures =
            (try? String(contentsOfFile: authLog, encoding: .utf8))?.split(separator: "\n")
            .filter { $0.contains("authentication failure;") && !$0.contains(" rhost= ") }.count ?? -1
        #expect(summary.stdout.contains("\(failures) matched"), "\(summary.stdout)")
        // The jail reads (fail2ban-client's configuration dump names its filter and log).
        let client = try ExternalTool.path("fail2ban-client")
        let dump = try Integration.run(client, ["-c", configuration, "-d"], in: session)
        #expect(
            dump.stdout.contains("['add', 'credfile',") && dump.stdout.contains("authentication failure; service="),
            "\(dump)")
    }

    // MARK: Dovecot

    @Test(
        "Dovecot (auth as dovecot, auth_username_format = %u): Carol and José log in, ALICE is not alice, throttling and lockout, rhost from rip",
        .enabled(
            if: ExternalTool.runnable("dovecot", "doveadm", "rsyslogd", "unshare") && isRoot,
            Comment(rawValue: ExternalTool.skipNote("dovecot", "doveadm", "rsyslogd", "unshare") + " (and root)")))
    func dovecot() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: users)
            let syslog = try SyslogDaemon(in: session.path("syslog"))
            defer { syslog.stop() }
            let state = try Integration.guardState(in: session, for: "dovecot")
            let credfile = try configuredCredfile(
                session, recipe: "dovecot/credfile.conf", file: ("/etc/credfile/mail.cred", file),
                state: ("/var/lib/credfile/dovecot/mail.guard.db", state))
            let base = session.path("dovecot")
            mkdir(base, 0o755)
            try session.write(
                "dovecot/dovecot.conf",
                try IntegrationServerTests.dovecotConfiguration(base: base, credfile: credfile, file: file))
            let dovecot = try ExternalTool.path("dovecot")
            let doveadm = try ExternalTool.path("doveadm")
            let (program, arguments) = syslog.namespaced(dovecot, ["-F", "-c", base + "/dovecot.conf"])
            let daemon = try Daemon(program, arguments, logIn: session)
            defer { daemon.stop() }
            try Integration.waitForFile(base + "/run/auth-client")
            // Dovecot's own penalty delays repeated failures from one address (2, 4, 8, 15 s),
            // which would stretch this test past credfile's delays: each attempt comes from
            // an address of its own (the log's rhost follows it).
            var address = 10
            func attempt(_ user: String, _ password: String) throws -> Bool {
                address += 1
                let result = try Integration.run(
                    doveadm,
                    ["-c", base + "/dovecot.conf", "auth", "test", "-x", "rip=192.0.2.\(address)", user, password],
                    in: session)
                #expect(!result.stdout.contains("temp_fail") && !result.stderr.contains("temp_fail"), "\(result)")
                return result.status == 0 && result.stdout.contains("auth succeeded")
            }
            for (user, password) in users {
                #expect(try attempt(user, session.password(password)), "\(user): \(daemon.output)")
            }
            #expect(try !attempt("ALICE", users[2].1), "ALICE is not alice")
            try exerciseGuard(user: "José", password: users[1].1) { try attempt("José", $0) }
            let lines = syslog.waitForLines(in: syslog.authLog, containing: "locked-out", count: 1)
            let (reasons, lockedOut) = loggedReasons(lines, user: "José")
            #expect(reasons == expectedReasons, "\(lines.joined(separator: "\n"))")
            #expect(lockedOut)
            #expect(
                lines.contains { $0.contains("service=checkpassword user=Jos\u{e9} rhost=192.0.2.\(address) ") },
                "\(lines.joined(separator: "\n"))")
            // The database is the dovecot user's (root never touched it: Dovecot ran the checks).
            // the user exists: guardState found it
            #expect(try statInfo(state).st_uid == getpwnam("dovecot")!.pointee.pw_uid)
        }
    }

    // MARK: Squid

    @Test(
        "Squid (helper as proxy, casesensitive on): Carol and José log in, ALICE is not alice, throttling and lockout",
        .enabled(
            if: ExternalTool.runnable("squid", "curl", ExternalTool.peerPython, "rsyslogd", "unshare") && isRoot,
            Comment(
                rawValue: ExternalTool.skipNote("squid", "curl", ExternalTool.peerPython, "rsyslogd", "unshare")
                    + " (and root)"))
    )
    func squid() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: users)
            let syslog = try SyslogDaemon(in: session.path("syslog"))
            defer { syslog.stop() }
            let state = try Integration.guardState(in: session, for: "proxy")
            let credfile = try configuredCredfile(
                session, recipe: "squid/credfile.conf", file: ("/etc/credfile/proxy.cred", file),
                state: ("/var/lib/credfile/proxy/proxy.guard.db", state))
            let recipe = try squidRecipe(credfile: credfile, file: file)
            try withSquid(session, recipe: recipe, namespaced: syslog.namespaced) { status, proxy in
                func attempt(_ user: String, _ password: String) throws -> Bool {
                    let code = try status(user, password)
                    #expect(code == "200" || code == "407", "status \(code)")
                    return code == "200"
                }
                for (user, password) in users {
                    #expect(try attempt(user, session.password(password)), "\(user): \(proxy.output)")
                }
                #expect(try !attempt("ALICE", users[2].1), "ALICE is not alice")
                try exerciseGuard(user: "Carol", password: users[0].1) { try attempt("Carol", $0) }
                let logged = syslog.waitForLines(in: syslog.authLog, containing: "locked-out", count: 1)
                let (reasons, lockedOut) = loggedReasons(logged, user: "Carol")
                #expect(reasons == expectedReasons, "\(logged.joined(separator: "\n"))")
                #expect(lockedOut)
                #expect(logged.contains { $0.contains("authentication failure; service=helper user=Carol rhost= ") })
                // the user exists: guardState found it
                #expect(try statInfo(state).st_uid == getpwnam("proxy")!.pointee.pw_uid)
            }
        }
    }
}
