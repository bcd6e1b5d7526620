import CredFileTestSupport
import Dispatch
import Foundation
import Observation
import Synchronization
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// SPEC §6 "For Swift apps and servers": the async front door, the caching store, and
// the seed's view-model. Figures (heartbeat lateness, throughput, cache speed-up) are
// measured by Benchmarks/ (`bash Benchmarks/run.sh apps`), never asserted on time here.

/// The seed's three users (Examples/usuarios.txt) plus one hashed entry, at 1 round.
private func seedFile(_ directory: TemporaryDirectory) throws -> String {
    let path = directory.file("usuarios.txt")
    try writeText(path, "valencia,contrasena123\nadmin,adminpass\nbob,1234\n")
    let store = CredentialStore(path: path, policy: try policy(rounds: 1))
    try store.register(username: "hashed", password: Password("contraseña-segura"), storage: .hashed)
    return path
}

/// (user, password, granted): the seed's good logins and its four forgeries.
private let seedLogins: [(String, String, Bool)] = [
    ("valencia", "contrasena123", true),
    ("hashed", "contraseña-segura", true),
    ("ncia", "contrasena123", false),  // the suffix of a name
    ("valencia", "contrasena12", false),  // the prefix of a password
    ("admin", "", false),  // an empty password
    ("", "adminpass", false),  // an empty name
    ("nobody", "x", false),  // an unknown user
]

