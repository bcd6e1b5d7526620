import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// What a hostile neighbour or an earlier run must not be able to do (SPEC §4, issue #11
// items 5, 6, 8, 11, 12, 13), the byte-level writer (issue #10 item 4), and the fault
// hook's errno, call count and new call names (issue #10 item 6). Tests that need a second
// uid run only as root and show as skipped, with the reason, elsewhere.

/// The uid and gid of `nobody`: an owner that is not the test's.
let otherUser: (uid: uid_t, gid: gid_t) = (65534, 65534)

/// `lchown` that throws: gives a symlink (not its target) an owner.
func setLinkOwner(_ path: String, _ owner: (uid: uid_t, gid: gid_t)) throws {
    guard lchown(path, owner.uid, owner.gid) == 0 else {
        throw HarnessError("lchown \(path): \(String(cString: strerror(errno)))")
    }
}

func makeSymlink(_ target: String, at path: String) throws {
    guard symlink(target, path) == 0 else { throw HarnessError("symlink \(path): \(String(cString: strerror(errno)))") }
}

func makeDirectory(_ path: String, mode: mode_t, owner: (uid: uid_t, gid: gid_t)? = nil) throws {
    guard mkdir(path, 0o700) == 0 else { throw HarnessError("mkdir \(path): \(String(cString: strerror(errno)))") }
    if let owner, chown(path, owner.uid, owner.gid) != 0 { throw HarnessError("chown \(path)") }
    guard chmod(path, mode) == 0 else { throw HarnessError("chmod \(path)") }
}

/// Runs `credfile ARGUMENTS` as uid/gid 65534 with no supplementary groups (`setpriv`).
func runAsOtherUser(_ arguments: [String], stdin: String) throws -> ProcessResult {
    let child = try ChildProcess.start(
        "/usr/bin/setpriv",
        ["--reuid=\(otherUser.uid)", "--regid=\(otherUser.gid)", "--clear-groups", try CLI.path()] + arguments,
        stdin: Array(stdin.utf8), environment: CLI.environment([:]))
    return try child.checkedWait()
}

@Suite("Write safety: symlinks, hard links, the lock, stale files, long names, faults")
struct WriteSafetyTests {
    // MARK: The byte-level writer (#10 item 4)

