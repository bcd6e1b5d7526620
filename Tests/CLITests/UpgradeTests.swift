import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// `credfile upgrade` and upgrade-on-login on real files: every plaintext entry hashed
// (shadowed duplicates too), every other line byte for byte, idempotent, passlib-compatible,
// safe against writers that run meanwhile and against kill -9.

/// A legacy file with everything an upgrade meets.
struct LegacyFile {
    /// (line, password of the entry when it is a plaintext or hashed entry whose password we know)
    let lines: [(text: String, password: String?)]
    var bytes: [UInt8] { Array(lines.map(\.text).joined().utf8) }
    /// Indices of the plaintext entries (the lines an upgrade must change).
    let plaintextIndices: [Int]
    /// 1-based numbers of the malformed lines.
    let malformedLineNumbers: [Int]
    /// username → password of its first entry, for every user that logs in.
    let logins: [(String, String)]

    static func make() throws -> LegacyFile {
        let hashed = try PasswordHash(hashing: Password(Canary.password("hashed")), policy: policy(rounds: 1000)).string
        let hashed512 = try PasswordHash(
            hashing: Password(Canary.password("h512")), policy: policy(rounds: 1000, algorithm: .sha512)
        ).string
        let nfd = Canary.password("cafe\u{301}")  // decomposed é: hashed as NFC
        let lines: [(String, String?)] = [
            ("\u{FEFF}# legacy users, from the seed app\r\n", nil),  // 0
            ("valencia,\(Canary.password("valencia"))\r\n", Canary.password("valencia")),  // 1 plaintext
            ("\n", nil),  // 2
            ("usuario2,\(Canary.password("usuario2"))\n", Canary.password("usuario2")),  // 3 plaintext
            ("  \t\r\n", nil),  // 4 blank
            ("# another comment\n", nil),  // 5
            ("dup,\(Canary.password("dup1"))\n", Canary.password("dup1")),  // 6 plaintext
            ("dup,\(Canary.password("dup2"))\r\n", Canary.password("dup2")),  // 7 shadowed plaintext
            (",\(Canary.password("noname"))\n", nil),  // 8 malformed: empty username (line 9)
            ("ctl,\(Canary.password("c"))\u{01}tl\n", nil),  // 9 malformed: control byte (line 10)
            ("badhash,$pbkdf2-sha256$xx$bad$bad\n", nil),  // 10 malformed hash (line 11)
            ("nocomma-\(Canary.password("n"))\n", nil),  // 11 malformed: no comma (line 12)
            ("phpass,$H$9abcdefghijklmnopqrstuu\n", nil),  // 12 unsupported
            ("ldap,{MD5}\(Canary.marker)AAAA\n", nil),  // 13 unsupported
            ("hashed,\(hashed)\n", Canary.password("hashed")),  // 14 already hashed (weak)
            ("hashed512,\(hashed512)\r\n", Canary.password("h512")),  // 15 already hashed (weak)
            ("josé,\(nfd)\n", nfd),  // 16 plaintext, not NFC
            ("comma,\(Canary.password("a,b,c"))\n", Canary.password("a,b,c")),  // 17 plaintext with commas
            ("spaces,\t \(Canary.password("sp")) \n", "\t \(Canary.password("sp")) "),  // 18 plaintext, blanks kept
            ("last,\(Canary.password("last"))", Canary.password("last")),  // 19 plaintext, no LF
        ]
        return LegacyFile(
            lines: lines.map { ($0.0, $0.1) },
            plaintextIndices: [1, 3, 6, 7, 16, 17, 18, 19],
            malformedLineNumbers: [9, 10, 11, 12],
            logins: [
                ("valencia", Canary.password("valencia")), ("usuario2", Canary.password("usuario2")),
                ("dup", Canary.password("dup1")), ("hashed", Canary.password("hashed")),
                ("hashed512", Canary.password("h512")), ("josé", nfd), ("josé", Canary.password("caf\u{E9}")),
                ("jose\u{301}", Canary.password("caf\u{E9}")), ("comma", Canary.password("a,b,c")),
                ("spaces", "\t \(Canary.password("sp")) "), ("last", Canary.password("last")),
            ])
    }

