import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// Issue #25's items about writing the file: an error after the rename on a mapped
/// (≥ 1 MiB) file (item 12), the name of a failed `copy_file_range` (item 18), changes
/// applied to a file that is not the one they were made from (item 13), and mapped
/// rewrites whatever else the process maps at the same time (the CopyRangeTests flake).
@Suite struct StorageHardening25Tests {
    /// The sizes a rewrite takes two ways: read into memory, and mapped (≥ 1 MiB).
    static let sizes: [(name: String, padding: Int)] = [("small", 0), ("mapped (≥ 1 MiB)", 40_000)]

    /// The fixture, then `padding` lines `padNNNNNN,…` (about 30 bytes each).
    static func writeFile(_ path: String, padding: Int) throws -> [UInt8] {
        var bytes = Fixture.bytes + [0x0A]
        for i in 0..<padding { bytes += Array("pad\(String(format: "%06d", i)),plain-password-\(i)\n".utf8) }
        try writeBytes(path, bytes)
        if padding > 0 { #expect(bytes.count >= FileReader.mappingMinimum) }
        return bytes
    }

    /// The faults that strike after the rename: the directory's `fsync` and its `open`
    /// (every call, or the first).
    static let afterRenameFaults = [
        "fsync-directory", "fsync-directory:EIO:1", "open-directory", "open-directory:EMFILE:1",
    ]

    @Test(
        "an error after the rename: exit 5 and 'was replaced', whatever the file's size, and the change is there once",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"),
        arguments: [0, 1], afterRenameFaults)
    func errorAfterTheRename(size: Int, fault: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            let before = try Self.writeFile(path, padding: Self.sizes[size].padding)
            let result = try CLI.run(["delete", path, "usuario2"], environment: ["CREDFILE_TEST_FAULT": fault])
            let context = Comment(rawValue: "\(Self.sizes[size].name), \(fault): \(result)")
            #expect(result.status == 5, context)
            #expect(
                result.message.hasPrefix(
                    "credfile: \(path) was replaced with the new content, but the change may not survive a crash"),
                context)
            // The change is in the file, made once: only usuario2's line is gone.
            var expected = CredentialFile(bytes: before)
            var changes = CredentialFile.Changes()
            changes.remove(try #require(expected.firstEntry(named: "usuario2")))
            expected = CredentialFile(bytes: try expected.render(applying: changes))
            #expect(try readBytes(path) == expected.bytes, context)
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty, context)
        }
    }

    @Test(
        "a failed copy_file_range is named copy_file_range, and the old file stays",
        .enabled(if: isDebugBuild, "the CREDFILE_TEST_FAULT hook is compiled into debug builds only"))
    func copyFileRangeIsNamed() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            let before = try Self.writeFile(path, padding: 40_000)
            let result = try CLI.run(
                ["delete", path, "usuario2"], environment: ["CREDFILE_TEST_FAULT": "copy_file_range"])
            #expect(result.status == 5, "\(result)")
            #expect(result.message.contains("copy_file_range: Input/output error"), "\(result)")
            #expect(!result.message.contains("write:"), "\(result)")
            #expect(try readBytes(path) == before)
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
        }
    }

    /// What made "a mapped file truncated in place while the change is computed" fail in
    /// a loaded full run: the SIGBUS guard was one per process, so while any other test
    /// read a mapping (check, a rewrite), a rewrite read its file into memory instead.
    @Test("a mapped rewrite maps its file while other threads read mappings of their own")
    func guardsAreNotOneAtATime() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("big.txt")
            _ = try Self.writeFile(path, padding: 40_000)
            let others = try (0..<4).map { i -> String in
                let other = dir.file("other\(i).txt")
                _ = try Self.writeFile(other, padding: 40_000)
                return other
            }
            // Other threads hold guarded mappings for as long as this test runs.
            let holding = Atomic<Int>(0)
            let release = Atomic<Bool>(false)
            let threads = others.map { other in
                Thread {
                    _ = try? FileReader.withGuardedBytes(other) { _, _ in
                        holding.add(1, ordering: .sequentiallyConsistent)
                        while !release.load(ordering: .sequentiallyConsistent) { usleep(1000) }
                    }
                }
            }
            threads.forEach { $0.start() }
            defer { release.store(true, ordering: .sequentiallyConsistent) }
            while holding.load(ordering: .sequentiallyConsistent) < others.count { usleep(1000) }
            let store = CredentialStore(path: path, policy: oneRound)
            let mapped = try store.rewrite { file in (CredentialFile.Changes(), file.source.isMapped) }
            #expect(mapped, "the rewrite read its file into memory while other mappings were guarded")
        }
    }

    // MARK: Item 13: changes name their lines by offset and bytes

    /// The file `bob`'s line was read from, and what another writer made of it since:
    /// carol's line (or part of one) now starts where bob's did.
    static let staleCases: [(name: String, before: String, after: String)] = [
        ("bob removed: carol starts where bob did", "alice,a\nbob,b\ncarol,c\n", "alice,a\ncarol,c\n"),
        ("bob renamed", "alice,a\nbob,b\ncarol,c\n", "alice,a\nbo2,b\ncarol,c\n"),
        ("bob's password changed", "alice,a\nbob,b\ncarol,c\n", "alice,a\nbob,Z\ncarol,c\n"),
        ("no line starts there now", "alice,a\nbob,b\ncarol,c\n", "alice,aaaaaaaa\nbob,b\n"),
        ("the file is shorter now", "alice,a\nbob,b\ncarol,c\n", "alice\n"),
        ("a BOM in front now", "alice,a\nbob,b\n", "\u{FEFF}alice,a\nbob,b\n"),
    ]

    @Test(
        "a change whose line is not that line of the file rendered is refused, in memory and on disk",
        arguments: 0..<staleCases.count, ["replaceSecret", "remove"])
    func staleChangesAreRefused(index: Int, edit: String) throws {
        let row = Self.staleCases[index]
        let old = CredentialFile(row.before)
        let bob = try #require(old.firstEntry(named: "bob"))
        var changes = CredentialFile.Changes()
        if edit == "remove" { changes.remove(bob) } else { try changes.replaceSecret(of: bob, with: "new-secret") }
        // Applied to the file it was made from: fine.
        #expect(throws: Never.self) { try old.render(applying: changes) }
        // Applied to what the file is now: refused, never written over another line.
        let now = CredentialFile(row.after)
        #expect(throws: CredFileError.self, "\(row.name)") { try now.render(applying: changes) }
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            try writeText(path, row.after)
            let store = CredentialStore(path: path, policy: oneRound)
            #expect(throws: CredFileError.self, "\(row.name)") {
                try store.rewrite { _ in (changes, ()) }
            }
            #expect(try readBytes(path) == Array(row.after.utf8), "\(row.name)")
        }
    }

    @Test("a change from an earlier read still applies when its line is there, byte for byte")
    func sameLineStillApplies() throws {
        let old = CredentialFile("alice,a\nbob,b\ncarol,c\n")
        var changes = CredentialFile.Changes()
        try changes.replaceSecret(of: try #require(old.firstEntry(named: "bob")), with: "new")
        // Another writer changed carol (after bob): bob's line is where it was.
        let now = CredentialFile("alice,a\nbob,b\ncarol,changed\n")
        #expect(try now.render(applying: changes) == Array("alice,a\nbob,new\ncarol,changed\n".utf8))
    }

    // MARK: Item 8: a one-password-a-line list is indexed once

    @Test(
        "a one-password-a-line list: the first lookup reads it once, every later one reads nothing, and each finds what a scan finds"
    )
    func plainListIsIndexedOnce() throws {
        try withTemporaryDirectory { dir in
            var random = SeededRandom(seed: 8)
            let words = [
                "Garden", "contraseña", "CONTRASEÑA", "cafe\u{301}", "Straße", "ǅemal", "  spaced  ", "x,y", "日本語",
            ]
            var lines: [String] = []
            for i in 0..<30_000 {
                let word = words[Int(random.next() % UInt64(words.count))]
                lines.append(word + "\(i % 97)" + (random.next() % 5 == 0 ? "\r" : ""))
                if random.next() % 50 == 0 { lines.append("") }
            }
            let path = dir.file("list.txt")
            try writeText(path, lines.joined(separator: "\n"))  // the last line has no LF
            let list = try Blocklist(path: path)
            #expect(list.form == .passwords)
            // What a scan of the file finds, the way the list is defined: the whole
            // password, both sides lowercased, CR before LF dropped, blank lines ignored.
            func scanned(_ password: String) -> Bool {
                let folded = PasswordText.folded(Password(password))
                return lines.contains { raw in
                    let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : raw
                    return !line.isEmpty
                        && String(decoding: Unicode.nfcBytes(of: line.lowercased()), as: UTF8.self) == folded
                }
            }
            var reads: [Int] = []
            let candidates =
                words.flatMap { word in ["\(word)5", "\(word.uppercased())5", "\(word)96", "\(word)97", word] }
                + ["contrasen\u{303}a5", "", "garden5\r"]
            for password in candidates where !password.isEmpty {
                let lookup = try list.lookUp(Password(password))
                #expect(lookup.isListed == scanned(password), "\(password.debugDescription)")
                reads.append(lookup.reads)
            }
            let size = Int(try statInfo(path).st_size)
            #expect(reads[0] <= size / 65536 + 2, "the first lookup read the file once: \(reads[0]) reads")
            #expect(reads.dropFirst().allSatisfy { $0 == 0 }, "later lookups read nothing: \(reads)")
        }
    }

    // MARK: Item 9: check's passes tolerate bytes that change between them

    /// Lines of every kind check judges differently.
    static func mixedFile(_ random: inout SeededRandom, lines: Int) throws -> [UInt8] {
        let weak = try PasswordHash(hashing: Password("weak-hash-pass"), policy: HashPolicy(rounds: 1000)).string
        let kinds = [
            "user#,plain-#", "user#,\(weak)", "user#,$pbkdf2-sha256$bad", "# comment #", "", "user#,", ",noname#",
            "usér#,plain", "user#,{SHA}x", "dup,first-#", "user#,$6$salt$hash", " spaced#,x",
        ]
        var bytes: [UInt8] = []
        for i in 0..<lines {
            let kind = kinds[Int(random.next() % UInt64(kinds.count))]
            bytes +=
                Array(kind.replacingOccurrences(of: "#", with: "\(i)").utf8)
                + (random.next() % 7 == 0 ? [0x0D, 0x0A] : [0x0A])
        }
        return bytes
    }

    @Test(
        "the findings passes never trap when the bytes change between them (zeroed as by a truncation, LFs added or removed, garbage)",
        arguments: ["zeroed", "LFs added", "LFs removed", "garbage"])
    func findingsWhenBytesChangeBetweenPasses(change: String) throws {
        var random = SeededRandom(seed: 14)
        for round in 0..<20 {
            var bytes = try Self.mixedFile(&random, lines: 3000)
            let from = Int(random.next() % UInt64(bytes.count))
            var seen = 0
            try bytes.withUnsafeMutableBytes { raw in
                let file = UnsafeRawBufferPointer(raw)
                _ = try Parallel.$testPieceCount.withValue(Int(random.next() % 4) + 1) {
                    try CredentialFile.forEachFinding(
                        in: file, policy: .standard, isBlocklisted: { try Blocklist.builtIn.contains($0) },
                        beforeFirst: {
                            for offset in from..<raw.count {
                                switch change {
                                case "zeroed": raw[offset] = 0
                                case "LFs added": if offset % 3 == 0 { raw[offset] = 0x0A }
                                case "LFs removed": if raw[offset] == 0x0A { raw[offset] = 0x41 }
                                default: raw[offset] = UInt8(truncatingIfNeeded: random.next())
                                }
                            }
                        },
                        { finding in
                            seen += 1
                            #expect(finding.line >= 0, "round \(round)")
                        })
                }
            }
            #expect(seen > 0, "round \(round): findings were handed on")
        }
    }

    @Test("line starts found in bytes that another program changes are always ascending and within the bytes")
    func lineStartsStayOrdered() {
        // The two searches of LineIndex see different bytes when a thread changes them
        // meanwhile: what matters is that every span made from the starts is a valid range.
        var random = SeededRandom(seed: 99)
        for _ in 0..<20 {
            var bytes = (0..<200_000).map { _ in random.next() % 9 == 0 ? UInt8(0x0A) : UInt8(0x61) }
            bytes.withUnsafeMutableBytes { raw in
                /// The bytes, for the thread that changes them (as another process changes a mapping).
                final class Shared: @unchecked Sendable {
                    let raw: UnsafeMutableRawBufferPointer
                    let done = Atomic<Bool>(false)
                    let stopped = Atomic<Bool>(false)
                    init(_ raw: UnsafeMutableRawBufferPointer) { self.raw = raw }
                }
                let shared = Shared(raw)
                let changer = Thread {
                    var random = SeededRandom(seed: 5)
                    while !shared.done.load(ordering: .relaxed) {
                        let at = Int(random.next() % UInt64(shared.raw.count))
                        shared.raw[at] = shared.raw[at] == 0x0A ? 0x61 : 0x0A
                    }
                    shared.stopped.store(true, ordering: .releasing)
                }
                changer.start()
                let starts = Parallel.$testPieceCount.withValue(4) {
                    LineIndex.lineStarts(of: UnsafeRawBufferPointer(raw))
                }
                shared.done.store(true, ordering: .relaxed)
                while !shared.stopped.load(ordering: .acquiring) { usleep(1000) }  // before the bytes go
                #expect(zip(starts, starts.dropFirst()).allSatisfy { $0 <= $1 })
                #expect(starts.allSatisfy { $0 >= 0 && $0 <= raw.count })
            }
        }
    }
}