    @Test("AtomicWriter.rewrite hands over the current bytes and writes exactly the bytes it gets back")
    func writerIsByteLevel() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("any.bin")
            let writer = AtomicWriter(path: path)
            // A missing file: `change` sees nil with createIfMissing, and is not called without it.
            #expect(throws: CredFileError(.io, "")) {
                try writer.rewrite { _ in
                    Issue.record("called for a missing file"); return (nil, ())
                }
            }
            let seen: [UInt8]?? = try writer.rewrite(createIfMissing: true) { current in (nil, current) }
            #expect(seen == .some(nil))
            #expect(!fileExists(path), "nil bytes must write nothing")
            // Bytes that no credential parser would keep as they are: written as given.
            let first: [UInt8] = [0xEF, 0xBB, 0xBF, 0x00, 0xFF, 0x0D, 0x0A, 0x0D]
            let count = try writer.rewrite(createIfMissing: true) { current in (first, current?.count ?? -1) }
            #expect(count == -1)
            #expect(try readBytes(path) == first)
            #expect(try mode(path) == 0o600)
            let inode = try lstatInfo(path).st_ino
            let again: [UInt8]? = try writer.rewrite { current in (nil, current) }
            #expect(again == first)
            #expect(try lstatInfo(path).st_ino == inode, "nil bytes replaced the file")
            try writer.rewrite { current in (Array(current!.reversed()), ()) }  // the file exists: current is set
            #expect(try readBytes(path) == first.reversed())
        }
    }

    @Test("Storage depends on nothing above it: no parsing or model type in Sources/CredFile/Storage")
    func storageStandsAlone() throws {
        let storage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CredFile/Storage")
        let files = try FileManager.default.contentsOfDirectory(atPath: storage.path).filter { $0.hasSuffix(".swift") }
        #expect(
            files.sorted() == [
                "AtomicWriter.swift", "FileLock.swift", "FileReader.swift", "PathResolution.swift",
                "SidecarNames.swift",
                "Splice.swift",
            ])
        let upperNames = [
            "CredentialFile", "CredentialLine", "LineScanner", "LineClassifier", "Username", "Password",
            "PasswordHash", "HashPolicy", "Finding", "CredentialStore(",
        ]
        for file in files {
            let text = try String(contentsOf: storage.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("///") }
                .joined(separator: "\n")
            for name in upperNames {
                #expect(!code.contains(name), "\(file) uses \(name)")
            }
        }
    }

    // MARK: Symlinks as protected_symlinks follows them (#11 item 5)

    struct LinkCase: Sendable, CustomStringConvertible {
        let description: String
        /// The mode of the directory that holds the link.
        let directoryMode: mode_t
        /// Whether `nobody` owns that directory (else root does).
        let directoryOwnedByOther: Bool
        /// Whether `nobody` owns the link (else root, the caller, does).
        let linkOwnedByOther: Bool
        /// Whether the link is a directory on the way (`links/d/creds.txt`), not FILE itself.
        let linkIsDirectory: Bool
        let followed: Bool
    }

    static let linkCases: [LinkCase] = [
        .init(
            description: "other's link to FILE in a sticky 1777 dir: refused", directoryMode: 0o1777,
            directoryOwnedByOther: false, linkOwnedByOther: true, linkIsDirectory: false, followed: false),
        .init(
            description: "other's link to a directory on the way, in a sticky 1777 dir: refused", directoryMode: 0o1777,
            directoryOwnedByOther: false, linkOwnedByOther: true, linkIsDirectory: true, followed: false),
        .init(
            description: "the caller's own link in a sticky 1777 dir: followed", directoryMode: 0o1777,
            directoryOwnedByOther: false, linkOwnedByOther: false, linkIsDirectory: false, followed: true),
        .init(
            description: "the caller's own directory link in a sticky 1777 dir: followed", directoryMode: 0o1777,
            directoryOwnedByOther: false, linkOwnedByOther: false, linkIsDirectory: true, followed: true),
        .init(
            description: "the directory owner's link in its sticky 1777 dir: followed", directoryMode: 0o1777,
            directoryOwnedByOther: true, linkOwnedByOther: true, linkIsDirectory: false, followed: true),
        .init(
            description: "other's link in a 0777 dir without the sticky bit: followed", directoryMode: 0o777,
            directoryOwnedByOther: false, linkOwnedByOther: true, linkIsDirectory: false, followed: true),
        .init(
            description: "other's link in a sticky dir that others cannot write (1775): followed",
            directoryMode: 0o1775,
            directoryOwnedByOther: false, linkOwnedByOther: true, linkIsDirectory: false, followed: true),
    ]

    @Test(
        "A symlink is followed only as the kernel's protected_symlinks rule would; else exit 5 and nothing written",
        .enabled(if: isRoot, "needs root: a link owned by another uid (chown 65534)"), arguments: linkCases)
    func protectedSymlinks(_ linkCase: LinkCase) throws {
        try withTemporaryDirectory { dir in
            // A root-owned passwd-format file elsewhere: what a planted link aims at.
            try makeDirectory(dir.file("real"), mode: 0o755)
            let target = dir.file("real/creds.txt")
            try Fixture.write(to: target, mode: 0o644)
            try makeDirectory(dir.file("links"), mode: 0o700, owner: linkCase.directoryOwnedByOther ? otherUser : nil)
            guard chmod(dir.file("links"), linkCase.directoryMode) == 0 else { throw HarnessError("chmod") }
            let link = dir.file(linkCase.linkIsDirectory ? "links/d" : "links/creds.txt")
            try makeSymlink(linkCase.linkIsDirectory ? dir.file("real") : target, at: link)
            if linkCase.linkOwnedByOther { try setLinkOwner(link, otherUser) }
            let path = linkCase.linkIsDirectory ? link + "/creds.txt" : link

            let commands: [([String], String)] = [
                (["add", "--iterations", "1", path, "nuevo"], Canary.password("nuevo") + "\n"),
                (["delete", path, "dup"], ""),
                (["upgrade", "--iterations", "1", path], ""),
            ]
            for (arguments, stdin) in commands {
                let before = try readBytes(target)
                let result = try CLI.run(arguments, stdin: stdin)
                let context = Comment(rawValue: "\(linkCase) / \(arguments[0]): \(result)")
                if linkCase.followed {
                    #expect(result.status == 0, context)
                    #expect(try readBytes(target) != before, context)
                } else {
                    #expect(result.status == 5, context)
                    #expect(result.message.hasPrefix("credfile: refusing to follow the symlink \(link)"), context)
                    #expect(try readBytes(target) == before, context)
                    #expect(try dir.names() == ["links", "real"], context)
                    #expect(
                        try FileManager.default.contentsOfDirectory(atPath: dir.file("real")) == ["creds.txt"], context)
                }
                #expect(try isSymlink(link), context)
            }
        }
    }

    @Test(
        "Every link on the way is checked: an allowed link leading to another sticky dir's planted link is refused",
        .enabled(if: isRoot, "needs root: a link owned by another uid (chown 65534)"))
    func everyLinkOnTheWay() throws {
        try withTemporaryDirectory { dir in
            try makeDirectory(dir.file("real"), mode: 0o755)
            let target = dir.file("real/creds.txt")
            try Fixture.write(to: target)
            try makeDirectory(dir.file("sticky"), mode: 0o1777)
            try makeSymlink(target, at: dir.file("sticky/planted"))
            try setLinkOwner(dir.file("sticky/planted"), otherUser)
            // The caller's own link, in a private dir, to the planted one; and a relative hop.
            try makeSymlink("sticky/planted", at: dir.file("mine"))
            try makeSymlink("./mine", at: dir.file("hop"))
            for path in [dir.file("mine"), dir.file("hop"), dir.file("sticky/../hop")] {
                let result = try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n")
                #expect(result.status == 5, "\(path): \(result)")
                #expect(
                    result.message.contains("refusing to follow the symlink \(dir.file("sticky/planted"))"), "\(result)"
                )
                #expect(try readBytes(target) == Fixture.bytes)
            }
            // The library says the same, with an I/O code (exit 5).
            let store = CredentialStore(path: dir.file("mine"), policy: oneRound)
            #expect(throws: CredFileError(.io, "")) { try store.remove(username: "dup") }
            #expect(try readBytes(target) == Fixture.bytes)
        }
    }

    @Test("Relative paths, dot-dot and chains of links resolve to the same file and lock as the real path")
    func resolverMatchesRealpath() throws {
        try withTemporaryDirectory { dir in
            try makeDirectory(dir.file("a"), mode: 0o755)
            try makeDirectory(dir.file("a/b"), mode: 0o755)
            try Fixture.write(to: dir.file("a/b/creds.txt"))
            try makeSymlink("a/b", at: dir.file("ab"))
            try makeSymlink("../ab/creds.txt", at: dir.file("a/up"))
            try makeSymlink(dir.file("a/up"), at: dir.file("abs"))
            let real = dir.file("a/b/creds.txt")
            for path in [
                real, dir.file("ab/creds.txt"), dir.file("a/up"), dir.file("abs"), dir.file("a/./b/../b//creds.txt"),
                dir.file("ab/../b/creds.txt"),  // `..` of a link's target is the target's parent, as in the kernel
            ] {
                #expect(try FileReader.resolvedPath(path) == real, "\(path)")
            }
            #expect(try FileReader.resolvedPath(dir.file("ab/new.txt")) == dir.file("a/b/new.txt"))
            #expect(throws: CredFileError(.io, "")) { try FileReader.resolvedPath(dir.file("ab/../ab/creds.txt")) }
            #expect(throws: CredFileError(.io, "")) { try FileReader.resolvedPath(dir.file("a/b/creds.txt/x")) }
            #expect(throws: CredFileError(.io, "")) { try FileReader.resolvedPath("") }
            // A relative path, resolved from the working directory, in a child (the test
            // process's working directory is shared).
            let child = try CLI.shell(
                "cd \"$1\" && \"$CREDFILE\" add --iterations 1 ab/creds.txt uno", [dir.path],
                stdin: Canary.password(1) + "\n")
            #expect(try child.checkedWait().status == 0)
            #expect(try dir.names() == ["a", "ab", "abs"])
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: dir.file("a/b")).sorted() == [
                    "creds.txt", "creds.txt.lock",
                ])
        }
    }

    // MARK: Hard links (#11 item 12)

    @Test("A FILE with more than one hard link is never rewritten: exit 4, both names unchanged")
    func hardLinkedFileRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            guard link(path, dir.file("other.txt")) == 0 else { throw HarnessError("link") }
            for command in StorageTests.writingCommands where command.name != "verify --upgrade" {
                let result = try CLI.run(command.arguments(path), stdin: command.stdin)
                #expect(result.status == 4, "\(command): \(result)")
                #expect(result.message.contains("has 2 hard links"), "\(command): \(result)")
                #expect(try readBytes(path) == Fixture.bytes)
                #expect(try lstatInfo(path).st_nlink == 2)
                #expect(try dir.names() == ["creds.txt", "creds.txt.lock", "other.txt"])
            }
            // Upgrade-on-login: the login stands, the rehash is refused.
            let verify = try CLI.run(
                ["verify", "--upgrade", "--iterations", "1", path, "valencia"],
                stdin: Canary.password("valencia") + "\n")
            #expect(verify.status == 0, "\(verify)")
            #expect(verify.message.contains("hard links"), "\(verify)")
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(throws: CredFileError(.malformedFile, "")) { try store.remove(username: "dup") }
            // Reading, and a change that changes nothing, still work.
            #expect(try store.read().entries(named: "dup").count == 2)
            #expect(try readBytes(dir.file("other.txt")) == Fixture.bytes)
        }
    }

    // MARK: The lock (#11 items 6 and 8)

    @Test(
        "A lock file root creates or owns gets the file's owner, and the owner can still write",
        .enabled(if: isRoot, "needs root: write as root, then as uid 65534 (setpriv)"),
        arguments: ["root creates the lock", "a root-owned lock exists"])
    func lockKeepsOwnerIn(_ start: String) throws {
        try withTemporaryDirectory { dir in
            guard chmod(dir.path, 0o755) == 0 else { throw HarnessError("chmod") }
            try makeDirectory(dir.file("home"), mode: 0o700, owner: otherUser)
            let path = dir.file("home/creds.txt")
            try Fixture.write(to: path, mode: 0o600, owner: otherUser)
            if start == "a root-owned lock exists" {
                try writeBytes(path + ".lock", [])
                #expect(try lstatInfo(path + ".lock").st_uid == 0)
            }
            let byRoot = try CLI.run(
                ["add", "--iterations", "1", path, "porroot"], stdin: Canary.password("root") + "\n")
            #expect(byRoot.status == 0, "\(byRoot)")
            let lock = try lstatInfo(path + ".lock")
            #expect(lock.st_uid == otherUser.uid && lock.st_gid == otherUser.gid)
            #expect(lock.st_mode & 0o7777 == 0o600)
            let byOwner = try runAsOtherUser(
                ["add", "--iterations", "1", path, "pordueno"], stdin: Canary.password("own") + "\n")
            #expect(byOwner.status == 0, "\(byOwner)")
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(try store.authenticate(username: "porroot", password: Canary.password("root")))
            #expect(try store.authenticate(username: "pordueno", password: Canary.password("own")))
            #expect(try statInfo(path).st_uid == otherUser.uid)
        }
    }

    @Test(
        "A lock file with another name's inode (a hard link) is never chowned",
        .enabled(if: isRoot, "needs root: chown semantics"))
    func hardLinkedLockNotChowned() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path, owner: otherUser)
            try writeBytes(dir.file("precious"), [])
            guard link(dir.file("precious"), path + ".lock") == 0 else { throw HarnessError("link") }
            _ = try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n")
            #expect(try lstatInfo(dir.file("precious")).st_uid == 0)
        }
    }

    /// Starts a process that holds `flock(LOCK_EX)` on `lockPath` for `holding` seconds and
    /// returns once it holds the lock. One process (Python's `fcntl.flock`), not flock(1):
    /// flock(1)'s command inherits the lock and would keep it after flock(1) is killed.
    func holdLock(_ lockPath: String, seconds holding: Int) throws -> ChildProcess {
        let script =
            "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\ntime.sleep(float(sys.argv[2]))\n"
        let child = try ChildProcess.start(
            try ExternalTool.path(ExternalTool.peerPython), ["-c", script, lockPath, String(holding)], stdin: [],
            environment: CLI.environment([:]))
        let start = ContinuousClock.now
        while seconds(ContinuousClock.now - start) < 30 {
            let fd = open(lockPath, O_RDWR | O_CLOEXEC)
            if fd >= 0 {
                defer { close(fd) }
                if flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK { return child }
            }
            usleep(10_000)  // not yet: the child has not taken it (ours is released by close)
        }
        child.killNow()
        throw HarnessError("flock(1) did not take \(lockPath) within 30 s")
    }

    @Test("The lock is waited for at most lockTimeout seconds: then .lock (exit 5), nothing written")
    func lockTimeout() throws {
        #expect(CredentialStore(path: "x").lockTimeout == 15)
        #expect(AtomicWriter(path: "x").lockTimeout == 15)
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            try writeBytes(path + ".lock", [])
            // The holder lets go after 20 s: a writer that ignores the timeout would then
            // succeed, and the expectation below fail (never hang).
            let holder = try holdLock(path + ".lock", seconds: 20)
            defer {
                holder.killNow()
                _ = try? holder.checkedWait()
            }
            var store = CredentialStore(path: path, policy: oneRound)
            store.lockTimeout = 0.3
            let error = #expect(throws: CredFileError.self) {
                try store.register(username: "nuevo", password: Canary.password("n"))
            }
            #expect(error?.code == .lock)
            #expect(
                error?.message.contains("another process held it for more than 0.3 s") == true,
                "\(String(describing: error))")
            store.lockTimeout = 0
            #expect(throws: CredFileError(.lock, "")) { try store.remove(username: "dup") }
            #expect(try readBytes(path) == Fixture.bytes)
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
            holder.killNow()
            _ = try holder.checkedWait()
            try store.register(username: "nuevo", password: Canary.password("n"))  // free again: timeout 0 suffices
            #expect(try store.authenticate(username: "nuevo", password: Canary.password("n")))
        }
    }

    @Test("A writer waits for a holder that lets go within the timeout")
    func lockWaitsWithinTimeout() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            try writeBytes(path + ".lock", [])
            let holder = try holdLock(path + ".lock", seconds: 1)
            defer {
                holder.killNow()
                _ = try? holder.checkedWait()
            }
            var store = CredentialStore(path: path, policy: oneRound)
            store.lockTimeout = 120
            try store.register(username: "nuevo", password: Canary.password("n"))
            #expect(try store.authenticate(username: "nuevo", password: Canary.password("n")))
        }
    }

    // MARK: Stale temporary files (#11 item 11)

    @Test("Stale cleanup removes only the caller's regular files of the exact pattern, never through a link")
    func staleCleanupIsExact() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            try writeText(dir.file("victim"), "keep me\n")
            let stale = ".creds.txt.credfile-Own123"
            try writeText(dir.file(stale), "stale\n")
            var kept = [
                ".creds.txt.credfile-AB.12C", ".creds.txt.credfile-AB~12C", ".creds.txt.credfile-AB 12C",
                ".creds.txt.credfile-ÄB12C",
            ]
            for name in kept { try writeText(dir.file(name), "not ours\n") }
            try makeSymlink(dir.file("victim"), at: dir.file(".creds.txt.credfile-Lnk123"))
            guard link(dir.file("victim"), dir.file(".creds.txt.credfile-Hrd123")) == 0 else {
                throw HarnessError("link")
            }
            try makeDirectory(dir.file(".creds.txt.credfile-Dir123"), mode: 0o700)
            guard mkfifo(dir.file(".creds.txt.credfile-Fif123"), 0o600) == 0 else { throw HarnessError("mkfifo") }
            kept += [
                ".creds.txt.credfile-Lnk123", ".creds.txt.credfile-Hrd123", ".creds.txt.credfile-Dir123",
                ".creds.txt.credfile-Fif123",
            ]
            if isRoot {
                // Another user's file of the exact pattern (the credential file is root's).
                try writeText(dir.file(".creds.txt.credfile-Oth123"), "theirs\n")
                guard chown(dir.file(".creds.txt.credfile-Oth123"), otherUser.uid, otherUser.gid) == 0 else {
                    throw HarnessError("chown")
                }
                kept.append(".creds.txt.credfile-Oth123")
            }
            let result = try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n")
            #expect(result.status == 0, "\(result)")
            #expect(try dir.names() == (["creds.txt", "creds.txt.lock", "victim"] + kept).sorted())
            #expect(try readBytes(dir.file("victim")) == Array("keep me\n".utf8))
        }
    }

    @Test(
        "As root, a stale temporary file that belongs to the file's owner (root's writes chown them) is removed",
        .enabled(if: isRoot, "needs root: chown"))
    func rootRemovesOwnersStaleFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path, owner: (1234, 1234))
            try writeText(dir.file(".creds.txt.credfile-Abc123"), "stale\n")
            guard chown(dir.file(".creds.txt.credfile-Abc123"), 1234, 1234) == 0 else { throw HarnessError("chown") }
            try writeText(dir.file(".creds.txt.credfile-Xyz789"), "someone else's\n")
            guard chown(dir.file(".creds.txt.credfile-Xyz789"), 4321, 4321) == 0 else { throw HarnessError("chown") }
            #expect(
                try CLI.run(["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password(1) + "\n").status == 0)
            #expect(try dir.names() == [".creds.txt.credfile-Xyz789", "creds.txt", "creds.txt.lock"])
        }
    }

    @Test(
        "The temporary pattern, byte for byte",
        arguments: [
            ("exact", ".a.credfile-Ab3xY9", true), ("five", ".a.credfile-Ab3xY", false),
            ("seven", ".a.credfile-Ab3xY9z", false),
            ("dot", ".a.credfile-Ab.xY9", false), ("no leading dot", "a.credfile-Ab3xY9", false),
            ("other name", ".b.credfile-Ab3xY9", false), ("non-ASCII", ".a.credfile-Ab3xYé", false),
        ])
    func temporaryPattern(_ name: String, _ candidate: String, _ matches: Bool) {
        #expect(
            AtomicWriter.isTemporaryName(candidate, prefix: AtomicWriter.temporaryPrefix(of: "a")) == matches, "\(name)"
        )
    }

    // MARK: Names up to NAME_MAX (#11 item 13)

    static let longNames: [String] =
        [238, 239, 240, 246, 250, 251, 252, 254, 255].map { String(repeating: "n", count: $0) }
        + [
            String(repeating: "é", count: 127) + "a", String(repeating: "é", count: 127),
            "ab" + String(repeating: "€", count: 84) + "c",
        ]

    @Test(
        "Every legal file name (239–255 bytes, multibyte too) can be written, with and without --backup",
        arguments: longNames)
    func longNamesWritable(_ name: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file(name)
            // A stale temporary file of this name, as a crashed writer would leave it.
            let stale = AtomicWriter.temporaryPrefix(of: name) + "Abc123"
            try writeText(dir.file(stale), "stale\n")
            #expect(stale.utf8.count <= 255)
            let commands: [([String], String)] = [
                (["add", "--iterations", "1", path, "uno"], Canary.password(1) + "\n"),
                (["add", "--backup", "--iterations", "1", path, "dos"], Canary.password(2) + "\n"),
                (["passwd", "--backup", "--iterations", "1", path, "uno"], Canary.password(3) + "\n"),
                (["delete", path, "dos"], ""),
            ]
            for (arguments, stdin) in commands {
                let result = try CLI.run(arguments, stdin: stdin)
                #expect(result.status == 0, "\(name.utf8.count) bytes, \(arguments[0]): \(result)")
            }
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(try store.authenticate(username: "uno", password: Canary.password(3)))
            #expect(try store.read().entries(named: "dos").isEmpty)
            let names = try dir.names()
            #expect(names.count == 3, "\(names)")
            #expect(names.contains(name))
            #expect(names.allSatisfy { $0.utf8.count <= 255 })
            let lock = try #require(names.first { $0.hasSuffix(".lock") })
            let backup = try #require(names.first { $0.hasSuffix(".bak") })
            // SPEC §4's names wherever they fit.
            if name.utf8.count + 5 <= 255 { #expect(lock == name + ".lock") }
            if name.utf8.count + 4 <= 255 { #expect(backup == name + ".bak") }
            #expect(try readBytes(dir.file(backup)).count > 0)
        }
    }

    @Test("Two long names with the same first 240 bytes get different lock and temporary names")
    func longNamesStayDistinct() {
        let base = String(repeating: "x", count: 240)
        let a = base + String(repeating: "a", count: 15)
        let b = base + String(repeating: "b", count: 15)
        #expect(AtomicWriter.sidecarName(of: a, suffix: ".lock") != AtomicWriter.sidecarName(of: b, suffix: ".lock"))
        #expect(AtomicWriter.temporaryPrefix(of: a) != AtomicWriter.temporaryPrefix(of: b))
        for name in [a, b] {
            #expect(AtomicWriter.sidecarName(of: name, suffix: ".lock").utf8.count <= 255)
            #expect(AtomicWriter.temporaryPrefix(of: name).utf8.count + 6 <= 255)
        }
        // Short names keep SPEC §4's exact names.
        #expect(AtomicWriter.sidecarName(of: "creds.txt", suffix: ".lock") == "creds.txt.lock")
        #expect(AtomicWriter.temporaryPrefix(of: "creds.txt") == ".creds.txt.credfile-")
        // Cut at a whole character: the prefix stays valid UTF-8.
        let multibyte = String(repeating: "€", count: 85)  // 255 bytes
        #expect(AtomicWriter.temporaryPrefix(of: multibyte).unicodeScalars.allSatisfy { $0 != "\u{FFFD}" })
    }

    // MARK: The fault hook (#10 item 6)

    @Test(
        "CREDFILE_TEST_FAULT=NAME[:ERRNO[:N]] parses, and anything else injects nothing",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"),
        arguments: [
            ("fsync", "fsync", EIO, nil), ("fsync:EIO:2", "fsync", EIO, 2), ("rename:ENOSPC", "rename", ENOSPC, nil),
            ("write:28", "write", 28, nil), ("fsync-directory:EIO:1", "fsync-directory", EIO, 1),
            ("fsync::2", nil, 0, nil), ("fsync:EBOGUS", nil, 0, nil), ("fsync:EIO:0", nil, 0, nil),
            ("fsync:EIO:x", nil, 0, nil), ("", nil, 0, nil), (":EIO", nil, 0, nil), ("a:EIO:1:2", nil, 0, nil),
        ] as [(String, String?, Int32, Int?)])
    func faultSyntax(_ text: String, _ name: String?, _ code: Int32, _ call: Int?) {
        #if DEBUG
        let fault = Syscall.Fault.parse(text)
        #expect(fault?.name == name, "\(text)")
        if name != nil {
            #expect(fault?.errno == code, "\(text)")
            #expect(fault?.call == call, "\(text)")
        }
        #endif
    }

    @Test(
        "The fault hook fails the N-th call only, with the chosen errno",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func faultCountAndErrno() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            let add = ["add", "--backup", "--iterations", "1", path, "nuevo"]
            // With --backup the first fsync is FILE.bak's temporary file, the second FILE's.
            try Fixture.write(to: path)
            let second = try CLI.run(
                add, stdin: Canary.password(1) + "\n", environment: ["CREDFILE_TEST_FAULT": "fsync:ENOSPC:2"])
            #expect(second.status == 5, "\(second)")
            #expect(second.message.contains("fsync: No space left on device"), "\(second)")
            #expect(try readBytes(path) == Fixture.bytes)
            #expect(try readBytes(path + ".bak") == Fixture.bytes, "the first fsync did not pass")
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)

            try FileManager.default.removeItem(atPath: path + ".bak")
            let first = try CLI.run(
                add, stdin: Canary.password(1) + "\n", environment: ["CREDFILE_TEST_FAULT": "fsync:EIO:1"])
            #expect(first.status == 5, "\(first)")
            #expect(first.message.contains("fsync: Input/output error"), "\(first)")
            #expect(!fileExists(path + ".bak"))

            let third = try CLI.run(
                add, stdin: Canary.password(1) + "\n", environment: ["CREDFILE_TEST_FAULT": "fsync:EIO:3"])
            #expect(third.status == 0, "only two fsyncs of files happen: \(third)")

            let rename = try CLI.run(
                ["delete", path, "dup"], environment: ["CREDFILE_TEST_FAULT": "rename:EACCES"])
            #expect(rename.status == 5, "\(rename)")
            #expect(rename.message.contains("rename: Permission denied"), "\(rename)")
        }
    }

    @Test(
        "A failing directory fsync after the rename: exit 5, and the message says the file WAS replaced",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func directoryFsyncFails() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let result = try CLI.run(
                ["add", "--iterations", "1", path, "nuevo"], stdin: Canary.password("n") + "\n",
                environment: ["CREDFILE_TEST_FAULT": "fsync-directory"])
            #expect(result.status == 5, "\(result)")
            #expect(
                result.message.hasPrefix(
                    "credfile: \(path) was replaced with the new content, but the change may not survive a crash"),
                "\(result)")
            #expect(result.message.contains("fsync-directory: Input/output error"), "\(result)")
            try expectAppended(
                old: Fixture.bytes, new: readBytes(path), username: "nuevo", password: Canary.password("n"))
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(try store.authenticate(username: "nuevo", password: Canary.password("n")))
        }
    }

    @Test(
        "A failing read: readers and writers exit 5 and nothing is written",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func readFails() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try Fixture.write(to: path)
            let env = ["CREDFILE_TEST_FAULT": "read:EIO"]
            let commands: [([String], String)] = [
                (["list", path], ""), (["check", path], ""),
                (["verify", "--iterations", "1", path, "valencia"], Canary.password("valencia") + "\n"),
                (["delete", path, "dup"], ""),
            ]
            for (arguments, stdin) in commands {
                let result = try CLI.run(arguments, stdin: stdin, environment: env)
                #expect(result.status == 5, "\(arguments[0]): \(result)")
                #expect(result.message.contains("read: Input/output error"), "\(arguments[0]): \(result)")
                #expect(try readBytes(path) == Fixture.bytes)
            }
        }
    }
}