    /// Checks that `new` is this file upgraded with `algorithm` and `rounds`: plaintext
    /// lines hashed (username bytes and ending kept, the hash verifies the old password),
    /// every other line byte for byte. Returns (hash, password) of each new hash.
    @discardableResult
    func expectUpgraded(
        _ new: [UInt8], algorithm: HashAlgorithm = .sha256, rounds: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [(hash: String, password: String)] {
        let old = rawLines(bytes)
        let after = rawLines(new)
        try #require(old.count == after.count, "line count changed", sourceLocation: sourceLocation)
        var pairs: [(String, String)] = []
        for index in old.indices {
            guard plaintextIndices.contains(index) else {
                #expect(after[index] == old[index], "line \(index + 1) changed", sourceLocation: sourceLocation)
                continue
            }
            let secret = expectReplacedLine(
                old[index], after[index], "line \(index + 1)", sourceLocation: sourceLocation)
            let hash = try PasswordHash(parsing: secret)
            #expect(hash.algorithm == algorithm && hash.rounds == rounds, sourceLocation: sourceLocation)
            let password = try #require(lines[index].password)
            #expect(try hash.verify(Password(password)), "line \(index + 1)", sourceLocation: sourceLocation)
            pairs.append((String(decoding: secret, as: UTF8.self), password))
        }
        return pairs
    }
}

@Suite("Upgrade: credfile upgrade and upgrade-on-login", .serialized)
struct UpgradeTests {
    // MARK: The legacy file

    @Test(
        "upgrade hashes every plaintext entry (shadowed ones too), keeps every other byte, and a rerun changes nothing")
    func upgradeLegacyFile() throws {
        let legacy = try LegacyFile.make()
        try withTemporaryDirectory { dir in
            let path = dir.file("usuarios.txt")
            try writeBytes(path, legacy.bytes)
            let before = CredentialFile(bytes: legacy.bytes).findings(policy: try policy(rounds: 1000))
            #expect(before.contains { $0.message.contains("entries hold a plaintext password") })

            let result = try CLI.run(["upgrade", "--iterations", "1000", path])
            #expect(result.status == 0, "\(result)")
            let stdout = result.stdout.split(separator: "\n").map(String.init)
            #expect(stdout.count == 3, "\(result)")
            #expect(
                stdout.first?.hasPrefix("upgraded 8 entries in ") == true
                    && stdout.first?.hasSuffix(" s (2 already hashed)") == true)
            #expect(
                stdout.dropFirst().first
                    == "malformed entries left as they are (they may hold a plaintext password) at lines 9, 10, 11, 12")
            #expect(stdout.last == "2 weak hashes left (they are rehashed at the next login with --upgrade)")

            let upgraded = try readBytes(path)
            try legacy.expectUpgraded(upgraded, rounds: 1000)
            let store = CredentialStore(path: path, policy: try policy(rounds: 1000))
            for (user, password) in legacy.logins {
                #expect(try store.authenticate(username: user, password: password), "\(user) cannot log in")
            }
            #expect(
                try !store.authenticate(username: "dup", password: Canary.password("dup2")),
                "a shadowed entry logged in")
            #expect(try !store.authenticate(username: "valencia", password: Canary.password("usuario2")))

            // No plaintext is left: not in the findings, and not in any line, shadowed or not.
            let after = try store.findings()
            #expect(!after.contains { $0.message.contains("plaintext") }, "\(after)")
            for line in try store.read().lines {
                if case .plaintext? = line.entry?.secret { Issue.record("line \(line.number) is still plaintext") }
            }
            // The errors are exactly the ones there were.
            #expect(after.filter { $0.severity == .error } == before.filter { $0.severity == .error })
            #expect(after.filter { $0.severity == .error }.map(\.line) == [8, 9, 10, 11, 12, 13, 14])

