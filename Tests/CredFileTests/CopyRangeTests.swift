import CredFileTestSupport
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// A rewrite copies the stretches of the new file that are stretches of the old one
// inside the kernel (copy_file_range), from the file it read under the lock. These
// tests hold the result to the bytes the change was computed from.

@Suite("Rewrites copy unchanged stretches from the file read")
struct CopyRangeTests {
    /// A file of `count` lines `userNNNNNN,passwordNNNNNN`.
    static func lines(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for i in 0..<count { bytes += Array("user\(String(format: "%06d", i)),password\(i)\n".utf8) }
        return bytes
    }

    @Test("a one-user change of a large file: the new file is exactly the rendered bytes")
    func largeChange() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/big.txt"
            let original = Self.lines(60_000)  // ~1.5 MB: stretches far above the 64 KiB gathering buffer
            try writeBytes(path, original)
            let store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1, minimumRounds: 1))
            #expect(try store.remove(username: "user030000") == 1)
            try store.changePassword(username: "user000001", to: "a-new-password-1")
            try store.changePassword(username: "user059999", to: "another-one-twenty-two")
            let result = try readBytes(path)
            var expected = CredentialFile(bytes: original)
            var changes = CredentialFile.Changes()
            changes.remove(expected.firstEntry(named: "user030000")!)
            expected = CredentialFile(bytes: try expected.render(applying: changes))
            let file = CredentialFile(bytes: result)
            // Everything but the two new hashes is the original, byte for byte.
            let kept = file.lines.filter {
                !["user000001", "user059999"].contains(String(decoding: $0.entry!.username, as: UTF8.self))
            }
            let expectedKept = expected.lines.filter {
                !["user000001", "user059999"].contains(String(decoding: $0.entry!.username, as: UTF8.self))
            }
            #expect(kept.map { Array($0.content) } == expectedKept.map { Array($0.content) })
            #expect(file.lineCount == 59_999 && result.count > original.count)
            #expect(try store.authenticate(username: "user059999", password: "another-one-twenty-two"))
        }
    }

    @Test(
        "a file changed in place while the change is computed: the new file holds the bytes that were read, not a mix")
    func changedInPlace() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/changing.txt"
            let original = Self.lines(20_000)  // below the mapping minimum: read into memory
            #expect(original.count < FileReader.mappingMinimum)
            try writeBytes(path, original)
            let newLine = Array("inserted,line\n".utf8)
            let cut = (100_000, 100_000 + 300)
            try AtomicWriter(path: path).rewriteSplicing(content: { current in
                let current = try #require(current)
                #expect(!current.isMapped)
                Self.overwriteInPlace(path, size: original.count)
                let content: Splice.Content = { sink in
                    try sink(.original(0..<cut.0))
                    try sink(.new(newLine[...]))
                    try sink(.original(cut.1..<current.count))
                }
                return (content, ())
            })
            let expected = Array(original[..<cut.0]) + newLine + Array(original[cut.1...])
            #expect(try readBytes(path) == expected)
        }
    }

    /// Another program rewrites the file in place (same inode, same size) with X's.
    static func overwriteInPlace(_ path: String, size: Int) {
        let fd = open(path, O_WRONLY)
        let other = [UInt8](repeating: UInt8(ascii: "X"), count: size)
        #expect(pwrite(fd, other, other.count, 0) == other.count)
        close(fd)
    }

    @Test(
        "a mapped file changed in place while the change is computed: the change runs again on the file as it is now")
    func mappedChangedInPlace() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/changing.txt"
            let original = Self.lines(100_000)  // ~2.4 MB: mapped
            #expect(original.count >= FileReader.mappingMinimum)
            try writeBytes(path, original)
            var seen: [(mapped: Bool, first: UInt8)] = []
            let cut = (100_000, 100_000 + 300)
            try AtomicWriter(path: path).rewriteSplicing(content: { current in
                let current = try #require(current)
                seen.append((current.isMapped, current[0]))
                if seen.count == 1 { Self.overwriteInPlace(path, size: original.count) }
                let content: Splice.Content = { sink in
                    try sink(.original(0..<cut.0))
                    try sink(.new(Array("inserted,line\n".utf8)[...]))
                    try sink(.original(cut.1..<current.count))
                }
                return (content, ())
            })
            // First the mapping (of the file as it was), then the bytes read again.
            #expect(seen.map(\.mapped) == [true, false])
            #expect(seen.map(\.first) == [UInt8(ascii: "u"), UInt8(ascii: "X")])
            let now = [UInt8](repeating: UInt8(ascii: "X"), count: original.count)
            #expect(try readBytes(path) == Array(now[..<cut.0]) + Array("inserted,line\n".utf8) + Array(now[cut.1...]))
        }
    }

    @Test("a mapped file truncated in place while the change is computed: no SIGBUS, the change runs again")
    func mappedTruncatedInPlace() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/shrinking.txt"
            let original = Self.lines(100_000)
            try writeBytes(path, original)
            let store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1, minimumRounds: 1))
            var calls = 0
            let removed = try store.rewrite { file in
                calls += 1
                if calls == 1 {
                    #expect(file.source.isMapped)
                    #expect(truncate(path, 4096) == 0)  // the rest of the mapping is past the end now
                }
                // Reads the whole file: past the new end on the first call.
                let lines = file.entries(named: "user099999")
                var changes = CredentialFile.Changes()
                lines.forEach { changes.remove($0) }
                return (changes, lines.count)
            }
            #expect(calls == 2)
            #expect(removed == 0)
            #expect(try readBytes(path) == Array(original[..<4096]))
        }
    }

    @Test("a backup is a copy of the file as read")
    func backup() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/kept.txt"
            let original = Self.lines(30_000)
            try writeBytes(path, original)
            try AtomicWriter(path: path, keepsBackup: true).rewrite { current in (Array(current!.prefix(10)), ()) }
            #expect(try readBytes(path + ".bak") == original)
            #expect(try readBytes(path) == Array(original.prefix(10)))
        }
    }
}
