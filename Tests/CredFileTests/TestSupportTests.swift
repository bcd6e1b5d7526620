import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The shared helpers of CredFileTestSupport and _CredFileFuzzChecks: every test leans
/// on them, so each promise they make is checked here, both ways where it has two.
@Suite("Test support")
struct TestSupportTests {
    // MARK: ChildProcess

    @Test("the runner passes stdin bytes exactly and keeps stdout and stderr apart")
    func stdinAndOutputs() throws {
        let bytes: [UInt8] = [0x00, 0xFF, 0x0A, 0x0D] + Array("café,\u{1F511}".utf8)
        let result = try ChildProcess.run("/bin/sh", ["-c", "cat; printf oops >&2"], stdin: bytes)
        #expect(result.status == 0 && result.signal == nil)
        #expect(result.stdoutBytes == bytes)
        #expect(result.stderr == "oops")
        let empty = try ChildProcess.run("/bin/cat", [])  // stdin nil: /dev/null, at end of input at once
        #expect(empty.stdoutBytes.isEmpty && empty.status == 0)
    }

    @Test("the runner reports an exit status, or the signal and a shell's 128 + N")
    func statusAndSignal() throws {
        let exited = try ChildProcess.run("/bin/sh", ["-c", "exit 3"])
        #expect(exited.status == 3 && exited.signal == nil && exited.shellStatus == 3)
        let killed = try ChildProcess.run("/bin/sh", ["-c", "kill -9 $$"])
        #expect(killed.status == nil && killed.signal == SIGKILL && killed.shellStatus == 128 + SIGKILL)
    }

    @Test("the runner gives exactly the environment asked for, or the test's own, and the working directory")
    func environmentAndDirectory() throws {
        let exact = try ChildProcess.run("/usr/bin/env", [], environment: ["ONLY": "this"])
        #expect(exact.stdout == "ONLY=this\n")
        setenv("CREDFILE_SUPPORT_PROBE", "inherited", 1)
        defer { unsetenv("CREDFILE_SUPPORT_PROBE") }
        let inherited = try ChildProcess.run("/usr/bin/env", [])
        #expect(inherited.stdout.contains("CREDFILE_SUPPORT_PROBE=inherited\n"))
        try withTemporaryDirectory { directory in
            let here = try ChildProcess.run("/bin/pwd", ["-P"], directory: directory.path)
            #expect(here.stdout == directory.path + "\n")
        }
    }

    @Test("a child that outlives its timeout is killed and fails the test; kill works only before it is reaped")
    func timeoutAndKill() throws {
        let started = ContinuousClock.now
        #expect(throws: HarnessError.self) { try ChildProcess.run("/bin/sleep", ["30"], timeout: .milliseconds(200)) }
        #expect(ContinuousClock.now - started < .seconds(25), "the child was waited for, not killed")
        let sleeper = try ChildProcess.start("/bin/sleep", ["30"])
        #expect(sleeper.isRunning)
        #expect(sleeper.killNow())
        let result = try sleeper.wait()
        #expect(result.signal == SIGKILL)
        #expect(!sleeper.isRunning && !sleeper.killNow(), "a reaped child's pid may be reused: no signal")
    }

    @Test("a program that cannot be started is a harness error")
    func missingProgram() {
        #expect(throws: HarnessError.self) { try ChildProcess.start("/nonexistent/program", []) }
    }

    // MARK: TemporaryDirectory

    @Test("a temporary directory is private, symlink-free, and removed with all it holds, links not followed")
    func temporaryDirectory() throws {
        let outside = try TemporaryDirectory.make(prefix: "credfile-support-outside")
        defer { outside.remove() }
        try writeText(outside.file("keep"), "kept")
        let directory = try TemporaryDirectory.make(prefix: "credfile-support")
        #expect(directory.path == (try realPath(directory.path)))
        #expect(try mode(directory.path) == 0o700)
        mkdir(directory.file("a"), 0o700)
        mkdir(directory.file("a/b"), 0o700)
        try writeText(directory.file("a/b/file"), "x")
        chmod(directory.file("a/b"), 0o500)  // read-only: removal must still get through
        symlink(outside.path, directory.file("link"))
        #expect(try directory.names() == ["a", "link"])
        directory.remove()
        #expect(!fileExists(directory.path))
        #expect(fileExists(outside.file("keep")), "removal followed a symlink out of the directory")
    }

    // MARK: SeededRandom

    @Test("SeededRandom is SplitMix64: the reference's first outputs for seed 0, and a seed replays")
    func seededRandom() {
        var zero = SeededRandom(seed: 0)
        // splitmix64.c (Vigna) with x = 0.
        #expect(zero.next() == 0xE220_A839_7B1D_CDAF)
        #expect(zero.next() == 0x6E78_9E6A_A1B9_65F4)
        var a = SeededRandom(seed: 42)
        var b = SeededRandom(seed: 42)
        var c = SeededRandom(seed: 43)
        let first = a.bytes(32)
        #expect(first == b.bytes(32))
        #expect(first != c.bytes(32))
    }

    // MARK: Canary and BuiltProduct

    @Test("the leak check finds every canary and a hash string, and nothing in clean output")
    func canaries() {
        for leaked in Canary.all + ["$pbkdf2-sha256$1$x$y", Canary.password("tag")] {
            #expect(Canary.leak(in: "before \(leaked) after") != nil, "\(leaked)")
        }
        #expect(Canary.leak(in: "credfile: alice: wrong password") == nil)
        #expect(Canary.password("nuevo").contains(Canary.marker) && !Canary.password("nuevo").contains("nuevo"))
    }

    @Test("the binary locator finds every built product and names what it cannot find")
    func builtProducts() throws {
        for name in ["credfile", "credfile-server-example"] {
            #expect(FileManager.default.isExecutableFile(atPath: try BuiltProduct.path(name)), "\(name)")
        }
        #expect(throws: HarnessError.self) { try BuiltProduct.path("no-such-product") }
    }
}
