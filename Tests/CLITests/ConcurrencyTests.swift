import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// Many writers at once, as separate processes (the real binary) and as threads of one
// process (the library): every change is kept, because every rewrite happens under one
// flock on the sidecar `FILE.lock` of the resolved path (SPEC §4).

/// Loops of `credfile` commands in `/bin/sh`: one shell per writer keeps process spawning
/// sane. The passwords are made inside the shell and reach credfile on standard input
/// (a here-document), never on its command line.
enum WriterScripts {
    /// `$1` = writer, `$2` = count, `$3` = FILE: adds `user<w>_<i>` with password
    /// `Sekr3t-<w>-<i>` for i in 0..<count.
    static let adds = """
        i=0
        while [ "$i" -lt "$2" ]; do
          "$CREDFILE" add --iterations 1 "$3" "user$1_$i" <<EOF || echo "FAIL add user$1_$i $?"
        \(Canary.marker)-$1-$i
        EOF
          i=$((i + 1))
        done
        """

    /// `$1` = writer, `$2` = count, `$3` = FILE: for each seeded `seed<w>_<n>`, by n % 5:
    /// 0 passwd (hashed), 1 delete, 2 passwd --plaintext, 3 delete then add again, 4 nothing;
    /// and after each, add `new<w>_<n>`.
    static let mixed = """
        n=0
        while [ "$n" -lt "$2" ]; do
          u="seed$1_$n"
          case $((n % 5)) in
            0) "$CREDFILE" passwd --iterations 1 "$3" "$u" <<EOF >/dev/null || echo "FAIL passwd $u $?"
        \(Canary.marker)-hashed-$1-$n
        EOF
               ;;
            1) "$CREDFILE" delete "$3" "$u" >/dev/null || echo "FAIL delete $u $?" ;;
            2) "$CREDFILE" passwd --plaintext "$3" "$u" <<EOF >/dev/null || echo "FAIL passwd --plaintext $u $?"
        \(Canary.marker)-plain-$1-$n
        EOF
               ;;
            3) "$CREDFILE" delete "$3" "$u" >/dev/null || echo "FAIL delete $u $?"
               "$CREDFILE" add --iterations 1 "$3" "$u" <<EOF || echo "FAIL add again $u $?"
        \(Canary.marker)-again-$1-$n
        EOF
               ;;
          esac
          "$CREDFILE" add --iterations 1 "$3" "new$1_$n" <<EOF || echo "FAIL add new$1_$n $?"
        \(Canary.marker)-added-$1-$n
        EOF
          n=$((n + 1))
        done
        """
}

/// Waits for every child, reading `path` meanwhile: a reader takes no lock and must
/// always see a whole file (SPEC §4), here: one that ends with a line ending (or with
/// `unterminatedEnd`, the seed's last line before anything was appended) and never has
/// fewer lines than before when writers only append (`growing`).
func waitReading(
    _ children: [ChildProcess], path: String, growing: Bool, unterminatedEnd: [UInt8]? = nil
) throws -> (results: [ProcessResult], reads: Int) {
    var reads = 0
    var lastCount = 0
    while children.contains(where: { $0.isRunning }) {
        if let data = FileManager.default.contents(atPath: path), !data.isEmpty {
            reads += 1
            let whole = data.last == 0x0A || unterminatedEnd.map { data.suffix($0.count).elementsEqual($0) } == true
            #expect(whole, "a reader saw a file cut in the middle of a line")
            let count = data.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
            if growing {
                #expect(count >= lastCount, "a reader saw lines disappear")
                lastCount = count
            }
        }
        usleep(20_000)
    }
    return (try children.map { try $0.checkedWait() }, reads)
}

@Suite("Concurrency: writers in parallel processes and threads")
struct ConcurrencyTests {
    @Test("4 processes × 250 adds at once: all 1,000 users present, each verifies, check is clean")
    func fourProcessesAdd() throws {
        try withTemporaryDirectory(onTmpfs: true) { dir in
            let path = dir.file("creds.txt")
            let writers = 4
            let perWriter = 250
            let children = try (0..<writers).map { try CLI.shell(WriterScripts.adds, ["\($0)", "\(perWriter)", path]) }
            let (results, reads) = try waitReading(children, path: path, growing: true)
            for result in results {
                #expect(result.status == 0, "\(result.stdout)")
                #expect(!result.stdout.contains("FAIL"), "\(result.stdout)")
                #expect(result.diagnosticsWellFormed)
            }
            #expect(reads > 0)

            let file = CredentialFile(bytes: try readBytes(path))
            #expect(file.lineCount == writers * perWriter)
            let store = CredentialStore(path: path, policy: oneRound)
            var names = Set<String>()
            for line in file.lines {
                guard let entry = line.entry, case .pbkdf2 = entry.secret, let name = entry.usernameText else {
                    Issue.record("line \(line.number) is not a hashed entry")
                    continue
                }
                names.insert(name)
            }
            let expected = Set((0..<writers).flatMap { w in (0..<perWriter).map { "user\(w)_\($0)" } })
            #expect(names == expected)
            for w in 0..<writers {
                for i in 0..<perWriter {
                    #expect(try store.authenticate(username: "user\(w)_\(i)", password: "\(Canary.marker)-\(w)-\(i)"))
                }
            }
            #expect(try !store.authenticate(username: "user0_0", password: "\(Canary.marker)-1-0"))
            let check = try CLI.run(["check", path])
            #expect(check.status == 0, "\(check)")
            #expect(!check.stdout.contains("error"), "\(check)")
            #expect(try dir.names() == ["creds.txt", "creds.txt.lock"])
        }
    }

