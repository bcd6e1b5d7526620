import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §9 in the library: the guard policy's arithmetic, the log lines' escaping, and the
// guard database (throttling, lockout, reset, bounds, files) through the front door.
// The clock is real: the policies here use delays of a fraction of a second.
// Many processes at once are tested through the binary (CLITests/GuardCLITests.swift).

/// A store over a file with `bob` (hashed, 1 round) and `plain` (legacy plaintext),
/// guarded by `policy`, logging nowhere.
private func guardedStore(
    _ directory: TemporaryDirectory, policy guardPolicy: GuardPolicy, state: String? = nil
) throws -> CredentialStore {
    let path = directory.file("app.cred")
    try writeText(path, "plain,legacy-password-1\n")
    var store = CredentialStore(path: path, policy: try policy(rounds: 1))
    try store.register(username: "bob", password: Password("tangerine-river-stone"), storage: .hashed)
    store.loginGuard = try LoginGuard(
        credentialFile: path, state: state, policy: guardPolicy, log: .none, service: "test")
    return store
}

/// One login through the store's guard.
private func login(_ store: CredentialStore, _ user: String, _ password: String) throws -> CredentialStore.Verification
{
    try store.verify(username: user, password: Password(password), upgradeOnSuccess: false, client: "192.0.2.1")
}

@Suite("Guarding logins (SPEC §9): policy, log lines, guard database")
struct GuardTests {
    // MARK: Policy

    @Test("the delay: none for the free failures, then 1 s doubling, capped at max-delay")
    func delays() throws {
        let standard = GuardPolicy.standard
        #expect((0...5).map { standard.delay(afterFailures: $0) } == [0, 0, 0, 0, 0, 0])
        #expect((6...10).map { standard.delay(afterFailures: $0) } == [1, 2, 4, 8, 16])
        #expect(standard.delay(afterFailures: 15) == 512)
        #expect(standard.delay(afterFailures: 16) == 900)
        #expect(standard.delay(afterFailures: 99) == 900)
        let short = try GuardPolicy(freeFailures: 0, maximumFailures: 10, maximumDelay: 0.25)
        #expect(short.delay(afterFailures: 1) == 0.25)
        #expect(!short.locksOut(afterFailures: 9) && short.locksOut(afterFailures: 10))
    }

    @Test("max-failures above 100 (NIST's ceiling), below 1, and negative values are refused")
    func policyRanges() throws {
        #expect(try GuardPolicy(maximumFailures: 100).maximumFailures == 100)
        for bad in [101, 0, -1, Int.max] {
            #expect(throws: CredFileError.usage("")) { try GuardPolicy(maximumFailures: bad) }
        }
        #expect(throws: CredFileError.usage("")) { try GuardPolicy(freeFailures: -1) }
        #expect(throws: CredFileError.usage("")) { try GuardPolicy(freeFailures: 101) }
        #expect(throws: CredFileError.usage("")) { try GuardPolicy(maximumDelay: -1) }
        #expect(throws: CredFileError.usage("")) { try GuardPolicy(maximumDelay: .infinity) }
        #expect(throws: CredFileError.usage("")) { try GuardPolicy(maximumDelay: .nan) }
    }

    // MARK: Log lines

    @Test(
        "a value cannot forge a field: space, =, quote, semicolon and backslash as \\xHH, controls as \\u{…}",
        arguments: [
            ("eve rhost=192.0.2.66", "eve\\x20rhost\\x3D192.0.2.66"),
            ("a;b\"c\\d", "a\\x3Bb\\x22c\\x5Cd"),
            ("line\nbreak", "line\\u{a}break"),
            ("bidi\u{202E}x", "bidi\\u{202e}x"),
            ("José", "José"),
            ("", ""),
        ])
    func escaping(_ input: String, _ expected: String) {
        #expect(GuardLog.value(input) == expected)
    }

