import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// Real files, the real `credfile` binary: faults on purpose (SPEC §4, STYLE practice 14),
// missing and unusable files, metadata kept across rewrites, byte-for-byte rewrites,
// and the validation of new names and passwords (SPEC §2) through the CLI and the library.

/// A legacy file with everything a rewrite must keep: a BOM, CRLF and LF endings,
/// comments, blank lines (one of spaces and a tab), a duplicate, a name that contains
/// another, and a last line without a line ending.
enum Fixture {
    static let lines: [String] = [
        "\u{FEFF}# usuarios.txt, legacy\n",  // 0: BOM + comment
        "valencia,\(Canary.password("valencia"))\r\n",  // 1: CRLF
        "\n",  // 2: empty
        "  \t\n",  // 3: blank of spaces and a tab
        "# a comment, with a comma\r\n",  // 4
        "usuario2,\(Canary.password("usuario2"))\n",  // 5
        "dup,\(Canary.password("dup-first"))\n",  // 6
        "dup,\(Canary.password("dup-shadowed"))\r\n",  // 7: shadowed duplicate
        "xvalencia,\(Canary.password("xvalencia"))\n",  // 8
        "last,\(Canary.password("last"))",  // 9: no line ending
    ]
    static var bytes: [UInt8] { Array(lines.joined().utf8) }

    /// Writes the fixture to `path` with `mode` (and, when given, owner).
    static func write(to path: String, mode: mode_t = 0o600, owner: (uid_t, gid_t)? = nil) throws {
        try writeBytes(path, bytes)
        // chown before chmod: chown clears the set-ID bits.
        if let (uid, gid) = owner, chown(path, uid, gid) != 0 { throw HarnessError("chown \(path)") }
        guard chmod(path, mode) == 0 else { throw HarnessError("chmod \(path)") }
    }
}

/// Checks that `new` is `old` with one entry `username,<pbkdf2 hash of password>` appended
/// (after exactly one LF added to a last line without one).
func expectAppended(
    old: [UInt8], new: [UInt8], username: String, password: String, rounds: Int = 1,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    var expectedPrefix = old
    if let last = old.last, last != 0x0A, old != CredentialFile.bom { expectedPrefix.append(0x0A) }
    #expect(
        Array(new.prefix(expectedPrefix.count)) == expectedPrefix, "existing bytes changed",
        sourceLocation: sourceLocation)
    let added = Array(new.dropFirst(expectedPrefix.count))
    let head = Array((username + ",").utf8)
    #expect(added.starts(with: head), "the appended line is not \(username)'s", sourceLocation: sourceLocation)
    #expect(
        added.last == 0x0A && added.filter { $0 == 0x0A }.count == 1, "not exactly one new line",
        sourceLocation: sourceLocation)
    let hashText = added.dropFirst(head.count).dropLast()
    let hash = try PasswordHash(parsing: hashText)
    #expect(hash.rounds == rounds, sourceLocation: sourceLocation)
    #expect(try hash.verify(Password(password)), "the appended hash does not verify", sourceLocation: sourceLocation)
}

/// Checks that `newLine` is `oldLine` with its secret replaced (the username bytes and the
/// line ending kept); returns the new secret.
func expectReplacedLine(
    _ oldLine: [UInt8], _ newLine: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) -> [UInt8] {
    let ending: [UInt8] = oldLine.last != 0x0A ? [] : (oldLine.dropLast().last == 0x0D ? [0x0D, 0x0A] : [0x0A])
    #expect(
        Array(newLine.suffix(ending.count)) == ending, "line ending of \(what) not kept", sourceLocation: sourceLocation
    )
    if ending.isEmpty { #expect(newLine.last != 0x0A, "\(what) got a line ending", sourceLocation: sourceLocation) }
    let userPart = Array(oldLine.prefix { $0 != UInt8(ascii: ",") }) + [UInt8(ascii: ",")]
    #expect(newLine.starts(with: userPart), "username bytes of \(what) not kept", sourceLocation: sourceLocation)
    #expect(newLine != oldLine, "\(what) did not change", sourceLocation: sourceLocation)
    return Array(newLine.dropFirst(userPart.count).dropLast(ending.count))
}

/// Checks that `new` has the lines of `old`, except line `index`, whose secret was
/// replaced (the username bytes and the line ending kept); returns the new secret.
@discardableResult
func expectReplaced(
    old: [UInt8], new: [UInt8], index: Int, sourceLocation: SourceLocation = #_sourceLocation
) -> [UInt8] {
    let before = rawLines(old)
    let after = rawLines(new)
    #expect(before.count == after.count, "line count changed", sourceLocation: sourceLocation)
    guard before.count == after.count else { return [] }
    for i in before.indices where i != index {
        #expect(before[i] == after[i], "line \(i + 1) changed", sourceLocation: sourceLocation)
    }
    return expectReplacedLine(before[index], after[index], "line \(index + 1)", sourceLocation: sourceLocation)
}

@Suite("Storage: real files through the credfile binary")
struct StorageTests {
    // MARK: The harness

    @Test("The leak check itself catches a password and a hash string in an output")
    func leakCheckCanFail() {
        withKnownIssue("a password in the output must be reported") {
            Canary.expectNoLeak("credfile: wrong password \(Canary.password("x"))", of: "a self-test")
        }
        withKnownIssue("a hash string in the output must be reported") {
            Canary.expectNoLeak("u,$pbkdf2-sha256$1$AAAA$BBBB", of: "a self-test")
        }
    }

    // MARK: Faults on purpose

    /// A command line with `FILE` standing for the file, and its standard input.
    struct Command: Sendable, CustomStringConvertible {
        let name: String
        let template: [String]
        let stdin: String
        init(_ name: String, _ template: [String], stdin: String = "") {
            self.name = name
            self.template = template
            self.stdin = stdin
        }
        func arguments(_ path: String) -> [String] { template.map { $0 == "FILE" ? path : $0 } }
        var description: String { name }
    }

