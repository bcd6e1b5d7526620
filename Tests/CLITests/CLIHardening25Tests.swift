import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile

#if canImport(Glibc)
import Glibc
#endif

/// Issue #25's items that a real `credfile` process shows: output that cannot be written
/// (item 18), `upgrade`'s last read (item 18).
@Suite struct CLIHardening25Tests {
    /// A clean file (one hashed user, so `check` finds nothing) and its path.
    static func cleanFile(_ session: CLISession) throws -> String {
        let hash = try PasswordHash(
            hashing: Password(session.password("Alice-Full-Disk-1")), policy: HashPolicy(rounds: 1))
        return try session.write("users.txt", "alice,\(hash.string)\n")
    }

    /// Every command that prints on standard output, as `credfile` arguments (FILE is
    /// put in) and standard input.
    static let printingCommands: [(name: String, arguments: [String], stdin: String)] = [
        ("list", ["list", "FILE"], ""),
        ("list --json", ["list", "--json", "FILE"], ""),
        ("check", ["check", "FILE", "--iterations", "1"], ""),
        ("check --json", ["check", "--json", "FILE", "--iterations", "1"], ""),
        ("hash", ["hash", "--iterations", "1"], "A-Hashed-Password-1\n"),
        ("export", ["export", "FILE", "--to", "ldif"], ""),
        ("passwd", ["passwd", "FILE", "alice", "--iterations", "1"], "Another-Password-22\n"),
        ("delete", ["delete", "FILE", "alice"], ""),
        ("import", ["import", "FILE", "--iterations", "1"], "bob,An-Imported-Password-3\n"),
        ("upgrade", ["upgrade", "FILE", "--iterations", "1"], ""),
        ("--help", ["--help"], ""),
        ("list --help", ["list", "--help"], ""),
        ("--version", ["--version"], ""),
    ]

    /// Runs `credfile ARGUMENTS` with standard output sent to `output` (`/dev/full`:
    /// every write fails with ENOSPC).
    static func run(_ arguments: [String], stdin: String, output: String, in session: CLISession) throws -> CLIResult {
        try session.spawn(
            "/bin/sh", ["-c", "exec \"$0\" \"$@\" >\(output)", try BuiltProduct.path("credfile")] + arguments,
            stdin: Array(stdin.utf8), environment: BuiltBinary.environment(), directory: session.directory)
    }

    @Test(
        "a command whose standard output cannot be written exits 5 and says so", arguments: 0..<printingCommands.count)
    func standardOutputThatFails(index: Int) throws {
        let command = Self.printingCommands[index]
        try withSession { session in
            let file = try Self.cleanFile(session)
            let arguments = command.arguments.map { $0 == "FILE" ? file : $0 }
            let full = try Self.run(arguments, stdin: command.stdin, output: "/dev/full", in: session)
            #expect(full.status == 5, "\(command.name): \(full)")
            #expect(full.stderr.contains("credfile: cannot write to standard output"), "\(command.name): \(full)")
            #expect(full.stderr.contains("No space left on device"), "\(command.name): \(full)")
            expectErrorFormat(full)
            // The same command with an output that works: it succeeds (the test is about the output).
            _ = try Self.cleanFile(session)
            let null = try Self.run(arguments, stdin: command.stdin, output: "/dev/null", in: session)
            #expect(null.status == 0, "\(command.name): \(null)")
        }
    }

    // MARK: upgrade's last read