            // A second run finds nothing to do and does not even rewrite the file.
            let inode = try statInfo(path).st_ino
            let again = try CLI.run(["upgrade", "--iterations", "1000", path])
            #expect(again.status == 0, "\(again)")
            #expect(again.stdout.hasPrefix("nothing to upgrade: no plaintext entries\n"), "\(again)")
            #expect(try readBytes(path) == upgraded)
            #expect(try statInfo(path).st_ino == inode)
            #expect(try dir.names() == ["usuarios.txt", "usuarios.txt.lock"])
        }
    }

    @Test("upgrade --json: every summary field")
    func upgradeJSON() throws {
        let legacy = try LegacyFile.make()
        try withTemporaryDirectory { dir in
            let path = dir.file("usuarios.txt")
            try writeBytes(path, legacy.bytes)
            let result = try CLI.run(["upgrade", "--json", "--iterations", "1000", "--jobs", "2", path])
            #expect(result.status == 0, "\(result)")
            let summary = try jsonObject(result.stdout)
            #expect(
                Set(summary.keys) == [
                    "upgraded", "skipped", "alreadyHashed", "weak", "unsupported", "malformedLines", "dryRun",
                    "seconds",
                    "rate", "batches", "left", "stopped",
                ])
            #expect(summary["left"] as? Int == 0)
            #expect(summary["stopped"] as? Bool == false)
            #expect(summary["batches"] as? Int == 1, "8 entries fit one batch")
            #expect((summary["rate"] as? Double).map { $0 > 0 } == true)
            #expect(summary["upgraded"] as? Int == 8)
            #expect(summary["skipped"] as? Int == 0)
            #expect(summary["alreadyHashed"] as? Int == 2)
            #expect(summary["weak"] as? Int == 2)
            #expect(summary["unsupported"] as? Int == 2)
            #expect(summary["malformedLines"] as? [Int] == legacy.malformedLineNumbers)
            #expect(summary["dryRun"] as? Bool == false)
            #expect((summary["seconds"] as? Double).map { $0 >= 0 } == true)
            try legacy.expectUpgraded(readBytes(path), rounds: 1000)

            let again = try jsonObject(try CLI.run(["upgrade", "--json", "--iterations", "1000", path]).stdout)
            #expect(again["upgraded"] as? Int == 0)
            #expect(again["alreadyHashed"] as? Int == 10)
        }
    }

    @Test("upgrade --dry-run writes nothing, not even the lock file, and says what it would do")
    func upgradeDryRun() throws {
        let legacy = try LegacyFile.make()
        try withTemporaryDirectory { dir in
            let path = dir.file("usuarios.txt")
            try writeBytes(path, legacy.bytes)
            let inode = try statInfo(path).st_ino
            let result = try CLI.run(["upgrade", "--dry-run", "--iterations", "1000", path])
            #expect(result.status == 0, "\(result)")
            #expect(
                result.stdout.hasPrefix("dry run: would upgrade 8 entries (2 already hashed); nothing written\n"),
                "\(result)")
            let json = try jsonObject(try CLI.run(["upgrade", "--dry-run", "--json", path]).stdout)
            #expect(json["dryRun"] as? Bool == true)
            #expect(json["upgraded"] as? Int == 8)
            #expect(json["malformedLines"] as? [Int] == legacy.malformedLineNumbers)
            #expect(try readBytes(path) == legacy.bytes)
            #expect(try statInfo(path).st_ino == inode)
            #expect(try dir.names() == ["usuarios.txt"])
            // The library's dry run too.
            let summary = try CredentialStore(path: path, policy: oneRound).upgrade(dryRun: true)
            #expect(summary.dryRun && summary.upgraded == 8 && summary.malformedLines == legacy.malformedLineNumbers)
            #expect(try readBytes(path) == legacy.bytes)
        }
    }

    @Test(
        "passlib verifies every hash an upgrade writes (SHA-256 and SHA-512)",
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote(ExternalTool.peerPython))))
    func passlibVerifiesUpgradedHashes() throws {
        let legacy = try LegacyFile.make()
        try withTemporaryDirectory { dir in
            var pairs: [(hash: String, password: String)] = []
            for algorithm in HashAlgorithm.allCases {
                let path = dir.file("usuarios-\(algorithm).txt")
                try writeBytes(path, legacy.bytes)
                let result = try CLI.run(["upgrade", "--iterations", "1000", "--algorithm", algorithm.rawValue, path])
                #expect(result.status == 0, "\(result)")
                pairs += try legacy.expectUpgraded(readBytes(path), algorithm: algorithm, rounds: 1000)
            }
            try #require(pairs.count == 2 * legacy.plaintextIndices.count)
            // Hashes and passwords go through a file, never the command line. passlib
            // hashes the password's UTF-8 as given, credfile its NFC form: pass NFC.
            let input = pairs.map { [$0.hash, $0.password.precomposedStringWithCanonicalMapping] }
            let data = try JSONSerialization.data(withJSONObject: input)
            try writeBytes(dir.file("pairs.json"), data)
            let script = """
                import json, sys
                from passlib.hash import pbkdf2_sha256, pbkdf2_sha512
                pairs = json.load(open(sys.argv[1], encoding="utf-8"))
                bad = [i for i, (h, p) in enumerate(pairs)
                       if not (pbkdf2_sha512 if h.startswith("$pbkdf2-sha512$") else pbkdf2_sha256).verify(p, h)]
                wrong = [i for i, (h, p) in enumerate(pairs)
                         if (pbkdf2_sha512 if h.startswith("$pbkdf2-sha512$") else pbkdf2_sha256).verify(p + "x", h)]
                print(len(pairs), "verified; failed:", bad, "accepted a wrong password:", wrong)
                sys.exit(1 if bad or wrong else 0)
                """
            let child = try ChildProcess.start(
                try ExternalTool.path(ExternalTool.peerPython), ["-c", script, dir.file("pairs.json")], stdin: [],
                environment: CLI.environment([:]))
            let result = try child.checkedWait()
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.hasPrefix("\(pairs.count) verified; failed: [] accepted a wrong password: []"))
        }
    }

    // MARK: Writers meanwhile

    @Test(
        "A user added and passwords changed during an upgrade of 20,000 lines are kept, never overwritten by stale hashes"
    )
    func writersDuringUpgrade() throws {
        try withTemporaryDirectory(onTmpfs: true) { dir in
            let path = dir.file("big.txt")
            let count = 20_000
            try writeText(path, (0..<count).map { String(format: "u%05d,\(Canary.marker)%05d\n", $0, $0) }.joined())
            let upgrade = try CLI.start(["upgrade", "--json", "--iterations", "100", "--jobs", "2", path])
            // Hashing runs on extra threads (DispatchQueue.concurrentPerform), after the
            // snapshot was read: wait until the upgrade has more than one thread.
            var hashing = false
            for _ in 0..<6000 where !hashing && upgrade.isRunning {
                usleep(10_000)
                hashing =
                    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(upgrade.pid)/task"))?.count ?? 0)
                    > 1
            }
            try #require(hashing, "the upgrade never started hashing")
            let writes: [([String], String)] = [
                (["add", "--plaintext", path, "during"], Canary.password("during") + "\n"),
                (["passwd", "--iterations", "100", path, "u00007"], Canary.password("changed") + "\n"),
                (["passwd", "--plaintext", path, "u00008"], Canary.password("changed-plain") + "\n"),
                (["delete", path, "u00009"], ""),
            ]
            for (arguments, stdin) in writes {
                let result = try CLI.run(arguments, stdin: stdin)
                #expect(result.status == 0, "\(arguments[0]): \(result)")
            }
            #expect(upgrade.isRunning, "the upgrade ended before the other writers: the overlap was not tested")
            let result = try upgrade.checkedWait()
            #expect(result.status == 0, "\(result)")
            let summary = try jsonObject(result.stdout)
            // Batches walk the file front to back and see each writer's work when they get
            // there; a hash made for bytes that changed meanwhile is dropped (skipped).
            let upgraded = try #require(summary["upgraded"] as? Int)
            let skipped = try #require(summary["skipped"] as? Int)
            #expect(upgraded >= count - 3 && skipped <= 3, "\(result)")
            let plaintext = try CredentialStore(path: path).read().lines.filter {
                if case .plaintext? = $0.entry?.secret { true } else { false }
            }
            #expect(summary["left"] as? Int == plaintext.count, "\(result)")
            #expect(plaintext.count <= 2, "only entries written after the walk passed may be plaintext")

            let store = CredentialStore(path: path, policy: try policy(rounds: 100))
            #expect(try store.authenticate(username: "during", password: Canary.password("during")))
            #expect(try store.authenticate(username: "u00007", password: Canary.password("changed")))
            #expect(try !store.authenticate(username: "u00007", password: "\(Canary.marker)00007"))
            #expect(try store.authenticate(username: "u00008", password: Canary.password("changed-plain")))
            #expect(try store.read().firstEntry(named: "u00009") == nil)
            let file = try store.read()
            #expect(file.lineCount == count)
            for line in file.lines where line.number != 9 && line.number <= count - 1 {
                let user = String(format: "u%05d", line.number - 1 + (line.number > 9 ? 1 : 0))
                #expect(line.content.starts(with: "\(user),$pbkdf2-sha256$100$".utf8), "line \(line.number)")
            }
            for n in stride(from: 0, to: count, by: 500) where ![7, 8, 9].contains(n) {
                #expect(
                    try store.authenticate(
                        username: String(format: "u%05d", n), password: String(format: "\(Canary.marker)%05d", n)))
            }
            #expect(try dir.temporaryFiles(of: "big.txt").isEmpty)
        }
    }

    @Test(
        "kill -9 while hashing, while committing a batch, or at random: every entry old or hashed, hashed ones a prefix (at most the batch in flight lost), and a rerun finishes",
        .enabled(if: isDebugBuild, "CREDFILE_UPGRADE_BATCH_SECONDS exists in debug builds only"))
    func killDuringUpgrade() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("users.txt")
            let count = 2_000
            // The entries, then 4 MB of comments: the file is large enough that writing it
            // takes a while (a window to kill in), while hashing stays cheap.
            let entries = Array(
                ("# users\r\n" + (0..<count).map { String(format: "u%04d,\(Canary.marker)%04d\n", $0, $0) }.joined())
                    .utf8)
            let trailer = Data(
                String(repeating: "# " + String(repeating: "c", count: 40_000) + "\n", count: 100).utf8)
            let old = Data(entries) + trailer
            let arguments = ["upgrade", "--iterations", "500", "--jobs", "2", path]
            // Many short batches, so kills land in every phase of many commits.
            let environment = ["CREDFILE_UPGRADE_BATCH_SECONDS": "0.02"]
            var rng = SeededRandom(seed: 0xDEAD_BEEF)

            /// Checks that every entry is its old line or a hash (500 rounds) of its password
            /// in place, that the hashed ones come first (batches commit front to back, so
            /// a kill loses only the batch in flight), and returns how many are hashed.
            func hashedPrefix(_ now: Data) throws -> Int {
                if now == old { return 0 }
                try #require(now.count > trailer.count && now.suffix(trailer.count) == trailer, "the comments changed")
                let before = rawLines(entries)
                let after = rawLines([UInt8](now.prefix(now.count - trailer.count)))
                try #require(before.count == after.count, "line count changed")
                #expect(after[0] == before[0])
                var hashed = 0
                for index in 1..<after.count {
                    let head = Array(String(format: "u%04d,", index - 1).utf8)
                    #expect(after[index].last == 0x0A)
                    if after[index] == before[index] { continue }
                    #expect(hashed == index - 1, "line \(index + 1) is hashed after a plaintext line")
                    #expect(after[index].starts(with: head + Array("$pbkdf2-sha256$500$".utf8)), "line \(index + 1)")
                    hashed += 1
                }
                for index in stride(from: 1, through: hashed, by: 97) {
                    let hash = try PasswordHash(parsing: after[index].dropFirst(6).dropLast())
                    #expect(
                        try hash.verify(Password(String(format: "\(Canary.marker)%04d", index - 1))),
                        "line \(index + 1)")
                }
                return hashed
            }

            // A whole run first: it works, and it times a run.
            try writeBytes(path, old)
            let first = try CLI.start(arguments, environment: environment)
            let whole = try first.checkedWait()
            var durations = [first.runningTime]
            #expect(whole.status == 0, "\(whole)")
            #expect(try hashedPrefix(readData(path)) == count)

            // Kill at a random instant, while hashing, or while a batch's temporary file is
            // written; count only kills that reached a running upgrade.
            var kills = 0, attempts = 0, unfinished = 0, killedInCommit = 0
            while kills < 9 && attempts < 90 {
                attempts += 1
                try writeBytes(path, old)
                let child = try CLI.start(arguments, environment: environment)
                var sent = false
                switch attempts % 3 {
                case 0:
                    let typical = durations.sorted()[durations.count / 2]
                    usleep(UInt32(Double.random(in: 0...typical, using: &rng) * 1_000_000))
                    sent = child.killNow()
                case 1:
                    // Hashing runs on extra threads.
                    while child.isRunning
                        && ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/task"))?.count
                            ?? 0) < 2
                    {
                        usleep(500)
                    }
                    usleep(UInt32(Double.random(in: 0...0.5, using: &rng) * durations[0] * 1_000_000))
                    sent = child.killNow()
                default:
                    // A commit: the temporary file of some batch (not always the first) exists.
                    let skip = Int.random(in: 0..<4, using: &rng)
                    var seen = 0
                    var inTemporary = false
                    while child.isRunning && !sent {
                        let present = (try? dir.temporaryFiles(of: "users.txt"))?.isEmpty == false
                        if present && !inTemporary {
                            if seen == skip { sent = child.killNow() }
                            seen += 1
                        }
                        inTemporary = present
                        usleep(200)
                    }
                    if sent { killedInCommit += 1 }
                }
                let result = try child.checkedWait()
                guard sent else {
                    durations.append(child.runningTime)
                    #expect(result.status == 0, "\(result)")
                    #expect(try hashedPrefix(readData(path)) == count)
                    continue
                }
                kills += 1
                if try hashedPrefix(readData(path)) < count { unfinished += 1 }
                // The rerun finishes the job and removes any stray temporary file.
                let rerun = try CLI.run(arguments, environment: environment)
                #expect(rerun.status == 0, "\(rerun)")
                #expect(try hashedPrefix(readData(path)) == count)
                #expect(try dir.temporaryFiles(of: "users.txt").isEmpty)
            }
            #expect(kills == 9, "only \(kills) kills reached a running upgrade in \(attempts) attempts")
            #expect(unfinished > 0, "no kill stopped an upgrade before its end")
            #expect(killedInCommit > 0, "no kill landed while a batch was being written")
            #expect(try CLI.run(["check", path]).status == 0)
        }
    }

    // MARK: Upgrade on login

    /// A file for upgrade-on-login, with a policy of 1000 rounds in mind.
    static func loginFile() throws -> [String] {
        func hash(_ password: String, _ rounds: Int, _ algorithm: HashAlgorithm = .sha256) throws -> String {
            try PasswordHash(hashing: Password(password), policy: policy(rounds: rounds, algorithm: algorithm)).string
        }
        return [
            "plain,\(Canary.password("plain"))\n",  // 0: plaintext
            "weak,\(try hash(Canary.password("weak"), 500))\n",  // 1: fewer rounds than the policy
            "strong,\(try hash(Canary.password("strong"), 2000))\r\n",  // 2: more rounds: kept
            "other,\(try hash(Canary.password("other"), 1000, .sha512))\n",  // 3: another algorithm
            "bad,$pbkdf2-sha256$1000$bad\n",  // 4: malformed
            "same,\(try hash(Canary.password("same"), 1000))\n",  // 5: exactly the policy: kept
            "last,\(Canary.password("last"))",  // 6: plaintext, no LF
        ]
    }

    /// (user, password, index of its line, whether a good login rehashes it)
    static let loginCases: [(String, String, Int, Bool)] = [
        ("plain", Canary.password("plain"), 0, true),
        ("weak", Canary.password("weak"), 1, true),
        ("strong", Canary.password("strong"), 2, false),
        ("other", Canary.password("other"), 3, true),
        ("same", Canary.password("same"), 5, false),
        ("last", Canary.password("last"), 6, true),
    ]

    @Test("verify --upgrade rehashes plaintext, fewer rounds and another algorithm after a good login; nothing else")
    func verifyUpgradeCLI() throws {
        let lines = try Self.loginFile()
        let original = Array(lines.joined().utf8)
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            for (user, password, index, rehashes) in Self.loginCases {
                try writeBytes(path, original)
                // Without --upgrade nothing is ever written.
                let plain = try CLI.run(["verify", "--iterations", "1000", path, user], stdin: password + "\n")
                #expect(plain.status == 0, "\(user): \(plain)")
                #expect(try readBytes(path) == original)
                // A wrong password changes nothing.
                let wrong = try CLI.run(
                    ["verify", "--upgrade", "--iterations", "1000", path, user], stdin: password + "x\n")
                #expect(wrong.status == 1, "\(user): \(wrong)")
                #expect(wrong.message == "credfile: Wrong username or password.\n")
                #expect(try readBytes(path) == original)
                // The right one upgrades when due.
                let good = try CLI.run(
                    ["verify", "--upgrade", "--iterations", "1000", path, user], stdin: password + "\n")
                #expect(good.status == 0, "\(user): \(good)")
                let now = try readBytes(path)
                if rehashes {
                    let secret = expectReplaced(old: original, new: now, index: index)
                    let hash = try PasswordHash(parsing: secret)
                    #expect(hash.algorithm == .sha256 && hash.rounds == 1000, "\(user)")
                    #expect(try hash.verify(Password(password)))
                } else {
                    #expect(now == original, "\(user) was rehashed")
                }
                let again = try CLI.run(
                    ["verify", "--upgrade", "--iterations", "1000", path, user], stdin: password + "\n")
                #expect(again.status == 0)
                #expect(try readBytes(path) == now, "\(user) was rehashed twice")
            }
            // Unknown users and malformed entries: denied, nothing written.
            try writeBytes(path, original)
            for (user, password) in [("nobody", Canary.password("plain")), ("bad", "bad"), ("plain", "")] {
                let result = try CLI.run(
                    ["verify", "--upgrade", "--iterations", "1000", path, user], stdin: password + "\n")
                #expect(result.status == 1 || (password.isEmpty && result.status == 2), "\(user): \(result)")
                #expect(try readBytes(path) == original)
            }
        }
    }

    @Test("CredentialStore.authenticate(upgradeOnSuccess:) upgrades exactly like verify --upgrade")
    func authenticateUpgradeLibrary() throws {
        let lines = try Self.loginFile()
        let original = Array(lines.joined().utf8)
        try withTemporaryDirectory { dir in
            let path = dir.file("creds.txt")
            let store = CredentialStore(path: path, policy: try policy(rounds: 1000))
            for (user, password, index, rehashes) in Self.loginCases {
                try writeBytes(path, original)
                #expect(try store.authenticate(username: user, password: password, upgradeOnSuccess: false))
                #expect(try readBytes(path) == original)
                #expect(try !store.authenticate(username: user, password: password + "x", upgradeOnSuccess: true))
                #expect(try readBytes(path) == original)
                let verification = try store.verify(
                    username: user, password: Password(password), upgradeOnSuccess: true)
                #expect(
                    verification.granted && verification.upgraded == rehashes && verification.upgradeError == nil,
                    "\(user)")
                let now = try readBytes(path)
                if rehashes {
                    let hash = try PasswordHash(parsing: expectReplaced(old: original, new: now, index: index))
                    #expect(hash.algorithm == .sha256 && hash.rounds == 1000)
                } else {
                    #expect(now == original)
                }
                #expect(try store.authenticate(username: user, password: password, upgradeOnSuccess: true))
                #expect(try readBytes(path) == now)
            }
            try writeBytes(path, original)
            #expect(try !store.authenticate(username: "bad", password: "bad", upgradeOnSuccess: true))
            #expect(try !store.authenticate(username: "nobody", password: "x", upgradeOnSuccess: true))
            #expect(try readBytes(path) == original)
            // A policy with fewer rounds never downgrades anything.
            let weakStore = CredentialStore(path: path, policy: try policy(rounds: 10))
            #expect(
                try weakStore.authenticate(username: "same", password: Canary.password("same"), upgradeOnSuccess: true))
            #expect(try readBytes(path) == original)
        }
    }

    @Test("The library's upgrade: progress reaches the total, and a second run writes nothing")
    func libraryUpgrade() throws {
        let legacy = try LegacyFile.make()
        try withTemporaryDirectory { dir in
            let path = dir.file("usuarios.txt")
            try writeBytes(path, legacy.bytes)
            let store = CredentialStore(path: path, policy: try policy(rounds: 1000))
            let last = ProgressRecorder()
            let summary = try store.upgrade(jobs: 2) { done, total in last.record(done, total) }
            #expect(summary.upgraded == 8 && summary.skipped == 0 && summary.alreadyHashed == 2)
            #expect(
                summary.malformedLines == legacy.malformedLineNumbers && summary.unsupported == 2 && summary.weak == 2)
            #expect(last.value == (8, 8))
            try legacy.expectUpgraded(readBytes(path), rounds: 1000)
            let bytes = try readBytes(path)
            let second = try store.upgrade()
            #expect(second.upgraded == 0 && second.alreadyHashed == 10)
            #expect(try readBytes(path) == bytes)
        }
    }
}

/// The last (done, total) a progress callback reported.
final class ProgressRecorder: @unchecked Sendable {  // ParallelHasher calls it one call at a time
    private(set) var value: (Int, Int) = (0, 0)
    func record(_ done: Int, _ total: Int) { value = (done, total) }
}