    /// The write path of each changing command, with a file it can change.
    static let writingCommands: [Command] = [
        Command("add", ["add", "--iterations", "1", "FILE", "nuevo"], stdin: Canary.password("nuevo") + "\n"),
        Command(
            "add --backup", ["add", "--backup", "--iterations", "1", "FILE", "otro"],
            stdin: Canary.password("otro") + "\n"),
        Command(
            "passwd", ["passwd", "--iterations", "1", "FILE", "valencia"], stdin: Canary.password("cambiada") + "\n"),
        Command("delete", ["delete", "FILE", "dup"]),
        Command(
            "import", ["import", "--iterations", "1", "FILE"],
            stdin: "usuario2,\(Canary.password("u2"))\nnuevo,\(Canary.password("n"))\n"),
        Command("upgrade", ["upgrade", "--iterations", "1", "FILE"]),
        // Unguarded: these tests are about the file's writer; the guard database's own
        // failures are GuardTests' and GuardCLITests' (a login it cannot guard is refused).
        Command(
            "verify --upgrade", ["verify", "--upgrade", "--no-guard", "--iterations", "1", "FILE", "valencia"],
            stdin: Canary.password("valencia") + "\n"),
    ]

    /// The faults every caller can meet; `fchown` is called only by root (below).
    static let faults = ["fsync", "rename", "write", "mkstemp", "flock", "open", "fchmod", "read", "lstat"]

    @Test(
        "A failing syscall leaves the old file byte for byte and no temporary file (any user)",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"), arguments: faults
    )
    func faultKeepsOldFile(fault: String) throws {
        // As root the file gets another owner, so fchown is really called; as any other
        // user it stays the caller's (mode 0640, so fchmod is really called either way).
        try expectFaultKeepsOldFile(fault, owner: isRoot ? (1234, 1234) : nil)
    }

    @Test(
        "A failing fchown (root only calls it) leaves the old file byte for byte",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"),
        .enabled(if: isRoot, "needs root: only root gives the new file the old owner (fchown)"))
    func fchownFaultKeepsOldFile() throws {
        try expectFaultKeepsOldFile("fchown", owner: (1234, 1234))
    }