    @Test(
        "upgrade: whichever read fails, a run that committed every hash exits 0 and says what it did",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func upgradeWhoseLastReadFails() throws {
        try withSession { session in
            var sawCommittedRun = false
            var sawFailedRun = false
            for call in 1...8 {
                let file = try session.write("plain.txt", "alice,Plain-Password-1\nbob,Plain-Password-2\n")
                var environment = BuiltBinary.environment()
                environment["CREDFILE_TEST_FAULT"] = "read:EIO:\(call)"
                let result = try BuiltBinary.run(
                    ["upgrade", file, "--iterations", "1", "--json"], stdin: nil, in: session, environment: environment)
                let after = CredentialFile(bytes: session.bytes("plain.txt") ?? [])
                let plaintextLeft = after.lines.filter {
                    if case .plaintext? = $0.entry?.secret { true } else { false }
                }
                let context = Comment(rawValue: "read \(call) fails: \(result)")
                if plaintextLeft.isEmpty {
                    // Every hash is in the file: the run did its job.
                    #expect(result.status == 0, context)
                    #expect(result.stdout.contains("\"upgraded\":2"), context)
                    #expect(result.stdout.contains("\"left\":0"), context)
                    sawCommittedRun = true
                } else {
                    #expect(result.status == 5, context)
                    #expect(result.stderr.contains("read: Input/output error"), context)
                    sawFailedRun = true
                }
            }
            #expect(sawCommittedRun && sawFailedRun, "both kinds of run were tried")
        }
    }

    // MARK: Item 7: a blocklist that is not a regular file

    /// The kinds of blocklist that cannot be searched, made by a shell in the session's
    /// directory (`$CREDFILE` is the binary, `$F` the credential file, `$D` the
    /// directory): each runs `add` with `--blocklist` naming it.
    static let streamBlocklists: [(name: String, script: String)] = [
        (
            "a FIFO with no writer (it must not hang)",
            #"mkfifo "$D/list" && exec "$CREDFILE" add "$F" carol --iterations 1 --blocklist "$D/list""#
        ),
        (
            "a FIFO with a writer",
            #"mkfifo "$D/list" && { printf 'Listed-Garden-Pass-1\n' > "$D/list" & } && exec "$CREDFILE" add "$F" carol --iterations 1 --blocklist "$D/list""#
        ),
        (
            "/dev/stdin on a pipe",
            #"printf 'Listed-Garden-Pass-1\n' | "$CREDFILE" add "$F" carol --iterations 1 --blocklist /dev/stdin"#
        ),
        (
            "a pipe as /dev/fd/3",
            #"printf 'Listed-Garden-Pass-1\n' | "$CREDFILE" add "$F" carol --iterations 1 --blocklist /dev/fd/3 3<&0 </dev/null"#
        ),
        ("/dev/null", #"exec "$CREDFILE" add "$F" carol --iterations 1 --blocklist /dev/null"#),
        (
            "check --passwords with a FIFO",
            #"mkfifo "$D/list" && exec "$CREDFILE" check "$F" --passwords --blocklist "$D/list""#
        ),
    ]

    @Test(
        "--blocklist that is a pipe, FIFO or device: refused (exit 2, naming the option), never an empty list, never a hang",
        arguments: 0..<streamBlocklists.count)
    func blocklistThatIsNotAFile(index: Int) throws {
        let row = Self.streamBlocklists[index]
        try withSession { session in
            let file = try session.write("users.txt", "alice,Listed-Garden-Pass-1\n")
            var environment = BuiltBinary.environment()
            environment["CREDFILE"] = try BuiltProduct.path("credfile")
            environment["F"] = file
            environment["D"] = session.directory
            // The password typed is the one on the list: failing open would add carol.
            let result = try session.spawn(
                "/bin/sh", ["-c", row.script], stdin: Array("Listed-Garden-Pass-1\n".utf8), environment: environment,
                directory: session.directory, timeout: .seconds(30))
            #expect(result.status == 2, "\(row.name): \(result)")
            #expect(result.stderr.contains("--blocklist"), "\(row.name): \(result)")
            #expect(result.stderr.contains("not a regular file"), "\(row.name): \(result)")
            #expect(session.text("users.txt") == "alice,Listed-Garden-Pass-1\n", "\(row.name): nothing was written")
        }
    }

    // MARK: Item 8: a one-password-a-line blocklist is read once per run

    @Test(
        "import against a one-password-a-line list reads the list once, not once (or twice) per user",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func plainBlocklistIsReadOncePerRun() throws {
        try withSession { session in
            // About 3 MB: 48 reads of 64 KiB to read it once.
            var list: [UInt8] = []
            var random = SeededRandom(seed: 25)
            while list.count < 3 << 20 { list += Array("common-\(random.next() % 1_000_000_000)\n".utf8) }
            list += Array("Listed-Garden-Pass-1\r\n".utf8)
            let listPath = try session.write("list.txt", bytes: list)
            let onceReads = list.count / 65536 + 2  // the chunks and the empty read at the end
            let file = try session.write("users.txt", "")
            let users = (0..<40).map { "user\($0),Not-Listed-Password-\($0)" }
            var environment = BuiltBinary.environment()
            // One read of the first line (the form), one scan; one pread more fails.
            environment["CREDFILE_TEST_FAULT"] = "pread:EIO:\(onceReads + 2)"
            let fine = try BuiltBinary.run(
                ["import", file, "--iterations", "1", "--blocklist", listPath],
                stdin: Array((users.joined(separator: "\n") + "\n").utf8), in: session, environment: environment)
            #expect(fine.status == 0, "\(fine)")
            #expect(fine.stdout.contains("40 added"), "\(fine)")
            // Still a list: a listed password (in any case) is refused, with its line.
            let listed = try BuiltBinary.run(
                ["import", file, "--iterations", "1", "--blocklist", listPath],
                stdin: Array(
                    (users.prefix(3).map { $0 + "x" } + ["dora,LISTED-garden-pass-1"]).joined(separator: "\n").utf8),
                in: session, environment: environment)
            #expect(listed.status == 2, "\(listed)")
            #expect(
                listed.stderr.contains("standard input line 4: password refused: it is on the blocklist"), "\(listed)")
        }
    }

    // MARK: Item 15: no copy of a password stays in the Squid helper's memory

    /// Every readable mapping of process `pid` (its heap, its threads' arenas, stacks).
    static func memory(of pid: pid_t) throws -> [[UInt8]] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let mem = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard mem >= 0 else { throw HarnessError.system("open", "/proc/\(pid)/mem") }
        defer { close(mem) }
        var regions: [[UInt8]] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] < 1 << 30 else { continue }
            var region = [UInt8](repeating: 0, count: Int(bounds[1] - bounds[0]))
            let n = region.withUnsafeMutableBytes {
                pread(mem, $0.baseAddress, $0.count, off_t(Int64(bitPattern: UInt64(bounds[0]))))
            }
            if n > 0 { regions.append(Array(region[..<n])) }
        }
        return regions
    }

    /// Whether `needle` occurs in any of `regions`.
    static func occurs(_ needle: [UInt8], in regions: [[UInt8]]) -> Bool {
        regions.contains { region in
            region.withUnsafeBytes { haystack in
                needle.withUnsafeBytes { Bytes.offset(of: $0, in: haystack) != nil }
            }
        }
    }

    @Test(
        "the Squid helper keeps no copy of any password it answered (right, wrong, unknown user, non-ASCII, a BH line), with and without concurrency",
        .enabled(if: geteuid() == 0, "reading another process's memory needs root (credfile is not dumpable)"),
        arguments: [false, true])
    func helperForgetsPasswords(concurrency: Bool) throws {
        try withSession { session in
            let right = "Right-Canary-Password-\(concurrency)-1"
            let hash = try PasswordHash(hashing: Password(right), policy: HashPolicy(rounds: 1)).string
            let file = try session.write("users.txt", "alice,\(hash)\nbob,Plain-Stored-Secret-Of-Bob\n")
            // (raw bytes to look for, the field as Squid escapes it)
            let canaries: [(user: String, bytes: [UInt8], escaped: String)] = [
                ("alice", Array(right.utf8), right),
                ("alice", Array("Wrong-Canary-Password-2".utf8), "Wrong-Canary-Password-2"),
                ("nobody", Array("Unknown-User-Canary-3".utf8), "Unknown-User-Canary-3"),
                ("alice", Array("Contraseña-Canary-Wrong-4".utf8), "Contrase%C3%B1a-Canary-Wrong-4"),
                ("alice", Array("Contrasen\u{303}a-NFD-Canary-5".utf8), "Contrasen%CC%83a-NFD-Canary-5"),
                ("bob", Array("Wrong-For-Plain-Canary-6".utf8), "Wrong-For-Plain-Canary-6"),
                ("al%ZZice", Array("In-A-BH-Line-Canary-7".utf8), "In-A-BH-Line-Canary-7"),
            ]
            let helper = try IntegrationHelperTests.SquidHelperProcess([file, "--iterations", "1"])
            for (index, canary) in canaries.enumerated() {
                try helper.send((concurrency ? "\(index) " : "") + "\(canary.user) \(canary.escaped)")
                _ = try helper.answer()
            }
            usleep(200_000)  // the answering threads are back in their pool
            let regions = try Self.memory(of: helper.pid)
            // The scan sees what is there: the file the helper keeps parsed holds bob's secret.
            // (Each answer is a Bool before it is expected: a failed #expect would describe
            // every argument, hundreds of MB of memory.)
            let seesTheFile = Self.occurs(Array("Plain-Stored-Secret-Of-Bob".utf8), in: regions)
            #expect(seesTheFile, "the scan reads the helper's memory")
            for canary in canaries {
                let kept = Self.occurs(canary.bytes, in: regions)
                #expect(!kept, "\(canary.escaped) is still in memory")
                let keptAsSent = Self.occurs(Array(canary.escaped.utf8), in: regions)
                #expect(!keptAsSent, "\(canary.escaped), as sent, is still in memory")
            }
            #expect(helper.finish() == 0)
        }
    }

    // MARK: Item 10: the Squid helper does not depend on libdispatch's worker monitor

    /// A library for `LD_PRELOAD` that makes every `open` of a `/proc/…/stat` file fail
    /// with `errno` (EMFILE, ENFILE, ENOMEM: what a process near its limits meets), as
    /// libdispatch's worker monitor meets it. Built with gcc in `directory`.
    static func failingProcStat(errno code: String, in session: CLISession) throws -> String {
        let source = try session.write(
            "procstat.c",
            """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <fcntl.h>
            #include <stdarg.h>
            #include <string.h>
            static int refused(const char *path) {
                return strncmp(path, "/proc/", 6) == 0 && strstr(path, "/stat") != NULL;
            }
            #define WRAP(name) \\
                int name(const char *path, int flags, ...) { \\
                    static int (*real)(const char *, int, ...); \\
                    if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \\
                    if (refused(path)) { errno = \(code); return -1; } \\
                    va_list ap; va_start(ap, flags); int mode = va_arg(ap, int); va_end(ap); \\
                    return real(path, flags, mode); \\
                }
            WRAP(open)
            WRAP(open64)
            WRAP(__open_2)
            WRAP(__open64_2)

            """)
        let library = session.path("procstat-\(code).so")
        let gcc = try session.spawn(
            try ExternalTool.path("gcc"), ["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"])
        guard gcc.status == 0 else { throw HarnessError("gcc: \(gcc)") }
        return library
    }

    @Test(
        "the Squid helper answers every request when /proc/TID/stat cannot be opened (EMFILE, ENFILE, ENOMEM)",
        .enabled(if: ExternalTool.runnable("gcc"), Comment(rawValue: ExternalTool.skipNote("gcc"))),
        arguments: ["EMFILE", "ENFILE", "ENOMEM"])
    func helperWithoutTheWorkerMonitor(errno code: String) throws {
        try withSession { session in
            let library = try Self.failingProcStat(errno: code, in: session)
            let password = session.password("Right-Password-Monitor-1")
            // Logins that take a while (the monitor looks once a second while work waits).
            let policy = try HashPolicy(rounds: 300_000)
            let hash = try PasswordHash(hashing: Password(password), policy: policy).string
            let file = try session.write("users.txt", "alice,\(hash)\n")
            let helper = try IntegrationHelperTests.SquidHelperProcess(
                [file, "--iterations", "300000"], launcher: ["/usr/bin/env", "LD_PRELOAD=\(library)"])
            let count = 24
            for channel in 0..<count { try helper.send("\(channel) alice \(password)") }
            var answers: [String] = []
            for _ in 0..<count { answers.append(try helper.answer()) }
            #expect(Set(answers) == Set((0..<count).map { "\($0) OK" }), "\(answers)")
            #expect(helper.finish() == 0)
        }
    }

    // MARK: Item 17: checkpassword's fd 3, a low RLIMIT_NOFILE, a set-user-ID copy

    @Test("checkpassword closes fd 3 before it execs PROG: PROG cannot read the password again")
    func checkpasswordClosesFD3() throws {
        try withSession { session in
            let file = try Integration.makeUserFile(in: session, users: [IntegrationHelperTests.alice])
            let request = IntegrationHelperTests.request("alice", IntegrationHelperTests.alice.1)
            // PROG tries fd 3 itself, and the file behind it from its start.
            let result = try IntegrationHelperTests.checkpassword(
                [
                    "--iterations", "\(Integration.rounds)", file, "/bin/sh", "-c",
                    "if { true <&3; } 2>/dev/null; then echo fd3-open; head -c 64 /proc/self/fd/3 | tr '\\0' ' '; else echo fd3-closed; fi",
                ],
                request: request, in: session)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "fd3-closed\n", "\(result)")
            #expect(!result.stdout.contains(IntegrationHelperTests.alice.1), "\(result)")
        }
    }

    @Test(
        "with RLIMIT_NOFILE from 4 to 7 the login checks answer cleanly: helper OK/ERR/BH and exit 0, pam 0/5, checkpassword 0/111; never a signal",
        .enabled(if: ExternalTool.runnable("prlimit"), Comment(rawValue: ExternalTool.skipNote("prlimit"))),
        arguments: 4...7)
    func lowDescriptorLimit(limit: Int) throws {
        try withSession { session in
            let (user, password) = IntegrationHelperTests.alice
            let file = try Integration.makeUserFile(in: session, users: [IntegrationHelperTests.alice])
            let prlimit = [try ExternalTool.path("prlimit"), "--nofile=\(limit):\(limit)", "--"]
            let rounds = ["--iterations", "\(Integration.rounds)"]

            // The helper, with concurrency (its threads) and without.
            let helper = try IntegrationHelperTests.SquidHelperProcess([file] + rounds, launcher: prlimit)
            let requests = [
                "0 \(user) \(password)", "1 \(user) wrong-\(password)", "\(user) \(password)", "2 nobody x",
            ]
            var answers: [String] = []
            for request in requests {
                try helper.send(request)
                answers.append(try helper.answer())
            }
            #expect(helper.finish() == 0, "helper: \(answers)")
            let allowed: [Set<String>] = [["0 OK"], ["1 ERR"], ["OK"], ["2 ERR"]]
            for (answer, expected) in zip(answers, allowed) {
                #expect(expected.contains(answer) || answer.contains("BH message="), "helper: \(answers)")
            }

            var environment = BuiltBinary.environment()
            environment["PAM_TYPE"] = "auth"
            environment["PAM_USER"] = user
            let pam = try session.spawn(
                prlimit[0], Array(prlimit.dropFirst()) + [try BuiltProduct.path("credfile"), "pam", file] + rounds,
                stdin: Array(password.utf8), environment: environment)
            #expect(pam.status == 0 || pam.status == 5, "pam: \(pam)")

            // checkpassword holds fd 3 from the start: with a limit of 4 the dynamic loader
            // has no descriptor left to open a library with, before credfile runs at all.
            guard limit > 4 else { return }
            try session.write("request", bytes: IntegrationHelperTests.request(user, password))
            let checkpassword = try session.spawn(
                "/bin/sh",
                ["-c", "exec \"$@\" 3<\(session.path("request"))", "sh"] + prlimit
                    + [try BuiltProduct.path("credfile"), "checkpassword"] + rounds + [file, "/bin/true"],
                environment: BuiltBinary.environment())
            #expect(checkpassword.status == 0 || checkpassword.status == 111, "checkpassword: \(checkpassword)")
        }
    }

    @Test(
        "a set-user-ID root copy of credfile run by nobody refuses to run, naming sudo, and reads nothing",
        .enabled(if: geteuid() == 0, "making a set-user-ID root copy needs root"),
        .enabled(if: ExternalTool.runnable("setpriv"), Comment(rawValue: ExternalTool.skipNote("setpriv"))))
    func setUserIDCopyRefuses() throws {
        // A directory nobody can reach (the sessions' are private), on a file system that
        // honours the set-user-ID bit.
        let directory = try TemporaryDirectory.make(prefix: "credfile-setuid")
        defer { directory.remove() }
        chmod(directory.path, 0o755)
        let copy = directory.file("credfile")
        try BuiltProduct.copy(to: copy)
        try #require(chown(copy, 0, 0) == 0 && chmod(copy, 0o4755) == 0)
        let secret = directory.file("root-only.txt")
        try writeBytes(secret, Array("alice,Root-Only-Plain-Secret-1\n".utf8), mode: 0o600)
        let setpriv = try ExternalTool.path("setpriv")
        let asNobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", copy]
        for arguments in [["list", secret], ["check", secret], ["--version"], ["verify", secret, "alice"]] {
            let result = try ChildProcess.run(
                setpriv, asNobody + arguments, stdin: Array("Root-Only-Plain-Secret-1\n".utf8),
                environment: BuiltBinary.environment())
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains("set-user-ID") && result.stderr.contains("sudo"), "\(arguments): \(result)")
            #expect(!result.stdout.contains("alice"), "\(arguments): \(result)")
        }
        // The same copy run by root itself (no change of rights: not secure-exec) works.
        let byRoot = try ChildProcess.run(copy, ["list", secret], environment: BuiltBinary.environment())
        #expect(byRoot.status == 0 && byRoot.stdout.contains("alice"), "\(byRoot)")
    }

    // MARK: Item 11: the lock is waited for in the kernel's queue; logins never wait for it

    /// Takes the lock of the credential file `file` in this process (the writers'
    /// `FILE.lock`); closing the descriptor releases it.
    static func holdLock(of file: String) throws -> Int32 {
        let fd = open(file + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else { throw HarnessError.system("flock", file + ".lock") }
        return fd
    }

    /// What process `pid` waits in (`/proc/PID/wchan`), once it waits in something.
    static func waitChannel(of pid: pid_t) -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let channel = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? ""
            if channel.contains("lock") || channel.contains("sleep") { return channel }
            usleep(20_000)
        }
        return ""
    }

    @Test(
        "a writer waits for a held lock in the kernel's queue (blocked in flock, not polling with sleeps), gets it once it is free, and still gives up at --lock-timeout"
    )
    func writerWaitsInTheKernel() throws {
        try withSession { session in
            let file = try session.write(
                "users.txt", "alice,Alice-Lock-Pass-1\nbob,Bob-Lock-Pass-22\ncarol,Carol-Lock-Pass-333\n")
            let held = try Self.holdLock(of: file)
            let waiting = try ChildProcess.start(
                try BuiltProduct.path("credfile"), ["delete", file, "bob", "--lock-timeout", "120"],
                environment: BuiltBinary.environment())
            let channel = Self.waitChannel(of: waiting.pid)
            #expect(channel == "locks_lock_inode_wait", "the writer waits in \(channel.debugDescription)")
            close(held)
            let result = try waiting.wait(timeout: .seconds(60))
            #expect(result.status == 0, "\(result)")
            #expect(session.text("users.txt") == "alice,Alice-Lock-Pass-1\ncarol,Carol-Lock-Pass-333\n")

            // The bound: held for longer than --lock-timeout, the writer gives up, writes nothing.
            let again = try Self.holdLock(of: file)
            defer { close(again) }
            let late = try BuiltBinary.run(["delete", file, "carol", "--lock-timeout", "0.5"], stdin: nil, in: session)
            #expect(late.status == 5, "\(late)")
            #expect(late.stderr.contains("another process held it for more than 0.5 s"), "\(late)")
            #expect(session.text("users.txt") == "alice,Alice-Lock-Pass-1\ncarol,Carol-Lock-Pass-333\n")
        }
    }

    @Test(
        "a signal while a writer waits for the lock does not end the wait: upgrade stopped by SIGINT commits its batch once the lock is free, then exits 130"
    )
    func signalWhileWaitingForTheLock() throws {
        try withSession { session in
            let file = try session.write("users.txt", "alice,Alice-Plain-Pass-1\nbob,Bob-Plain-Pass-22\n")
            let held = try Self.holdLock(of: file)
            let upgrade = try ChildProcess.start(
                try BuiltProduct.path("credfile"), ["upgrade", file, "--iterations", "1", "--lock-timeout", "120"],
                environment: BuiltBinary.environment())
            #expect(Self.waitChannel(of: upgrade.pid) == "locks_lock_inode_wait")
            kill(upgrade.pid, SIGINT)
            usleep(300_000)
            #expect(upgrade.isRunning, "SIGINT ended the wait for the lock")
            close(held)
            let result = try upgrade.wait(timeout: .seconds(60))
            #expect(result.status == 130, "\(result)")
            let after = CredentialFile(bytes: session.bytes("users.txt") ?? [])
            #expect(
                after.lines.allSatisfy { if case .pbkdf2? = $0.entry?.secret { true } else { false } },
                "the batch was committed")
        }
    }

    @Test(
        "verify --upgrade and pam --upgrade answer while another writer holds the lock (the rehash is skipped), and upgrade once it is free",
        arguments: ["verify", "pam"])
    func loginsDoNotWaitForTheLock(command: String) throws {
        try withSession { session in
            let password = session.password("Plain-Login-Pass-2026")
            let file = try session.write("users.txt", "alice,\(password)\n")
            var environment = BuiltBinary.environment()
            environment["PAM_TYPE"] = "auth"
            environment["PAM_USER"] = "alice"
            let arguments =
                command == "verify"
                ? ["verify", file, "alice", "--upgrade", "--iterations", "1", "--lock-timeout", "120"]
                : ["pam", file, "--upgrade", "--iterations", "1", "--lock-timeout", "120"]
            let held = try Self.holdLock(of: file)
            // Waited for with the lock still held: a login that waits for it never ends here.
            let busy = try session.spawn(
                try BuiltProduct.path("credfile"), arguments, stdin: Array(password.utf8), environment: environment,
                timeout: .seconds(60))
            close(held)
            #expect(busy.status == 0, "\(busy)")
            #expect(busy.stderr.contains("could not be upgraded"), "\(busy)")
            #expect(session.text("users.txt") == "alice,\(password)\n", "nothing written while the lock was held")
            let free = try session.spawn(
                try BuiltProduct.path("credfile"), arguments, stdin: Array(password.utf8), environment: environment)
            #expect(free.status == 0, "\(free)")
            #expect(session.text("users.txt").hasPrefix("alice,$pbkdf2-sha256$1$"), "upgraded once the lock is free")
        }
    }

    // MARK: Items 9 and 14: check streams its findings, and survives a file truncated under it

    /// A file of `count` entries, each with a weak-hash warning (a well-formed PBKDF2 hash
    /// of 1,000 rounds), one plaintext entry in ten and a duplicate name now and then:
    /// every kind of pass `check` makes has work.
    static func findingsFile(_ count: Int, in session: CLISession, name: String = "many.txt") throws -> String {
        let weak = try PasswordHash(hashing: Password("a-weak-hash-password"), policy: HashPolicy(rounds: 1000)).string
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * (weak.utf8.count + 16))
        for i in 0..<count {
            let user = i % 97 == 5 ? "user\(i - 5)" : "user\(i)"
            bytes += Array(user.utf8) + [UInt8(ascii: ",")] + Array((i % 10 == 3 ? "plain-\(i)" : weak).utf8) + [0x0A]
        }
        return try session.write(name, bytes: bytes)
    }

    @Test(
        "check of 400,000 findings prints them all with memory of the file plus 64 MB at most (peak RSS)",
        .enabled(if: ExternalTool.runnable("time", "bash"), Comment(rawValue: ExternalTool.skipNote("time", "bash"))),
        arguments: ["text", "json"])
    func checkStreamsItsFindings(format: String) throws {
        try withSession { session in
            let count = 400_000
            let file = try Self.findingsFile(count, in: session)
            let size = Int(try statInfo(file).st_size)
            let json = format == "json" ? " --json" : ""
            let script = #""$0" -f %M -o "$1/rss" "$2" check "$3"\#(json) > "$1/out" 2>"$1/err"; echo $? > "$1/status""#
            let (status, kilobytes) = try runMeasuringPeakRSS(
                script, [try BuiltProduct.path("credfile"), file], in: session)
            #expect(status == "1", "exit \(status); stderr: \(session.text("err"))")  // the duplicates are errors
            let out = session.bytes("out") ?? []
            let lines = out.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            let weak = count - count / 10 - count / 97
            if format == "text" {
                #expect(lines >= weak, "\(lines) lines printed")
            } else {
                let object = try JSONSerialization.jsonObject(with: Data(out)) as? [String: Any]
                #expect(((object?["findings"] as? [Any])?.count ?? 0) >= weak)
                #expect((object?["errors"] as? Int ?? 0) > 0)
            }
            #expect(kilobytes * 1024 <= size + 64 << 20, "peak RSS \(kilobytes) kB for a file of \(size / 1024) kB")
            print("check\(json) of \(count) lines (\(size / 1024) kB), \(lines) lines out: peak RSS \(kilobytes) kB")
        }
    }

    @Test("check of a mapped file truncated and restored in place while it runs: findings or exit 5, never a signal")
    func checkOfAFileTruncatedUnderIt() throws {
        try withSession { session in
            let file = try Self.findingsFile(120_000, in: session)  // ~11 MB: mapped
            let original = try readBytes(file)
            var statuses: [Int32: Int] = [:]
            var random = SeededRandom(seed: 9)
            for round in 0..<60 {
                try writeBytes(file, original)
                let check = try ChildProcess.start(
                    try BuiltProduct.path("credfile"), ["check", file] + (round % 2 == 0 ? ["--json"] : []),
                    environment: BuiltBinary.environment())
                // Once the file is mapped, a moment into the passes over it, cut it in place
                // (to nothing, or somewhere), then put it back.
                while check.isRunning,
                    !((try? String(contentsOfFile: "/proc/\(check.pid)/maps", encoding: .utf8)) ?? "").contains(file)
                {
                    usleep(200)
                }
                usleep(useconds_t(random.next() % 50_000))
                let cut = random.next() % 2 == 0 ? 0 : Int(random.next() % UInt64(original.count))
                #expect(truncate(file, off_t(cut)) == 0)
                usleep(50_000)
                let fd = open(file, O_WRONLY)
                _ = original.withUnsafeBytes { pwrite(fd, $0.baseAddress! + cut, original.count - cut, off_t(cut)) }
                close(fd)
                let result = try check.wait(timeout: .seconds(300))
                #expect(
                    result.signal == nil, "round \(round): killed by signal \(result.signal ?? 0): \(result.stderr)")
                #expect([0, 1, 5].contains(result.status ?? -1), "round \(round): \(result)")
                if result.status == 5 {
                    #expect(
                        result.stderr.contains("truncated or resized in place while it was read"),
                        "round \(round): \(result)")
                }
                statuses[result.shellStatus, default: 0] += 1
            }
            print("check under truncation: exit statuses \(statuses)")
        }
    }
}