@Suite("Swift apps: async front door, caching store, LoginModel")
struct AppTests {
    @Test("async authenticate grants and denies exactly as the synchronous form, the seed's forgeries included")
    func asyncMatchesSync() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let path = try seedFile(directory)
            for caching in [false, true] {
                let store = CredentialStore(path: path, policy: try policy(rounds: 1), caching: caching)
                for (user, password, expected) in seedLogins {
                    let sync = try syncAuthenticate(store, user, password)
                    let async: Bool = try await store.authenticate(username: user, password: password)
                    #expect(sync == expected, "\(user) sync, caching \(caching)")
                    #expect(async == expected, "\(user) async, caching \(caching)")
                }
            }
        }
    }

    @Test("async register, changePassword, remove and upgrade change the file as the synchronous forms do")
    func asyncChanges() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let path = directory.file("users.txt")
            let store = CredentialStore(path: path, policy: try policy(rounds: 1))
            try await store.register(username: "ana", password: "primera-clave-larga")
            await #expect(throws: CredFileError(.userExists, "")) {
                try await store.register(username: "ana", password: "otra-clave-larga")
            }
            try await store.changePassword(username: "ana", to: "segunda-clave-larga")
            #expect(try await store.authenticate(username: "ana", password: "segunda-clave-larga"))
            #expect(try await !store.authenticate(username: "ana", password: "primera-clave-larga"))
            try writeText(path, try readBytes(path).text + "luis,texto-plano\n")
            let summary = try await store.upgrade()
            #expect(summary.upgraded == 1)
            #expect(try await store.remove(username: "ana") == 1)
            #expect(try await !store.authenticate(username: "ana", password: "segunda-clave-larga"))
        }
    }

    @Test("the async work runs on the library's own threads, not on the caller's")
    func runsOnOwnThreads() async throws {
        let pool = HashingThreads.shared
        #expect(!pool.isPoolThread)
        let onPool = try await pool.run { pool.isPoolThread }
        #expect(onPool)
        #expect(pool.threadCount == ParallelHasher.defaultJobs)
    }

    @Test("a task cancelled while its job waits gets CredFileError.cancelled, and the work never runs")
    func cancellationBeforeWork() async throws {
        // A pool of its own: filling the shared one would stall every other test's logins
        // (a test blocking a cooperative thread on such a login deadlocked the suite).
        let pool = HashingThreads(threadCount: 2)
        // Occupy every thread of the pool, so the next job has to wait in the queue.
        let release = DispatchSemaphore(value: 0)
        let busy = Counter()
        var blockers: [Task<Void, any Error>] = []
        for _ in 0..<pool.threadCount {
            blockers.append(
                Task {
                    try await pool.run {
                        busy.increment(); release.wait()
                    }
                })
        }
        while busy.value < pool.threadCount { try await Task.sleep(for: .milliseconds(5)) }
        let ran = CancellationFlag()  // used here as a plain "it ran" flag
        let waiting = Task { try await pool.run { ran.cancel() } }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        for _ in 0..<pool.threadCount { release.signal() }
        await #expect(throws: CredFileError.cancelled) { try await waiting.value }
        for blocker in blockers { try await blocker.value }
        // The queue is drained in order, so once a later job has run, the cancelled one was skipped.
        _ = try await pool.run { 0 }
        #expect(!ran.isCancelled)
        // A task cancelled before the call does not even queue its work.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.run { ran.cancel() }
        }
        await #expect(throws: CredFileError.cancelled) { try await early.value }
        #expect(!ran.isCancelled)
    }

    @Test("a caching store reads an unchanged file once, and sees a user another process added a moment ago")
    func cacheSeesOtherProcesses() throws {
        try withTemporaryDirectory { directory in
            let path = try seedFile(directory)
            let store = CredentialStore(path: path, policy: try policy(rounds: 1), caching: true)
            let cache = try #require(store.cache)
            for _ in 0..<50 { #expect(try store.authenticate(username: "valencia", password: "contrasena123")) }
            #expect(cache.reads.load(ordering: .relaxed) == 1)
            #expect(try !store.authenticate(username: "nuevo", password: "clave-nueva-larga-1"))

            // Another process adds a user through the lock-and-rename protocol.
            let added = try CLI.run(["add", path, "nuevo", "--iterations", "1"], stdin: "clave-nueva-larga-1\n")
            #expect(added.status == 0, "\(added)")
            #expect(try store.authenticate(username: "nuevo", password: "clave-nueva-larga-1"))
            #expect(cache.reads.load(ordering: .relaxed) == 2)

            // …and changes a password: the old one stops working at once.
            let changed = try CLI.run(["passwd", path, "nuevo", "--iterations", "1"], stdin: "clave-nueva-larga-2\n")
            #expect(changed.status == 0, "\(changed)")
            #expect(try !store.authenticate(username: "nuevo", password: "clave-nueva-larga-1"))
            #expect(try store.authenticate(username: "nuevo", password: "clave-nueva-larga-2"))

            // A copy of the store shares the cache.
            let copy = store
            #expect(try copy.authenticate(username: "nuevo", password: "clave-nueva-larga-2"))
            #expect(cache.reads.load(ordering: .relaxed) == 3)
        }
    }

    @Test("a caching store answers like a plain one on duplicates, NFC names and a file that disappears")
    func cacheAgreesWithPlainStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("users.txt")
            // A shadowed duplicate, an NFD name, a comment that looks like an entry, CRLF endings.
            try writeText(path, "#bob,x\r\nbob,first\r\nbob,second\nJose\u{301},acento\nmal\u{1},x\n")
            let plain = CredentialStore(path: path, policy: try policy(rounds: 1))
            let cached = CredentialStore(path: path, policy: try policy(rounds: 1), caching: true)
            let cases = [
                ("bob", "first"), ("bob", "second"), ("#bob", "x"), ("Jos\u{E9}", "acento"), ("mal\u{1}", "x"),
            ]
            for (user, password) in cases {
                #expect(
                    try plain.authenticate(username: user, password: password)
                        == cached.authenticate(username: user, password: password), "\(user)")
            }
            try FileManager.default.removeItem(atPath: path)
            #expect(throws: CredFileError(.io, "")) { try cached.authenticate(username: "bob", password: "first") }
        }
    }

    @Test("LoginModel reproduces the seed's flows with its Spanish messages, and never keeps the password")
    @MainActor func loginModelSpanish() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let path = directory.file("usuarios.txt")
            let model = LoginModel(
                store: CredentialStore(path: path, policy: try policy(rounds: 1)), language: .spanish)

            // Registration: empty fields, success, duplicate.
            model.username = "valencia"
            model.password = ""
            await model.register()
            #expect(model.errorMessage == "Usuario y contraseña no pueden estar vacíos.")
            #expect(!model.isRegistered)
            model.password = "contrasena123-segura"
            await model.register()
            #expect(model.isRegistered)
            #expect(model.errorMessage == nil)
            #expect(model.password.isEmpty)
            model.password = "otra-clave-larga"
            await model.register()
            #expect(model.errorMessage == "El usuario ya existe.")
            #expect(model.password.isEmpty)

            // A good login, then the seed's forgeries.
            model.username = "valencia"
            model.password = "contrasena123-segura"
            await model.login()
            #expect(model.isAuthenticated)
            #expect(model.errorMessage == nil)
            #expect(model.password.isEmpty)
            for (user, password) in [
                ("ncia", "contrasena123-segura"), ("valencia", "contrasena123-segur"), ("valencia", ""),
                ("", "contrasena123-segura"),
            ] {
                model.username = user
                model.password = password
                await model.login()
                #expect(!model.isAuthenticated, "\(user)")
                #expect(model.errorMessage == "Usuario o contraseña incorrectos.", "\(user)")
                #expect(model.password.isEmpty)
            }
        }
    }

    @Test("LoginModel's file errors: unreadable path, failed write; English messages")
    @MainActor func loginModelErrors() async throws {
        try await withTemporaryDirectoryAsync { directory in
            // The path is a directory: a login cannot read it, a registration cannot write it.
            let folder = directory.file("usuarios.txt")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let spanish = LoginModel(
                store: CredentialStore(path: folder, policy: try policy(rounds: 1)), language: .spanish)
            spanish.username = "valencia"
            spanish.password = "contrasena123"
            await spanish.login()
            #expect(spanish.errorMessage == "Error al leer el archivo.")
            spanish.password = "contrasena123"
            await spanish.register()
            #expect(spanish.errorMessage == "Error al registrar usuario.")

            // A missing file: nobody is registered yet, so a login is simply wrong.
            let english = LoginModel(
                store: CredentialStore(path: directory.file("missing.txt"), policy: try policy(rounds: 1)),
                language: .english)
            english.username = "valencia"
            english.password = "contrasena123"
            await english.login()
            #expect(english.errorMessage == "Wrong username or password.")
            english.password = ""
            await english.register()
            #expect(english.errorMessage == "Username and password cannot be empty.")
        }
    }

    @Test("LoginModel is observable: a login changes isAuthenticated and the observation fires")
    @MainActor func loginModelObservation() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let path = try seedFile(directory)
            let model = LoginModel(
                store: CredentialStore(path: path, policy: try policy(rounds: 1)), language: .english)
            let fired = Mutex<[String]>([])
            withObservationTracking {
                _ = model.isAuthenticated
            } onChange: {
                fired.withLock { $0.append("isAuthenticated") }
            }
            withObservationTracking {
                _ = model.password
            } onChange: {
                fired.withLock { $0.append("password") }
            }
            model.username = "valencia"
            model.password = "contrasena123"
            await model.login()
            #expect(model.isAuthenticated)
            #expect(fired.withLock { $0 }.contains("isAuthenticated"))
            #expect(fired.withLock { $0 }.contains("password"))
            // The button form starts the same work and returns a task to await.
            model.password = "wrong-one"
            let press: @MainActor () -> Task<Void, Never> = { model.login() }  // a button's action: synchronous
            await press().value
            #expect(!model.isAuthenticated)
        }
    }

    @Test("Language.current follows LC_ALL, LC_MESSAGES and LANG like the command line")
    func languageFromLocale() {
        let saved: [(String, String?)] = ["LC_ALL", "LC_MESSAGES", "LANG"].map { name in
            (name, getenv(name).map { String(cString: $0) })
        }
        defer { for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] { unsetenv(name) }
        #expect(LoginModel.Language.current == .english)
        setenv("LANG", "es_ES.UTF-8", 1)
        #expect(LoginModel.Language.current == .spanish)
        setenv("LC_ALL", "C", 1)
        #expect(LoginModel.Language.current == .english)
    }
}

/// The synchronous `authenticate` (inside an async function Swift picks the async overload).
private func syncAuthenticate(_ store: CredentialStore, _ user: String, _ password: String) throws -> Bool {
    try store.authenticate(username: user, password: password)
}

/// A counter shared between threads.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}