    @Test("bytes that are not UTF-8 are shown as \\xHH, and the lines have SPEC §9's exact shape")
    func lines() {
        #expect(GuardLog.value([0x4A, 0xE9, 0x20]) == "J\\xE9\\x20")
        #expect(
            GuardLog.failureLine(
                service: "pam", user: Array("bob".utf8), client: "203.0.113.9", file: "/etc/app.cred",
                reason: .wrongPassword)
                == "authentication failure; service=pam user=bob rhost=203.0.113.9 file=/etc/app.cred reason=wrong-password"
        )
        #expect(
            GuardLog.failureLine(
                service: "helper", user: Array("eve rhost=192.0.2.66".utf8), client: nil, file: "/a b",
                reason: .throttled)
                == "authentication failure; service=helper user=eve\\x20rhost\\x3D192.0.2.66 rhost= file=/a\\x20b reason=throttled"
        )
        #expect(
            GuardLog.successLine(service: "serve", user: Array("bob".utf8), client: "::1", file: "/etc/app.cred")
                == "authentication success; service=serve user=bob rhost=::1 file=/etc/app.cred")
        #expect(GuardLog.lockedOutLine(user: Array("bob".utf8), failures: 100) == "locked out; user=bob failures=100")
        #expect(
            LoginDenial.allCases.map(\.rawValue) == [
                "wrong-password", "unknown-user", "locked", "throttled", "locked-out", "malformed", "unsupported",
                "wrong-code", "second-factor-required", "not-in-group",
            ])
    }

    // MARK: Throttling and lockout

    @Test("after the free failures an early attempt is denied unchecked and not counted; waiting is enough")
    func throttling() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(
                directory, policy: try GuardPolicy(freeFailures: 2, maximumFailures: 100, maximumDelay: 60))
            let guardian = try #require(store.loginGuard)
            for _ in 0..<2 { #expect(try login(store, "bob", "wrong").denial == .wrongPassword) }
            // Free failures: the third attempt is checked at once (and fails).
            #expect(try login(store, "bob", "wrong").denial == .wrongPassword)
            #expect(try guardian.failureRecord(username: "bob")?.failures == 3)
            // After a 9th failure just now (written directly: the guard would not let 9
            // come so fast), the delay is 2^(9-2-1) = 64 s, capped at 60: an attempt now is
            // too early, even with the right password: denied unchecked and not counted.
            let now = LoginGuard.now()
            try guardian.database.insert([.init(name: Array("bob".utf8), count: 9, lastFailure: now, lockedOut: false)])
            let early = try login(store, "bob", "tangerine-river-stone")
            #expect(!early.granted && early.denial == .throttled)
            let record = try #require(try guardian.failureRecord(username: "bob"))
            #expect(record.failures == 9)
            #expect(record.throttledUntil.map { $0 - record.lastFailure } == 60)
            // The failure moved 61 s back (as if the client had waited): checked, granted, reset.
            try guardian.database.insert([
                .init(name: Array("bob".utf8), count: 9, lastFailure: now - 61_000, lockedOut: false)
            ])
            let later = try login(store, "bob", "tangerine-river-stone")
            #expect(later.granted && later.denial == nil)
            #expect(try guardian.failureRecord(username: "bob") == nil)
        }
    }

    @Test("the delay is measured on the real clock: after max-delay the next attempt is checked")
    func realClock() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(
                directory, policy: try GuardPolicy(freeFailures: 0, maximumFailures: 100, maximumDelay: 0.2))
            _ = try login(store, "bob", "wrong")
            usleep(250_000)  // waiting is always enough
            #expect(try login(store, "bob", "tangerine-river-stone").granted)
        }
    }

    @Test("unknown names are counted, throttled and locked out exactly as known ones")
    func unknownNames() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(
                directory, policy: try GuardPolicy(freeFailures: 1, maximumFailures: 3, maximumDelay: 0))
            let guardian = try #require(store.loginGuard)
            for user in ["bob", "nobody"] {
                let reasons = try (0..<4).map { _ in try login(store, user, "wrong").denial }
                let first: LoginDenial = user == "bob" ? .wrongPassword : .unknownUser
                #expect(reasons == [first, first, first, .lockedOut], "\(user)")
                #expect(try guardian.failureRecord(username: user)?.failures == 3)
                #expect(try guardian.failureRecord(username: user)?.isLockedOut == true)
            }
        }
    }

    @Test("a locked-out name is denied even with the right password until its failures are reset")
    func lockout() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(
                directory, policy: try GuardPolicy(freeFailures: 5, maximumFailures: 5, maximumDelay: 900))
            let guardian = try #require(store.loginGuard)
            for _ in 0..<5 { _ = try login(store, "bob", "wrong") }
            let denied = try login(store, "bob", "tangerine-river-stone")
            #expect(!denied.granted && denied.denial == .lockedOut)
            #expect(try guardian.failureRecords().map(\.failures) == [5])
            let cached = LoginGuard.CacheLookUp(holds: { true }, isOwner: { true })
            #expect(try guardian.cachedLogin(username: Array("bob".utf8), client: nil, cache: cached)?.granted == false)
            #expect(
                try guardian.cachedLogin(username: Array("plain".utf8), client: nil, cache: cached)?.granted == true)
            #expect(try guardian.resetFailures(username: "bob"))
            #expect(try login(store, "bob", "tangerine-river-stone").granted)
            #expect(try guardian.resetAllFailures() == 0)
        }
    }

    @Test("names are compared after NFC: an NFD name shares the NFC name's count")
    func normalizedNames() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(directory, policy: .standard)
            _ = try login(store, "Jos\u{E9}", "wrong")
            _ = try login(store, "Jose\u{301}", "wrong")
            #expect(try store.loginGuard?.failureRecord(username: "Jos\u{E9}")?.failures == 2)
        }
    }

    @Test("a throttled or locked-out answer never reads the credential file: it stands with the file unreadable")
    func throttledWithoutFile() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(
                directory, policy: try GuardPolicy(freeFailures: 0, maximumFailures: 100, maximumDelay: 60))
            // Ten failures a moment ago: throttled for a minute (recorded directly: the
            // guard would not count ten in a row so fast).
            try store.loginGuard?.database.insert(
                ["bob", "nobody"].map {
                    .init(name: Array($0.utf8), count: 10, lastFailure: LoginGuard.now(), lockedOut: false)
                })
            // A directory in the file's place: it exists, but any read of it fails.
            unlink(store.path)
            mkdir(store.path, 0o700)
            #expect(try login(store, "bob", "tangerine-river-stone").denial == .throttled)
            #expect(try login(store, "nobody", "x").denial == .throttled)
            // A check that cannot read the file is not counted against the name.
            _ = try store.loginGuard?.resetAllFailures()
            #expect(throws: CredFileError.self) { try login(store, "bob", "x") }
            #expect(try store.loginGuard?.failureRecord(username: "bob") == nil)
        }
    }

    @Test("locked-out, malformed, unsupported and plaintext denials carry their reasons")
    func reasons() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("r.cred")
            try writeText(path, "mal,$pbkdf2-sha256$x\nuns,{FOO}abc\nplain,secret-password\n")
            var store = CredentialStore(path: path, policy: try policy(rounds: 1))
            store.loginGuard = try LoginGuard(credentialFile: path, log: .none, service: "test")
            #expect(try login(store, "mal", "x").denial == .malformed)
            #expect(try login(store, "uns", "x").denial == .unsupported)
            #expect(try login(store, "plain", "x").denial == .wrongPassword)
            #expect(try login(store, "plain", "secret-password").granted)
        }
    }

    // MARK: The database

    @Test("the database: FILE.guard.db beside the resolved FILE, mode 0600, in WAL mode, -wal and -shm kept 0600")
    func databaseFile() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(directory, policy: .standard)
            // Through a symlink, the database is still beside the file it points to.
            try FileManager.default.createDirectory(atPath: directory.file("links"), withIntermediateDirectories: false)
            symlink(store.path, directory.file("links/app.cred"))
            #expect(
                try LoginGuard.defaultDatabasePath(forCredentialFile: directory.file("links/app.cred")) == store.path
                    + ".guard.db")
            _ = try login(store, "bob", "wrong")
            let database = store.path + ".guard.db"
            #expect(store.loginGuard?.databasePath == database)
            for file in [database, database + "-wal", database + "-shm"] {
                #expect(try mode(file) == 0o600, "\(file)")
            }
            // The file-format bytes 18 and 19 of an SQLite header are 2 in WAL mode.
            let header = try readBytes(database)
            #expect(Array(header.prefix(16)) == Array("SQLite format 3\0".utf8))
            #expect(header[18] == 2 && header[19] == 2)
        }
    }

    @Test(
        "created by root: FILE's owner and group beside FILE, the directory's owner and group elsewhere; -wal and -shm follow",
        .enabled(if: isRoot, "needs root to give files away"))
    func ownership() throws {
        try withTemporaryDirectory { directory in
            let store = try guardedStore(directory, policy: .standard)
            chown(store.path, 1234, 5678)
            let beside = try LoginGuard(credentialFile: store.path, log: .none, service: "test")
            let stateDirectory = directory.file("state")
            mkdir(stateDirectory, 0o700)
            chown(stateDirectory, 4321, 8765)
            let elsewhere = try LoginGuard(
                credentialFile: store.path, state: stateDirectory + "/web.guard.db", log: .none, service: "test")
            for (guardian, owner) in [(beside, (uid_t(1234), gid_t(5678))), (elsewhere, (4321, 8765))] {
                var guarded = store
                guarded.loginGuard = guardian
                _ = try login(guarded, "bob", "wrong")
                for file in [guardian.databasePath, guardian.databasePath + "-wal", guardian.databasePath + "-shm"] {
                    let info = try statInfo(file)
                    #expect(info.st_uid == owner.0 && info.st_gid == owner.1, "\(file)")
                    #expect(info.st_mode & 0o7777 == 0o600, "\(file)")
                }
            }
        }
    }

    @Test(
        "check: FILE's group and others who may read it but not write the guard database are reported",
        .enabled(if: isRoot && getpwnam("proxy") != nil, "needs root and the proxy user"))
    func accessFindings() throws {
        try withTemporaryDirectory { directory in
            let proxy = try #require(getpwnam("proxy")).pointee
            let store = try guardedStore(directory, policy: .standard)
            chmod(directory.path, 0o755)
            chown(store.path, 0, proxy.pw_gid)
            chmod(store.path, 0o640)
            // The default database beside FILE, made by root: FILE's owner and group, 0600.
            let beside = try LoginGuard(credentialFile: store.path, log: .none, service: "test")
            #expect(
                beside.accessFindings().map(\.detail) == [
                    .guardDatabase(.groupCannotWrite(gid: proxy.pw_gid, path: beside.databasePath))
                ])
            try beside.database.insert([])  // created now: still not the group's to write
            #expect(beside.accessFindings().map(\.kind) == [.guardDatabase])
            // A state directory of the proxy user's own: the database root creates there is proxy's.
            let state = directory.file("proxy-state")
            mkdir(state, 0o700)
            chown(state, proxy.pw_uid, proxy.pw_gid)
            let own = try LoginGuard(
                credentialFile: store.path, state: state + "/app.guard.db", log: .none, service: "test")
            #expect(own.accessFindings().isEmpty, "\(own.accessFindings().map(\.message))")
            try own.database.insert([])  // created now (reading failures creates nothing)
            #expect(try statInfo(own.databasePath).st_uid == proxy.pw_uid)
            #expect(own.accessFindings().isEmpty, "\(own.accessFindings().map(\.message))")
            // Readable by everyone: others cannot write a 0600 database.
            chmod(store.path, 0o644)
            #expect(own.accessFindings().map(\.detail) == [.guardDatabase(.othersCannotWrite(path: own.databasePath))])
            #expect(own.accessFindings().first?.message.contains("set state") == true)
        }
    }

    @Test("a database that cannot be opened or written: the login is not checked and throws an I/O error naming state")
    func unusableDatabase() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("app.cred")
            try writeText(path, "bob,legacy-password-1\n")
            let unusable = [
                directory.file("missing-directory/app.guard.db"),  // cannot be created
                directory.path,  // a directory
                directory.file("link.guard.db"),  // a symlink (refused)
                directory.file("garbage.guard.db"),  // not a database
            ]
            symlink(directory.file("elsewhere.db"), directory.file("link.guard.db"))
            try writeText(directory.file("garbage.guard.db"), String(repeating: "not SQLite\n", count: 200))
            for state in unusable {
                var store = CredentialStore(path: path, policy: try policy(rounds: 1))
                store.loginGuard = try LoginGuard(credentialFile: path, state: state, log: .none, service: "test")
                var checked = false
                let error = #expect(throws: CredFileError.self, "\(state)") {
                    try store.loginGuard?.attempt(username: Array("bob".utf8), client: nil) {
                        checked = true
                        return try store.verifyUnguarded(
                            username: "bob", password: Password("legacy-password-1"), upgradeOnSuccess: false)
                    }
                }
                #expect(error?.code == .guardDatabase && error?.message.contains("`state`") == true, "\(state)")
                #expect(!checked, "\(state): the password was looked at")
                #expect(throws: CredFileError.self) {
                    try store.authenticate(username: "bob", password: "legacy-password-1")
                }
            }
            #expect(!fileExists(directory.file("elsewhere.db")))
        }
    }

    @Test("bounded: past the limit the least recently failed names below the lockout go first, locked-out ones last")
    func bounded() throws {
        try withTemporaryDirectory { directory in
            let database = GuardDatabase(path: directory.file("b.guard.db"), owner: nil, nameLimit: 4)
            let policy = try GuardPolicy(freeFailures: 100, maximumFailures: 3, maximumDelay: 0)
            try database.insert([
                .init(name: Array("old-locked".utf8), count: 3, lastFailure: 1_000, lockedOut: true),
                .init(name: Array("old".utf8), count: 1, lastFailure: 2_000, lockedOut: false),
                .init(name: Array("middle".utf8), count: 2, lastFailure: 3_000, lockedOut: false),
                .init(name: Array("recent".utf8), count: 1, lastFailure: 4_000, lockedOut: false),
            ])
            #expect(try database.reserve(Array("new".utf8), now: 5_000, policy: policy) == .admitted(count: 1))
            #expect(try database.nameCount() == 4)
            #expect(
                Set(try database.rows().map { String(decoding: $0.name, as: UTF8.self) }) == [
                    "old-locked", "middle", "recent", "new",
                ])
            // Existing names never push anyone out.
            #expect(try database.reserve(Array("middle".utf8), now: 6_000, policy: policy) == .admitted(count: 3))
            #expect(try database.row(Array("middle".utf8))?.lockedOut == true)
            #expect(try database.nameCount() == 4)
            // With only locked-out names left to drop, the oldest of them goes.
            let locked = (0..<4).map {
                GuardDatabase.Row(
                    name: Array("l\($0)".utf8), count: 3, lastFailure: Int64(10_000 + $0), lockedOut: true)
            }
            _ = try database.clearAll()
            try database.insert(locked)
            _ = try database.reserve(Array("another".utf8), now: 20_000, policy: policy)
            #expect(
                Set(try database.rows().map { String(decoding: $0.name, as: UTF8.self) }) == [
                    "l1", "l2", "l3", "another",
                ])
            #expect(GuardDatabase.defaultNameLimit == 100_000)
        }
    }

    @Test("at the real bound of 100,000 names one more name keeps the count at 100,000")
    func realBound() throws {
        try withTemporaryDirectory { directory in
            let database = GuardDatabase(path: directory.file("big.guard.db"), owner: nil)
            let rows = (0..<100_000).map {
                GuardDatabase.Row(name: Array("n\($0)".utf8), count: 1, lastFailure: Int64($0), lockedOut: false)
            }
            try database.insert(rows)
            #expect(try database.nameCount() == 100_000)
            _ = try database.reserve(Array("newcomer".utf8), now: 1_000_000, policy: .standard)
            #expect(try database.nameCount() == 100_000)
            #expect(try database.row(Array("n0".utf8)) == nil)
            #expect(try database.row(Array("n1".utf8)) != nil)
            #expect(try database.row(Array("newcomer".utf8))?.count == 1)
        }
    }

    @Test("the async front door and LoginModel go through the guard")
    @MainActor
    func asyncAndModel() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let store = try guardedStore(
                // 900 s: the async forms wait for the shared hashing pool, which the suite's
                // other tests may keep busy for a minute on a loaded machine.
                directory, policy: try GuardPolicy(freeFailures: 1, maximumFailures: 100, maximumDelay: 900))
            #expect(try await store.authenticate(username: "bob", password: "wrong") == false)
            try store.loginGuard?.database.insert([
                .init(name: Array("bob".utf8), count: 10, lastFailure: LoginGuard.now(), lockedOut: false)
            ])
            // Throttled now: the right password is denied, through the async form and the model.
            #expect(try await store.authenticate(username: "bob", password: "tangerine-river-stone") == false)
            let model = LoginModel(store: store, language: .english)
            model.username = "bob"
            model.password = "tangerine-river-stone"
            await model.login()
            #expect(!model.isAuthenticated)
            #expect(model.errorMessage == LoginModel.Message.wrongCredentials.text(in: .english))
            #expect(try store.loginGuard?.failureRecord(username: "bob")?.failures == 10)
        }
    }
}