    func expectFaultKeepsOldFile(_ fault: String, owner: (uid_t, gid_t)?) throws {
        for command in Self.writingCommands {
            try withTemporaryDirectory { dir in
                let path = dir.file("creds.txt")
                try Fixture.write(to: path, mode: 0o640, owner: owner)
                let before = try readBytes(path)
                let result = try CLI.run(
                    command.arguments(path), stdin: command.stdin, environment: ["CREDFILE_TEST_FAULT": fault])
                let context = Comment(rawValue: "\(command.name) with \(fault) failing: \(result)")
                if command.name == "verify --upgrade" && !["open", "read"].contains(fault) {
                    // The login stands (the password is right); only the rehash fails.
                    #expect(result.status == 0, context)
                    #expect(
                        result.message.hasPrefix(
                            "credfile: warning: access granted, but the entry could not be upgraded"), context)
                } else {
                    #expect(result.status == 5, context)
                    #expect(result.message.hasPrefix("credfile: "), context)
                    #expect(result.diagnosticsWellFormed, context)
                }
                #expect(result.stderr.contains("\(fault): Input/output error"), context)
                #expect(try readBytes(path) == before, context)
                #expect(try mode(path) == 0o640, context)
                #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty, context)
                #expect(try dir.temporaryFiles(of: "creds.txt.bak").isEmpty, context)
                #expect(!fileExists(path + ".bak"), context)
            }
        }
    }

    @Test(
        "With the hook set, a command that writes nothing still works",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func faultOnReadOnlyCommands() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let before = try readBytes(path)
            for fault in ["fsync", "rename", "mkstemp", "flock", "write"] {
                let env = ["CREDFILE_TEST_FAULT": fault]
                let verify = try CLI.run(
                    ["verify", "--iterations", "1", path, "valencia"], stdin: Canary.password("valencia") + "\n",
                    environment: env)
                #expect(verify.status == 0, "\(fault): \(verify)")
                #expect(try CLI.run(["list", path], environment: env).status == 0)
                #expect(try CLI.run(["check", path], environment: env).status == 1)  // the fixture has a duplicate
                #expect(try readBytes(path) == before)
            }
        }
    }

    /// Makes `directory` unwritable: mode 0555 for a user other than root; for root (who
    /// ignores mode bits but not the immutable flag) `chattr +i`, or else a read-only bind
    /// mount. Returns the undo.
    func makeReadOnly(_ directory: String) throws -> () -> Void {
        if !isRoot {
            // Permission bits stop every user but root.
            guard chmod(directory, 0o555) == 0 else { throw HarnessError("chmod \(directory)") }
            return { _ = chmod(directory, 0o700) }
        }
        let chattr = try CLIHelpers.runTool("/usr/bin/chattr", ["+i", directory])
        if chattr == 0 {
            return { _ = try? CLIHelpers.runTool("/usr/bin/chattr", ["-i", directory]) }
        }
        let bind = try CLIHelpers.runTool("/bin/mount", ["--bind", directory, directory])
        let remount = bind == 0 ? try CLIHelpers.runTool("/bin/mount", ["-o", "remount,bind,ro", directory]) : 1
        guard remount == 0 else {
            if bind == 0 { _ = try? CLIHelpers.runTool("/bin/umount", [directory]) }
            throw HarnessError(
                "cannot make \(directory) read-only: neither chattr +i nor a read-only bind mount works here")
        }
        return { _ = try? CLIHelpers.runTool("/bin/umount", [directory]) }
    }

    @Test("A read-only directory: every write fails with exit 5 and the file is intact")
    func readOnlyDirectory() throws {
        // As root, permission bits do not stop anything: the directory is made immutable
        // (chattr +i) or bind-mounted read-only instead (see makeReadOnly). The lock file already exists
        // here, so it is the temporary file (mkstemp) that cannot be created.
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path, mode: 0o640)
            #expect(
                try CLI.run(["add", "--iterations", "1", path, "first"], stdin: Canary.password(1) + "\n").status == 0)
            #expect(fileExists(path + ".lock"))
            let before = try readBytes(path)
            let names = try dir.names()
            let undo = try makeReadOnly(dir.path)
            defer { undo() }
            for command in Self.writingCommands {
                let result = try CLI.run(command.arguments(path), stdin: command.stdin)
                if command.name == "verify --upgrade" {
                    #expect(result.status == 0, "\(result)")
                    #expect(result.stderr.contains("could not be upgraded"))
                } else {
                    #expect(result.status == 5, "\(command.name): \(result)")
                    #expect(
                        result.message.hasPrefix("credfile: cannot create a temporary file in \(dir.path)"), "\(result)"
                    )
                }
                #expect(try readBytes(path) == before)
                #expect(try dir.names() == names)
            }
        }
    }

    @Test("A read-only directory without a lock file: the lock cannot be created, exit 5")
    func lockCannotBeCreated() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let before = try readBytes(path)
            let undo = try makeReadOnly(dir.path)
            defer { undo() }
            let result = try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n")
            #expect(result.status == 5, "\(result)")
            #expect(result.message.hasPrefix("credfile: cannot open lock file \(path).lock"), "\(result)")
            #expect(try readBytes(path) == before)
            #expect(!fileExists(path + ".lock"))
            // A new file in the read-only directory cannot be created either.
            let missing = try CLI.run(
                ["add", "--iterations", "1", dir.file("new.txt"), "u"], stdin: Canary.password(2) + "\n")
            #expect(missing.status == 5, "\(missing)")
            #expect(!fileExists(dir.file("new.txt")))
        }
    }

    @Test(
        "A lock file that cannot be opened (a directory, a symlink): exit 5, file intact",
        arguments: ["directory", "symlink"])
    func unusableLockFile(kind: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let before = try readBytes(path)
            if kind == "directory" {
                try FileManager.default.createDirectory(atPath: path + ".lock", withIntermediateDirectories: false)
            } else {
                try writeText(dir.file("elsewhere"), "")
                guard symlink(dir.file("elsewhere"), path + ".lock") == 0 else { throw HarnessError("symlink") }
            }
            let result = try CLI.run(
                ["passwd", "--iterations", "1", path, "valencia"], stdin: Canary.password("x") + "\n")
            #expect(result.status == 5, "\(result)")
            #expect(result.message.hasPrefix("credfile: cannot open lock file"), "\(result)")
            #expect(try readBytes(path) == before)
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
        }
    }

    // MARK: Missing and unusable files

    static let commandsOnMissingFile: [Command] = [
        Command("list", ["list", "FILE"]),
        Command("check", ["check", "FILE"]),
        Command(
            "verify", ["verify", "--iterations", "1", "FILE", "valencia"], stdin: Canary.password("valencia") + "\n"),
        Command("passwd", ["passwd", "--iterations", "1", "FILE", "valencia"], stdin: Canary.password("new") + "\n"),
        Command("delete", ["delete", "FILE", "valencia"]),
        Command("upgrade", ["upgrade", "--iterations", "1", "FILE"]),
        Command("upgrade --dry-run", ["upgrade", "--dry-run", "FILE"]),
    ]

    @Test("A missing file: exit 5 with a clear message, and nothing is created")
    func missingFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("missing.txt")
            for command in Self.commandsOnMissingFile {
                let result = try CLI.run(command.arguments(path), stdin: command.stdin)
                #expect(result.status == 5, "\(command): \(result)")
                #expect(result.message.hasPrefix("credfile: cannot open \(path)"), "\(command): \(result)")
                #expect(result.stderr.contains("No such file or directory"), "\(command): \(result)")
                #expect(!fileExists(path), "\(command) created the file")
            }
        }
    }

    @Test("add on a missing file creates it 0600, whatever the umask", arguments: ["022", "000", "077"])
    func addCreatesFile(umask: String) throws {
        try withTemporaryDirectory { dir in
            // The umask is set in a shell around the binary, not in the test process
            // (other tests run in parallel in it).
            let child = try CLI.shell(
                "umask $1 && exec \"$CREDFILE\" add --iterations 1 \"$2\" nuevo", [umask, dir.file("new.txt")],
                stdin: Canary.password("nuevo") + "\n")
            let result = try child.checkedWait()
            #expect(result.status == 0, "\(result)")
            #expect(try mode(dir.file("new.txt")) == 0o600)
            #expect(try mode(dir.file("new.txt.lock")) == 0o600)
            try expectAppended(
                old: [], new: readBytes(dir.file("new.txt")), username: "nuevo", password: Canary.password("nuevo"))
            #expect(try dir.names() == ["new.txt", "new.txt.lock"])
        }
    }

    @Test("import on a missing file creates it 0600")
    func importCreatesFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("new.txt")
            let result = try CLI.run(
                ["import", "--iterations", "1", path], stdin: "uno,\(Canary.password(1))\ndos,\(Canary.password(2))\n")
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "2 added, 0 updated\n")
            #expect(try mode(path) == 0o600)
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(try store.authenticate(username: "dos", password: Canary.password(2)))
        }
    }

    @Test("add through a relative path writes beside the file in the working directory")
    func relativePath() throws {
        try withTemporaryDirectory { dir in
            // credfile reads its password a byte at a time up to the LF, so the second
            // command reads the second line of the shared standard input.
            let child = try CLI.shell(
                "cd \"$1\" && \"$CREDFILE\" add --iterations 1 creds.txt uno && \"$CREDFILE\" add --iterations 1 ./creds.txt dos",
                [dir.path], stdin: "\(Canary.password(1))\n\(Canary.password(2))\n")
            let result = try child.checkedWait()
            #expect(result.status == 0, "\(result)")
            #expect(try dir.names() == ["creds.txt", "creds.txt.lock"])
            let store = CredentialStore(path: dir.file("creds.txt"), policy: oneRound)
            #expect(try store.authenticate(username: "uno", password: Canary.password(1)))
            #expect(try store.authenticate(username: "dos", password: Canary.password(2)))
        }
    }

    @Test("A directory given as FILE: exit 5 for every command, the directory untouched")
    func directoryAsFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("sub")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let commands =
                Self.commandsOnMissingFile + [
                    Command("add", ["add", "--iterations", "1", "FILE", "nuevo"], stdin: Canary.password("n") + "\n"),
                    Command(
                        "import", ["import", "--iterations", "1", "FILE"], stdin: "nuevo,\(Canary.password("n"))\n"),
                ]
            for command in commands {
                let result = try CLI.run(command.arguments(path), stdin: command.stdin)
                #expect(result.status == 5, "\(command): \(result)")
                #expect(result.message.hasPrefix("credfile: "), "\(command): \(result)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty, "\(command)")
                #expect(try lstatInfo(path).st_mode & S_IFMT == S_IFDIR)
            }
        }
    }

    @Test("A symlink to a missing file, a symlink loop, a missing directory: exit 5, nothing created")
    func danglingSymlink() throws {
        try withTemporaryDirectory { dir in
            let link = dir.file("link.txt")
            guard symlink(dir.file("nowhere.txt"), link) == 0 else { throw HarnessError("symlink") }
            let result = try CLI.run(["add", "--iterations", "1", link, "nuevo"], stdin: Canary.password(1) + "\n")
            #expect(result.status == 5, "\(result)")
            #expect(result.message.hasPrefix("credfile: \(link) is a symlink to a missing file"), "\(result)")
            #expect(try isSymlink(link))
            #expect(!fileExists(dir.file("nowhere.txt")))
            // A symlink loop, and a file in a directory that does not exist: exit 5 too.
            let loop = dir.file("loop.txt")
            guard symlink("loop.txt", loop) == 0 else { throw HarnessError("symlink") }
            for path in [loop, dir.file("no/such/dir/creds.txt")] {
                let add = try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(2) + "\n")
                #expect(add.status == 5, "\(add)")
                #expect(add.message.hasPrefix("credfile: cannot open \(path)"), "\(add)")
                #expect(try CLI.run(["list", path]).status == 5)
            }
            #expect(try dir.names() == ["link.txt", "loop.txt"])
        }
    }

    // MARK: Metadata

    /// The owner the metadata tests give FILE: another one as root (so `fchown` must keep
    /// it), the caller's own otherwise (the modes are still checked).
    static let fileOwner: (uid: uid_t, gid: gid_t) = isRoot ? (1234, 4321) : (geteuid(), getegid())

    @Test(
        "Mode 0640 and the owner (another one as root) survive add, passwd, delete, import, upgrade and upgrade-on-login"
    )
    func modeAndOwnerKept() throws {
        let owner = Self.fileOwner
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path, mode: 0o640, owner: owner)
            let commands: [([String], String)] = [
                (["add", "--iterations", "1", path, "nuevo"], Canary.password("nuevo") + "\n"),
                (["passwd", "--iterations", "1", path, "nuevo"], Canary.password("nuevo2") + "\n"),
                (["passwd", "--plaintext", path, "usuario2"], Canary.password("plain") + "\n"),
                (["delete", path, "dup"], ""),
                (["import", "--iterations", "1", path], "otro,\(Canary.password("otro"))\n"),
                (["verify", "--upgrade", "--iterations", "1", path, "valencia"], Canary.password("valencia") + "\n"),
                (["upgrade", "--iterations", "1", path], ""),
                (["add", "--backup", "--iterations", "1", path, "ultimo"], Canary.password("ultimo") + "\n"),
            ]
            try CLI.run(["list", path])  // creates nothing
            #expect(!fileExists(path + ".lock"))
            var lockInode: ino_t?
            for (arguments, stdin) in commands {
                let before = try statInfo(path)
                let result = try CLI.run(arguments, stdin: stdin)
                #expect(result.status == 0, "\(arguments[0]): \(result)")
                let after = try statInfo(path)
                #expect(after.st_ino != before.st_ino, "\(arguments[0]) did not replace the file")
                #expect(after.st_mode & 0o7777 == 0o640, "\(arguments[0])")
                #expect(after.st_uid == owner.uid && after.st_gid == owner.gid, "\(arguments[0])")
                let lock = try lstatInfo(path + ".lock")
                #expect(lock.st_mode & S_IFMT == S_IFREG)
                #expect(lock.st_mode & 0o7777 == 0o600)
                if let lockInode { #expect(lock.st_ino == lockInode, "the lock file was replaced") }
                lockInode = lock.st_ino
                #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
            }
            let backup = try statInfo(path + ".bak")
            #expect(backup.st_mode & 0o7777 == 0o640)
            #expect(backup.st_uid == owner.uid && backup.st_gid == owner.gid)
            #expect(try CLI.run(["check", path]).status == 0)
        }
    }

    @Test(
        "Every mode bit and the owner (another one as root) survive each writing command",
        arguments: [0o600, 0o640, 0o444, 0o4640, 0o2750, 0o6750] as [mode_t])
    func everyModeKept(fileMode: mode_t) throws {
        let owner = Self.fileOwner
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path, mode: fileMode, owner: owner)
            try #require(try mode(path) == fileMode)
            // verify --upgrade first, while valencia still has the fixture's password.
            let commands =
                Self.writingCommands.filter { $0.name == "verify --upgrade" }
                + Self.writingCommands.filter { $0.name != "verify --upgrade" }
            for command in commands {
                let result = try CLI.run(command.arguments(path), stdin: command.stdin)
                #expect(result.status == 0, "\(command): \(result)")
                let info = try statInfo(path)
                #expect(
                    info.st_mode & 0o7777 == fileMode,
                    "\(command) changed the mode to \(String(info.st_mode & 0o7777, radix: 8))")
                #expect(info.st_uid == owner.uid && info.st_gid == owner.gid, "\(command) changed the owner")
            }
            if fileExists(path + ".bak") {
                #expect(try mode(path + ".bak") == fileMode)
            }
        }
    }

    @Test("A FIFO or a device given as FILE: exit 5 at once, never a hang", arguments: ["fifo", "/dev/null"])
    func specialFile(kind: String) throws {
        try withTemporaryDirectory { dir in
            var path = dir.file("fifo")
            if kind == "fifo" {
                guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo") }
            } else {
                path = kind
            }
            let commands =
                Self.commandsOnMissingFile + [
                    Command("add", ["add", "--iterations", "1", "FILE", "nuevo"], stdin: Canary.password("n") + "\n")
                ]
            for command in commands where kind == "fifo" || command.name != "add" {
                // A hang would be killed after 20 s and fail the test.
                let child = try CLI.start(command.arguments(path), stdin: command.stdin)
                let result = try child.checkedWait(timeout: .seconds(20))
                #expect(result.status == 5, "\(command): \(result)")
                // (A user other than root cannot create /dev/null.lock: that also ends it at once.)
                #expect(
                    result.message.hasPrefix("credfile: cannot read \(path): not a regular file")
                        || result.message.hasPrefix("credfile: cannot open \(path)")
                        || (!isRoot && result.message.hasPrefix("credfile: cannot open lock file \(path).lock")),
                    "\(command): \(result)")
            }
            if kind == "fifo" {
                #expect(try lstatInfo(path).st_mode & S_IFMT == S_IFIFO)
            }
        }
    }

    @Test(
        "An immutable FILE (chattr +i): the rename fails, exit 5, no temporary file left",
        .enabled(if: isRoot, "needs root: chown to another owner, chattr +i, mount"))
    func immutableFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            guard try CLIHelpers.runTool("/usr/bin/chattr", ["+i", path]) == 0 else {
                throw HarnessError(
                    "chattr +i does not work on \(dir.path): this test needs a file system with the immutable flag")
            }
            defer { _ = try? CLIHelpers.runTool("/usr/bin/chattr", ["-i", path]) }
            let result = try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n")
            #expect(result.status == 5, "\(result)")
            #expect(
                result.message.hasPrefix("credfile: cannot write \(path) (rename: Operation not permitted)"),
                "\(result)")
            #expect(try readBytes(path) == Fixture.bytes)
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
        }
    }

    @Test(
        "A full file system (a 1 MiB tmpfs): write fails with ENOSPC, exit 5, old file intact, space given back",
        .enabled(if: isRoot, "needs root: chown to another owner, chattr +i, mount"))
    func fullFileSystem() throws {
        // A real condition rather than the fault hook: a tiny tmpfs mounted for the test
        // (root can mount; when mounting fails the test fails, it never skips).
        try withTemporaryDirectory { dir in
            let mountPoint = dir.file("small")
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
            guard
                try CLIHelpers.runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mountPoint])
                    == 0
            else {
                throw HarnessError("cannot mount a tmpfs on \(mountPoint)")
            }
            defer { _ = try? CLIHelpers.runTool("/bin/umount", [mountPoint]) }
            let path = mountPoint + "/creds.txt"
            // The fixture's users and 640 KiB of comments: a second copy does not fit in 1 MiB.
            let filler = "# \(String(repeating: "x", count: 60))\n"
            let bytes =
                Fixture.bytes + Array(("\n" + String(repeating: filler, count: 640 * 1024 / filler.utf8.count)).utf8)
            try writeBytes(path, bytes)
            for command in Self.writingCommands {
                let result = try CLI.run(command.arguments(path), stdin: command.stdin)
                if command.name == "verify --upgrade" {
                    #expect(result.status == 0 && result.message.contains("No space left on device"), "\(result)")
                } else {
                    #expect(result.status == 5, "\(command): \(result)")
                }
                #expect(result.message.contains("No space left on device"), "\(command): \(result)")
                #expect(try readBytes(path) == bytes)
                let names = try FileManager.default.contentsOfDirectory(atPath: mountPoint).sorted()
                #expect(names == ["creds.txt", "creds.txt.lock"], "\(command) left \(names)")
            }
            // Once there is room again, the same command works.
            try writeBytes(path, Fixture.bytes)
            #expect(
                try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password("n") + "\n").status == 0
            )
        }
    }

    @Test(
        "FILE as a symlink: the target is rewritten, the link stays a link, lock and temporary files beside the target")
    func symlinkTarget() throws {
        try withTemporaryDirectory { dir in
            try FileManager.default.createDirectory(atPath: dir.file("real"), withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: dir.file("links"), withIntermediateDirectories: false)
            let target = dir.file("real/creds.txt")
            let link = dir.file("links/creds.txt")
            try Fixture.write(to: target, mode: 0o640)
            guard symlink("../real/creds.txt", link) == 0 else { throw HarnessError("symlink") }
            let commands: [([String], String)] = [
                (["add", "--backup", "--iterations", "1", link, "nuevo"], Canary.password("nuevo") + "\n"),
                (["passwd", "--iterations", "1", link, "valencia"], Canary.password("v2") + "\n"),
                (["delete", link, "dup"], ""),
                (["upgrade", "--iterations", "1", link], ""),
            ]
            for (arguments, stdin) in commands {
                let old = try readBytes(target)
                let result = try CLI.run(arguments, stdin: stdin)
                #expect(result.status == 0, "\(arguments[0]): \(result)")
                #expect(try isSymlink(link), "\(arguments[0]) replaced the link")
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "../real/creds.txt")
                #expect(try readBytes(target) != old)
                #expect(try mode(target) == 0o640)
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("links")) == ["creds.txt"])
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: dir.file("real")).sorted() == [
                        "creds.txt", "creds.txt.bak", "creds.txt.lock",
                    ])
            }
            let store = CredentialStore(path: link, policy: oneRound)
            #expect(try store.authenticate(username: "nuevo", password: Canary.password("nuevo")))
            #expect(try store.authenticate(username: "valencia", password: Canary.password("v2")))
            #expect(try !store.authenticate(username: "dup", password: Canary.password("dup-first")))
        }
    }

    @Test("--backup keeps exactly the previous bytes in FILE.bak, for every writing command")
    func backupKeepsPreviousVersion() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path, mode: 0o640)
            let commands: [([String], String)] = [
                (["add", "--backup", "--iterations", "1", path, "nuevo"], Canary.password("nuevo") + "\n"),
                (["passwd", "--backup", "--iterations", "1", path, "nuevo"], Canary.password("nuevo2") + "\n"),
                (["delete", "--backup", path, "dup"], ""),
                (["import", "--backup", "--iterations", "1", path], "otro,\(Canary.password("otro"))\n"),
                (["upgrade", "--backup", "--iterations", "1", path], ""),
            ]
            for (arguments, stdin) in commands {
                let previous = try readBytes(path)
                let result = try CLI.run(arguments, stdin: stdin)
                #expect(result.status == 0, "\(arguments[0]): \(result)")
                #expect(try readBytes(path + ".bak") == previous, "\(arguments[0])")
                #expect(try mode(path + ".bak") == 0o640)
                #expect(try dir.temporaryFiles(of: "creds.txt.bak").isEmpty)
            }
            // Without --backup, FILE.bak is left alone.
            let backup = try readBytes(path + ".bak")
            #expect(
                try CLI.run(["add", "--iterations", "1", path, "sin"], stdin: Canary.password("sin") + "\n").status == 0
            )
            #expect(try readBytes(path + ".bak") == backup)
        }
    }

    @Test("Stray temporary files of FILE (and FILE.bak) are removed by the next write, and only those")
    func strayTemporaryFilesRemoved() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let stale = [".creds.txt.credfile-AbC123", ".creds.txt.bak.credfile-xYz789"]
            let kept = [
                ".creds.txt.credfile-short", ".creds.txt.credfile-toolong1", ".other.txt.credfile-AbC123",
                "creds.txt.credfile-AbC123", ".creds.txt.credfile",
            ]
            for name in stale + kept { try writeText(dir.file(name), "leftover\n") }
            // Readers never remove anything.
            try CLI.run(["list", path])
            try CLI.run(
                ["verify", "--no-guard", "--iterations", "1", path, "valencia"],
                stdin: Canary.password("valencia") + "\n")
            #expect(try dir.names() == (["creds.txt"] + stale + kept).sorted())
            #expect(
                try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n").status == 0)
            #expect(try dir.names() == (["creds.txt", "creds.txt.lock"] + kept).sorted())
        }
    }

    // MARK: Every other line, byte for byte

    @Test("add appends one line; a last line without LF gets exactly one")
    func addByteForByte() throws {
        let cases: [(String, [UInt8])] = [
            ("fixture", Fixture.bytes),
            ("empty file", []),
            ("only a BOM", CredentialFile.bom),
            ("BOM and a line without LF", CredentialFile.bom + Array("a,\(Canary.password("a"))".utf8)),
            ("ends with CRLF", Array("a,\(Canary.password("a"))\r\n".utf8)),
            ("ends with a blank line", Array("a,\(Canary.password("a"))\n  ".utf8)),
        ]
        try withTemporaryDirectory { dir in
            for (name, bytes) in cases {
                let path = dir.file("creds.txt")
                try writeBytes(path, bytes)
                let result = try CLI.run(
                    ["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password("nuevo") + "\n")
                #expect(result.status == 0, "\(name): \(result)")
                try expectAppended(
                    old: bytes, new: readBytes(path), username: "nuevo", password: Canary.password("nuevo"))
                let afterHashed = try readBytes(path)
                let plain = try CLI.run(["add", "--plaintext", path, "plano"], stdin: Canary.password("plano") + "\n")
                #expect(plain.status == 0, "\(name): \(plain)")
                #expect(
                    try readBytes(path) == afterHashed + Array("plano,\(Canary.password("plano"))\n".utf8), "\(name)")
            }
        }
    }

    @Test("passwd replaces one line in place, keeping its CRLF, LF or missing ending and the BOM")
    func passwdByteForByte() throws {
        // (user, index of its first line in the fixture)
        for (user, index) in [("valencia", 1), ("usuario2", 5), ("dup", 6), ("last", 9)] {
            for plaintext in [false, true] {
                try withTemporaryDirectory { dir in
                    let path = dir.file("creds.txt")
                    try Fixture.write(to: path)
                    let old = try readBytes(path)
                    let password = Canary.password("new-\(user)")
                    let result = try CLI.run(
                        ["passwd", "--iterations", "1", path, user] + (plaintext ? ["--plaintext"] : []),
                        stdin: password + "\n")
                    #expect(result.status == 0, "\(user): \(result)")
                    let new = try readBytes(path)
                    let secret = expectReplaced(old: old, new: new, index: index)
                    if plaintext {
                        #expect(secret == Array(password.utf8))
                    } else {
                        #expect(try PasswordHash(parsing: secret).verify(Password(password)))
                    }
                    #expect(new.starts(with: CredentialFile.bom))
                    let store = CredentialStore(path: path, policy: oneRound)
                    #expect(try store.authenticate(username: user, password: password))
                }
            }
        }
    }

    @Test("delete removes every line of the name and nothing else")
    func deleteByteForByte() throws {
        let cases: [(user: String, password: String, indices: [Int])] = [
            ("dup", "dup-first", [6, 7]), ("last", "last", [9]), ("valencia", "valencia", [1]),
            ("xvalencia", "xvalencia", [8]),
        ]
        for (user, password, indices) in cases {
            try withTemporaryDirectory { dir in
                let path = dir.file("creds.txt")
                try Fixture.write(to: path)
                let result = try CLI.run(["delete", path, user])
                #expect(result.status == 0, "\(user): \(result)")
                #expect(result.stdout == "user removed (\(indices.count) line\(indices.count == 1 ? "" : "s"))\n")
                var expected = Fixture.lines
                for index in indices.reversed() { expected.remove(at: index) }
                #expect(try readBytes(path) == Array(expected.joined().utf8))
                let store = CredentialStore(path: path, policy: oneRound)
                #expect(try !store.authenticate(username: user, password: Canary.password(password)))
                #expect(try store.read().entries(named: user).isEmpty)
            }
        }
    }

    @Test("import updates in place and appends, all other lines kept")
    func importByteForByte() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let old = try readBytes(path)
            let stdin = "usuario2,\(Canary.password("u2-new"))\r\nnuevo,\(Canary.password("nuevo"))\n\n"
            let result = try CLI.run(["import", "--plaintext", path], stdin: stdin)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "1 added, 1 updated\n")
            var expected = Fixture.lines
            expected[5] = "usuario2,\(Canary.password("u2-new"))\n"
            expected[9] += "\n"
            expected.append("nuevo,\(Canary.password("nuevo"))\n")
            #expect(try readBytes(path) == Array(expected.joined().utf8))
            #expect(old == Fixture.bytes)
        }
    }

    // MARK: Validation tables (SPEC §2)

    static let badUsernames: [(String, String)] = [
        ("empty", ""),
        ("256 bytes", String(repeating: "u", count: 256)),
        ("256 bytes of 2-byte characters", String(repeating: "ñ", count: 128)),
        ("comma", "a,b"),
        ("LF (line injection)", "a\nadmin"),
        ("CR", "a\rb"),
        ("TAB", "a\tb"),
        ("DEL", "a\u{7F}b"),
        ("U+0085 (NEL)", "a\u{85}b"),
        ("U+009F", "a\u{9F}b"),
        ("ESC", "a\u{1B}[2Jb"),
        ("leading space", " alice"),
        ("trailing space", "alice "),
        ("trailing NBSP", "alice\u{A0}"),
        ("leading #", "#alice"),
    ]

    @Test("Bad new usernames: exit 2 from add, the file byte for byte", arguments: badUsernames)
    func badUsernameCLI(name: String, username: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            for plaintext in [false, true] {
                let result = try CLI.run(
                    ["add", "--iterations", "1", path, username] + (plaintext ? ["--plaintext"] : []),
                    stdin: Canary.password("ok") + "\n")
                #expect(result.status == 2, "\(name): \(result)")
                #expect(result.message.hasPrefix("credfile: username "), "\(name): \(result)")
                #expect(try readBytes(path) == Fixture.bytes)
            }
            // Through import (NUL cannot be in an argument, but can be on stdin). A comma
            // cannot be in an imported name: the line splits at the first one.
            guard !username.contains(",") else { return }
            let viaImport = try CLI.run(
                ["import", "--iterations", "1", path], stdin: "\(username),\(Canary.password("ok"))\n")
            #expect(viaImport.status == 2, "\(name): \(viaImport)")
            #expect(try readBytes(path) == Fixture.bytes)
            // Refused before the lock is taken: not even the lock file is created.
            #expect(try dir.names() == ["creds.txt"])
        }
    }

    @Test("A NUL in a new username is refused through import and the library")
    func nulUsername() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let result = try CLI.run(
                ["import", "--iterations", "1", path], stdinBytes: Array("a\0b,\(Canary.password(1))\n".utf8))
            #expect(result.status == 2, "\(result)")
            #expect(try readBytes(path) == Fixture.bytes)
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(throws: CredFileError(.usage, "")) {
                try store.register(username: "a\0b", password: Canary.password(1))
            }
            #expect(try readBytes(path) == Fixture.bytes)
        }
    }

    @Test("Usernames at the limits are accepted: 255 bytes, non-ASCII, inner spaces")
    func goodUsernames() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            for (index, username) in [String(repeating: "u", count: 255), "José María", "用户", "a#b", "dollar$"]
                .enumerated()
            {
                let result = try CLI.run(
                    ["add", "--iterations", "1", path, username], stdin: Canary.password(index) + "\n")
                #expect(result.status == 0, "\(username): \(result)")
                let store = CredentialStore(path: path, policy: oneRound)
                #expect(try store.authenticate(username: username, password: Canary.password(index)))
            }
        }
    }

    static let badPasswords: [(name: String, bytes: [UInt8], plaintextOnly: Bool)] = [
        ("empty", [], false),
        (
            "4097 bytes",
            Array((Canary.password("") + String(repeating: "p", count: 4097 - Canary.password("").utf8.count)).utf8),
            false
        ),
        ("NUL", Array("\(Canary.password("a"))\0b".utf8), false),
        ("inner CR", Array("\(Canary.password("a"))\rb".utf8), false),
        ("starts with $ (plaintext)", Array("$\(Canary.password("a"))".utf8), true),
        ("crypt form (plaintext)", Array("$6$\(Canary.password("salt"))$x".utf8), true),
        ("{SSHA} (plaintext)", Array("{SSHA}\(Canary.password("a"))".utf8), true),
        ("control byte 0x01 (plaintext)", Array("\(Canary.password("a"))\u{01}".utf8), true),
        ("DEL (plaintext)", Array("\(Canary.password("a"))\u{7F}".utf8), true),
        ("ESC (plaintext)", Array("\(Canary.password("a"))\u{1B}[0m".utf8), true),
        ("invalid UTF-8 (plaintext)", Array(Canary.password("a").utf8) + [0xFF, 0xFE], true),
    ]

    @Test("Bad new passwords: exit 2 from add, passwd and import; the file byte for byte", arguments: badPasswords)
    func badPasswordCLI(name: String, bytes: [UInt8], plaintextOnly: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let flags = ["--iterations", "1"] + (plaintextOnly ? ["--plaintext"] : [])
            for arguments in [["add", path, "nuevo"], ["passwd", path, "valencia"]] {
                let result = try CLI.run(arguments + flags, stdinBytes: bytes + [0x0A])
                #expect(result.status == 2, "\(arguments[0]) \(name): \(result)")
                #expect(result.message.hasPrefix("credfile: "), "\(result)")
                #expect(try readBytes(path) == Fixture.bytes)
            }
            let viaImport = try CLI.run(["import", path] + flags, stdinBytes: Array("nuevo,".utf8) + bytes + [0x0A])
            #expect(viaImport.status == 2, "import \(name): \(viaImport)")
            #expect(try readBytes(path) == Fixture.bytes)
            if !plaintextOnly {
                // Refused even though it would be hashed.
                let store = CredentialStore(path: path, policy: oneRound)
                #expect(throws: CredFileError(.usage, "")) {
                    try store.register(username: "nuevo", password: Password(utf8: bytes), storage: .hashed)
                }
            } else {
                // The same password is fine when it is hashed (it never stands in the file).
                let store = CredentialStore(path: path, policy: oneRound)
                #expect(throws: CredFileError(.usage, "")) {
                    try store.register(username: "nuevo", password: Password(utf8: bytes), storage: .plaintext)
                }
                #expect(try readBytes(path) == Fixture.bytes)
                try store.register(username: "nuevo", password: Password(utf8: bytes), storage: .hashed)
                #expect(
                    try store.verify(username: "nuevo", password: Password(utf8: bytes), upgradeOnSuccess: false)
                        .granted)
            }
        }
    }

    @Test("Passwords at the limits are accepted: 4096 bytes, TAB, non-ASCII, a comma")
    func goodPasswords() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            let long = Canary.password("") + String(repeating: "p", count: 4096 - Canary.password("").utf8.count)
            let passwords = [long, Canary.password("tab\there"), Canary.password("contraseña"), Canary.password("a,b")]
            for (index, password) in passwords.enumerated() {
                for plaintext in [false, true] {
                    let user = "u\(index)\(plaintext ? "p" : "h")"
                    let result = try CLI.run(
                        ["add", "--iterations", "1", path, user] + (plaintext ? ["--plaintext"] : []),
                        stdin: password + "\n")
                    #expect(result.status == 0, "\(user): \(result)")
                    let verify = try CLI.run(["verify", "--iterations", "1", path, user], stdin: password + "\n")
                    #expect(verify.status == 0, "\(user): \(verify)")
                }
            }
        }
    }

    @Test("No line injection: a password can never add a line, through the CLI or the library")
    func noLineInjection() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            // The CLI reads one line: the rest of standard input is never a password.
            let injected = "\(Canary.password("first"))\nadmin,\(Canary.password("admin"))\n"
            for plaintext in [true, false] {
                let user = plaintext ? "a" : "b"
                let old = try readBytes(path)
                let result = try CLI.run(
                    ["add", "--iterations", "1", path, user] + (plaintext ? ["--plaintext"] : []), stdin: injected)
                #expect(result.status == 0, "\(result)")
                let new = try readBytes(path)
                #expect(rawLines(new).count == rawLines(old).count + 1)
                #expect(new.text.hasSuffix(plaintext ? "\na,\(Canary.password("first"))\n" : "\n"))
            }
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(try store.authenticate(username: "a", password: Canary.password("first")))
            #expect(try store.authenticate(username: "b", password: Canary.password("first")))
            #expect(try store.read().firstEntry(named: "admin") == nil)
            // The library refuses LF and CR in names and passwords outright.
            let before = try readBytes(path)
            let attempts: [() throws -> Void] = [
                { try store.register(username: "c\nadmin", password: Canary.password("x")) },
                {
                    try store.register(
                        username: "c", password: "\(Canary.password("x"))\nadmin,\(Canary.password("y"))")
                },
                {
                    try store.register(
                        username: "c", password: Password("\(Canary.password("x"))\radmin"), storage: .plaintext)
                },
                {
                    try store.changePassword(
                        username: "valencia", to: "\(Canary.password("x"))\nadmin,\(Canary.password("y"))")
                },
                { _ = try store.importUsers([(username: "c\radmin", password: Password(Canary.password("x")))]) },
                {
                    _ = try store.importUsers(
                        [(username: "c", password: Password("\(Canary.password("x"))\nadmin,y"))], storage: .plaintext)
                },
            ]
            for attempt in attempts {
                do {
                    try attempt()
                    Issue.record("an injection attempt was accepted")
                } catch let error as CredFileError {
                    #expect(error.code == .usage)
                    Canary.expectNoLeak(error.description, of: "a library error")
                }
            }
            #expect(try readBytes(path) == before)
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
        }
    }

    @Test("Standard input without a password, or with an empty one: exit 2, nothing written")
    func noPasswordOnStdin() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            for stdin in ["", "\n", "\r\n"] {
                for arguments in [["add", path, "nuevo"], ["passwd", path, "valencia"]] {
                    let result = try CLI.run(arguments + ["--iterations", "1"], stdin: stdin)
                    #expect(result.status == 2, "\(arguments[0]) \(stdin.debugDescription): \(result)")
                    #expect(try readBytes(path) == Fixture.bytes)
                }
            }
        }
    }
}

/// Running system tools (chattr, mount) from tests.
enum CLIHelpers {
    /// Runs a tool quietly; returns its exit status (127 when it cannot be started).
    static func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
        guard FileManager.default.isExecutableFile(atPath: path) else { return 127 }
        let child = try ChildProcess.start(path, arguments, stdin: [], environment: CLI.environment([:]))
        return try child.checkedWait().status ?? 128
    }
}
