import CredFileTestSupport
import Testing

/// What the built `credfile` loads (issue #34 item 9): libmicrohttpd, libsystemd and ICU,
/// with everything they bring (GnuTLS, libgcrypt, ICU's data…), are opened at first use
/// by `serve` and `export --to ldif` (Documentation/Decisions.md §7 "Start-up"), so the
/// commands that start a process per login never map them. The dynamic loader itself
/// says what it maps (`LD_DEBUG=files`).
@Suite struct StartupTests {
    /// The libraries only `serve` or `export --to ldif` may load, and what they bring.
    /// (Not libstdc++: the Swift runtime of a debug build needs it.)
    static let heavy = ["libmicrohttpd", "libsystemd", "libicu", "libgnutls", "libgcrypt", "liblz4", "libzstd"]

    /// The file names of the shared objects the dynamic loader mapped for `arguments`,
    /// read from its `file=NAME [0];  needed by …` / `file=NAME [0];  dynamically loaded by …`
    /// lines, and the result.
    func loaded(_ session: CLISession, _ arguments: [String], stdin: String? = nil) throws -> (
        objects: Set<String>, result: CLIResult
    ) {
        var environment = BuiltBinary.environment()
        environment["LD_DEBUG"] = "files"
        let result = try BuiltBinary.run(
            arguments, stdin: stdin.map { Array($0.utf8) }, in: session, environment: environment)
        var objects: Set<String> = []
        for line in result.stderr.split(separator: "\n") {
            guard let start = line.firstRange(of: "file=") else { continue }
            let name = line[start.upperBound...].prefix { $0 != " " && $0 != "\t" && $0 != ";" }
            objects.insert(String(name.split(separator: "/").last ?? name))
        }
        return (objects, result)
    }

    static func heavyOnes(_ objects: Set<String>) -> [String] {
        objects.filter { object in heavy.contains { object.hasPrefix($0) } }.sorted()
    }

    @Test(
        "--version, verify, check and list map none of serve's or export's libraries",
        arguments: [["--version"], ["verify", "users.txt", "alice"], ["check", "users.txt"], ["list", "users.txt"]])
    func lightCommands(_ arguments: [String]) throws {
        try withSession { session in
            let password = session.password("Startup-Pass-1~~")
            _ = try session.write("users.txt", "")
            let added = try BuiltBinary.run(
                ["add", session.path("users.txt"), "alice", "--iterations", "1"], stdin: Array((password + "\n").utf8),
                in: session)
            try #require(added.status == 0, "\(added)")
            let arguments =
                arguments.count == 1
                ? arguments : arguments.map { $0 == "users.txt" ? session.path($0) : $0 } + ["--iterations", "1"]
            let (objects, result) = try loaded(session, arguments, stdin: password + "\n")
            #expect(result.status == 0, "\(result.status)")
            #expect(objects.contains { $0.hasPrefix("libcrypto") }, "the loader's lines were not read: \(objects)")
            #expect(Self.heavyOnes(objects).isEmpty, "\(arguments.first ?? "") mapped \(Self.heavyOnes(objects))")
        }
    }

    @Test("export --to ldif opens ICU when it prepares the first name, and nothing of serve's")
    func exportOpensICU() throws {
        try withSession { session in
            let password = session.password("Startup-Pass-2~~")
            _ = try session.write("users.txt", "")
            let added = try BuiltBinary.run(
                ["add", session.path("users.txt"), "José", "--iterations", "1"], stdin: Array((password + "\n").utf8),
                in: session)
            try #require(added.status == 0, "\(added)")
            let (objects, result) = try loaded(session, ["export", session.path("users.txt"), "--to", "ldif"])
            #expect(result.status == 0, "\(result.status)")
            #expect(result.stdout.contains("uid:: Sm9zw6k="), "\(result.stdout)")
            #expect(objects.contains { $0.hasPrefix("libicuuc.so.") }, "\(objects)")
            #expect(
                !objects.contains { $0.hasPrefix("libmicrohttpd") || $0.hasPrefix("libsystemd") }, "\(objects)")
        }
    }
}