    @Test("4 processes mixing add, passwd, passwd --plaintext and delete on a seeded file: the predicted file")
    func fourProcessesMixed() throws {
        try withTemporaryDirectory(onTmpfs: true) { dir in
            let path = dir.file("creds.txt")
            let writers = 4
            let perWriter = 25
            // Seeded lines interleave the writers, so neighbouring lines belong to
            // different processes; every fifth line ends with CRLF; the file starts with
            // a BOM and ends with a comment without a line ending.
            struct Seeded {
                let writer: Int
                let n: Int
                let bytes: [UInt8]
                var name: String { "seed\(writer)_\(n)" }
                var crlf: Bool { bytes.suffix(2) == [0x0D, 0x0A] }
            }
            var seeded: [Seeded] = []
            for n in 0..<perWriter {
                for w in 0..<writers {
                    let ending = (n + w) % 5 == 0 ? "\r\n" : "\n"
                    seeded.append(
                        Seeded(
                            writer: w, n: n, bytes: Array("seed\(w)_\(n),\(Canary.marker)-seed-\(w)-\(n)\(ending)".utf8)
                        ))
                }
            }
            let header = CredentialFile.bom + Array("# seeded for the mixed test\n\n".utf8)
            let trailer = Array("# end of the seed, without a line ending".utf8)
            try writeBytes(path, header + seeded.flatMap(\.bytes) + trailer)

            let children = try (0..<writers).map {
                try CLI.shell(WriterScripts.mixed, ["\($0)", "\(perWriter)", path])
            }
            let (results, _) = try waitReading(children, path: path, growing: false, unterminatedEnd: trailer)
            for result in results {
                #expect(result.status == 0, "\(result.stdout)")
                #expect(!result.stdout.contains("FAIL"), "\(result.stdout)")
                #expect(result.diagnosticsWellFormed)
            }

            // The prediction: the seeded lines that stay in place, in order, then the
            // trailer with one LF added, then the appended lines.
            let lines = rawLines(try readBytes(path))
            let headerLines = rawLines(header)
            let kept = seeded.filter { [0, 2, 4].contains($0.n % 5) }.count
            let readded = seeded.filter { $0.n % 5 == 3 }.count
            try #require(lines.count == headerLines.count + kept + 1 + writers * perWriter + readded)
            #expect(Array(lines.prefix(headerLines.count)) == headerLines)
            var index = headerLines.count
            for seed in seeded {
                let password = { (kind: String) in "\(Canary.marker)-\(kind)-\(seed.writer)-\(seed.n)" }
                let ending: [UInt8] = seed.crlf ? [0x0D, 0x0A] : [0x0A]
                switch seed.n % 5 {
                case 1, 3: continue  // deleted (and, for 3, appended again below)
                case 4:
                    #expect(lines[index] == seed.bytes, "\(seed.name) changed")
                case 2:
                    #expect(lines[index] == Array("\(seed.name),\(password("plain"))".utf8) + ending, "\(seed.name)")
                default:
                    let line = lines[index]
                    let head = Array("\(seed.name),".utf8)
                    #expect(line.starts(with: head) && line.suffix(ending.count).elementsEqual(ending), "\(seed.name)")
                    let hash = try PasswordHash(parsing: line.dropFirst(head.count).dropLast(ending.count))
                    #expect(try hash.verify(Password(password("hashed"))), "\(seed.name)")
                }
                index += 1
            }
            #expect(lines[index] == trailer + [0x0A])
            index += 1

            // Appended: each writer's lines in the order that writer ran its commands.
            let appended = Array(lines[index...])
            var byWriter: [Int: [String]] = [:]
            let store = CredentialStore(path: path, policy: oneRound)
            for line in appended {
                let text = line.text
                guard let comma = text.firstIndex(of: ","), text.hasSuffix("\n"), !text.hasSuffix("\r\n") else {
                    Issue.record("appended line is not name,hash LF")
                    continue
                }
                let name = String(text[..<comma])
                let writer = Int(String(name.drop { !$0.isNumber }.prefix { $0 != "_" })) ?? -1
                byWriter[writer, default: []].append(name)
            }
            for w in 0..<writers {
                var expected: [String] = []
                for n in 0..<perWriter {
                    if n % 5 == 3 { expected.append("seed\(w)_\(n)") }
                    expected.append("new\(w)_\(n)")
                }
                #expect(byWriter[w] == expected, "writer \(w)")
                for n in 0..<perWriter {
                    #expect(
                        try store.authenticate(username: "new\(w)_\(n)", password: "\(Canary.marker)-added-\(w)-\(n)"))
                    let seedName = "seed\(w)_\(n)"
                    switch n % 5 {
                    case 0:
                        #expect(
                            try store.authenticate(username: seedName, password: "\(Canary.marker)-hashed-\(w)-\(n)"))
                    case 1: #expect(try store.read().entries(named: seedName).isEmpty)
                    case 2:
                        #expect(
                            try store.authenticate(username: seedName, password: "\(Canary.marker)-plain-\(w)-\(n)"))
                    case 3:
                        #expect(
                            try store.authenticate(username: seedName, password: "\(Canary.marker)-again-\(w)-\(n)"))
                    default:
                        #expect(try store.authenticate(username: seedName, password: "\(Canary.marker)-seed-\(w)-\(n)"))
                    }
                }
            }
            #expect(appended.count == writers * (perWriter + perWriter / 5))
            let check = try CLI.run(["check", path])
            #expect(check.status == 0, "\(check)")
            #expect(try dir.temporaryFiles(of: "creds.txt").isEmpty)
        }
    }

    @Test("A writer through a symlink and one through the real path serialize: no user lost")
    func symlinkAndRealPath() throws {
        try withTemporaryDirectory(onTmpfs: true) { dir in
            try FileManager.default.createDirectory(atPath: dir.file("real"), withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: dir.file("other"), withIntermediateDirectories: false)
            let real = dir.file("real/creds.txt")
            let link = dir.file("other/link.txt")
            try writeText(real, "# shared\n")
            guard symlink(real, link) == 0 else { throw HarnessError("symlink") }
            let perWriter = 60
            // Three ways to the same file: the link, the real path, and the real path
            // with a detour through "..": all must lock the same FILE.lock.
            let paths = [link, real, dir.file("other/../real/./creds.txt")]
            let children = try paths.enumerated().map {
                try CLI.shell(WriterScripts.adds, ["\($0.offset)", "\(perWriter)", $0.element])
            }
            let (results, _) = try waitReading(children, path: real, growing: true)
            for result in results {
                #expect(result.status == 0 && !result.stdout.contains("FAIL"), "\(result.stdout)")
            }
            #expect(try isSymlink(link))
            let file = CredentialFile(bytes: try readBytes(real))
            #expect(file.lineCount == 1 + paths.count * perWriter)
            #expect(Set(file.effectiveEntries().compactMap { $0.entry?.usernameText }).count == paths.count * perWriter)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("other")) == ["link.txt"])
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: dir.file("real")).sorted() == [
                    "creds.txt", "creds.txt.lock",
                ])
        }
    }

    @Test("Threads of one process serialize too (each flock is on its own open file description)")
    func threadsInOneProcess() throws {
        try withTemporaryDirectory(onTmpfs: true) { dir in
            let path = dir.file("creds.txt")
            let threads = 4
            let perThread = 40
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                let store = CredentialStore(path: path, policy: oneRound)
                for i in 0..<perThread {
                    do {
                        try store.register(username: "t\(t)_\(i)", password: "\(Canary.marker)-t-\(t)-\(i)")
                        if i % 4 == 0 {
                            try store.changePassword(username: "t\(t)_\(i)", to: "\(Canary.marker)-t2-\(t)-\(i)")
                        }
                        if i % 4 == 1 { try store.remove(username: "t\(t)_\(i)") }
                    } catch {
                        failures.withLock { $0.append("t\(t)_\(i): \(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            let store = CredentialStore(path: path, policy: oneRound)
            let file = try store.read()
            #expect(file.lineCount == threads * (perThread - perThread / 4))
            for t in 0..<threads {
                for i in 0..<perThread {
                    let name = "t\(t)_\(i)"
                    switch i % 4 {
                    case 0: #expect(try store.authenticate(username: name, password: "\(Canary.marker)-t2-\(t)-\(i)"))
                    case 1: #expect(file.firstEntry(named: name) == nil)
                    default: #expect(try store.authenticate(username: name, password: "\(Canary.marker)-t-\(t)-\(i)"))
                    }
                }
            }
            #expect(file.findings(policy: oneRound).filter { $0.severity == .error }.isEmpty)
        }
    }
}
