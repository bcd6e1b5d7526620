import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// Issue #33 item 5: every login check answers a fault with its own caller's temporary
// failure (SPEC §7, §10): checkpassword 111 (Dovecot reads only that as temporary), the
// Squid helper `BH`, pam 5, serve's start 5 (2 for a broken configuration), whatever
// broke: the configuration file, the credential file, the guard database. Faults come
// from the debug build's CREDFILE_TEST_FAULT hook (Internals/FaultInjection.swift) or from
// the setting itself (a state no one can create, a key the file cannot hold).

@Suite("Exit codes under faults: each caller's own temporary failure (issue #33 item 5)", .serialized)
struct FaultExitCodeTests {
    /// A way to make a login check fail before it can answer.
    struct Fault: CustomTestStringConvertible, Sendable {
        let name: String
        /// The configuration file's text.
        let configuration: String
        /// CREDFILE_TEST_FAULT, if any (the configuration file is the process's first `read`,
        /// FILE its second).
        let injected: String?
        /// Whether `serve` meets it at start (the others come at a request: 503, tested by
        /// the serve suites).
        let atStart: Bool
        /// serve's exit status when it meets it at start.
        let serveStatus: Int32
        var testDescription: String { name }
    }

    static let faults: [Fault] = [
        Fault(
            name: "the configuration file cannot be read (EIO)", configuration: "log = stderr\n",
            injected: "read:EIO:1", atStart: true, serveStatus: 5),
        Fault(
            name: "the configuration file cannot be opened (EIO)", configuration: "log = stderr\n",
            injected: "open:EIO:1", atStart: true, serveStatus: 5),
        Fault(
            name: "the configuration file is broken (unknown key)", configuration: "log = stderr\nno-such-key = 1\n",
            injected: nil, atStart: true, serveStatus: 2),
        Fault(
            name: "the credential file cannot be read (EIO)", configuration: "log = stderr\n",
            injected: "read:EIO:2", atStart: false, serveStatus: 0),
        Fault(
            name: "the guard database cannot be created",
            configuration: "log = stderr\nstate = /nonexistent/dir/app.db\n",
            injected: nil, atStart: false, serveStatus: 0),
    ]

    static func environment(_ fault: Fault) -> [String: String] {
        var environment = BuiltBinary.environment()
        environment["CREDFILE_TEST_FAULT"] = fault.injected
        return environment
    }

    /// FILE with bob, and the fault's configuration file.
    static func setUp(_ session: CLISession, _ fault: Fault) throws -> (file: String, conf: String, password: String) {
        let file = try GuardCLITests.file(session)
        let conf = try session.write("credfile.conf", fault.configuration)
        return (file, conf, session.password(GuardCLITests.bob.1))
    }

    @Test(
        "checkpassword exits 111, pam 5, the Squid helper answers BH, serve's start 5 or 2",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"),
        arguments: faults)
    func callersUnderFaults(_ fault: Fault) throws {
        try withSession { session in
            let (file, conf, password) = try Self.setUp(session, fault)
            let environment = Self.environment(fault)
            // checkpassword (fd 3: user\0password\0timestamp\0), as Dovecot runs it.
            try session.write("request", bytes: Array("bob".utf8) + [0] + Array(password.utf8) + [0, 0])
            let checkpassword = try Integration.run(
                "/bin/sh",
                [
                    "-c", "exec \"$0\" checkpassword \"$@\" 3<\(session.path("request"))",
                    try BuiltProduct.path("credfile"),
                    "--config", conf, file, "/bin/true",
                ],
                environment: environment, in: session)
            #expect(checkpassword.status == 111, "checkpassword: \(checkpassword)")
            // pam, as pam_exec expose_authtok runs it.
            var pamEnvironment = environment
            pamEnvironment["PAM_USER"] = "bob"
            pamEnvironment["PAM_TYPE"] = "auth"
            let pam = try BuiltBinary.run(
                ["pam", file, "--config", conf], stdin: Array(password.utf8), in: session, environment: pamEnvironment)
            #expect(pam.status == (fault.serveStatus == 2 ? 2 : 5), "pam: \(pam)")
            // The Squid helper: the request answered BH, with its channel ID (with a
            // one-time fault a later request would read FILE again and be answered).
            let helper = try BuiltBinary.run(
                ["helper", file, "--protocol", "squid", "--config", conf],
                stdin: Array("7 bob \(password)\n".utf8), in: session, environment: environment)
            #expect(
                helper.stdout.hasPrefix("7 BH ") && helper.stdout.split(separator: "\n").count == 1, "helper: \(helper)"
            )
            // serve: a fault at start ends it with SPEC §5's status before it listens.
            if fault.atStart {
                let serve = try BuiltBinary.run(
                    ["serve", file, "--listen", "127.0.0.1:1", "--config", conf], stdin: nil, in: session,
                    environment: environment)
                #expect(serve.status == fault.serveStatus, "serve: \(serve)")
            }
        }
    }

    @Test("without a fault the same runs are granted: checkpassword 0, pam 0, helper OK")
    func withoutFault() throws {
        try withSession { session in
            let fault = Fault(
                name: "none", configuration: "log = stderr\n", injected: nil, atStart: false, serveStatus: 0)
            let (file, conf, password) = try Self.setUp(session, fault)
            try session.write("request", bytes: Array("bob".utf8) + [0] + Array(password.utf8) + [0, 0])
            let checkpassword = try Integration.run(
                "/bin/sh",
                [
                    "-c", "exec \"$0\" checkpassword \"$@\" 3<\(session.path("request"))",
                    try BuiltProduct.path("credfile"),
                    "--config", conf, file, "/bin/true",
                ],
                environment: BuiltBinary.environment(), in: session)
            #expect(checkpassword.status == 0, "checkpassword: \(checkpassword)")
            var pamEnvironment = BuiltBinary.environment()
            pamEnvironment["PAM_USER"] = "bob"
            pamEnvironment["PAM_TYPE"] = "auth"
            let pam = try BuiltBinary.run(
                ["pam", file, "--config", conf], stdin: Array(password.utf8), in: session, environment: pamEnvironment)
            #expect(pam.status == 0, "pam: \(pam)")
            let helper = try BuiltBinary.run(
                ["helper", file, "--protocol", "squid", "--config", conf], stdin: Array("bob \(password)\n".utf8),
                in: session)
            #expect(helper.stdout == "OK\n", "helper: \(helper)")
        }
    }
}
