import CredFileTestSupport
import Foundation
import Testing

// SPEC §6: "in an async context a blocking form is never picked silently". The blocking
// forms of the front door are `@available(*, noasync)`; these tests compile small clients
// of the built module with the real compiler (`swiftc -typecheck`, Swift 6 mode) and read
// its verdict, since what is proven is what the compiler accepts.

/// Each blocking form of the front door that has an async twin, as a call on `store`.
private let frontDoorCalls: [String] = [
    #"store.authenticate(username: "valencia", password: "naranjo-en-flor-2026")"#,
    #"store.authenticate(username: "valencia", password: "naranjo-en-flor-2026", upgradeOnSuccess: true)"#,
    #"store.verify(username: "valencia", password: Password("naranjo-en-flor-2026"), upgradeOnSuccess: false)"#,
    #"store.register(username: "valencia", password: "naranjo-en-flor-2026")"#,
    #"store.register(username: "valencia", password: Password("naranjo-en-flor-2026"), storage: .hashed)"#,
    #"store.changePassword(username: "valencia", to: "otra-frase-bastante-larga")"#,
    #"store.changePassword(username: "valencia", to: Password("otra-frase-bastante-larga"), storage: .hashed)"#,
    #"store.remove(username: "valencia")"#,
    #"store.importUsers([("valencia", Password("naranjo-en-flor-2026"))])"#,
    #"store.upgrade()"#,
    #"store.verify(username: "valencia", password: Password("naranjo-en-flor-2026"), upgradeOnSuccess: false, client: nil)"#,
    #"store.verify(usernameBytes: Array("valencia".utf8), password: Password("naranjo-en-flor-2026"), upgradeOnSuccess: false, client: nil)"#,
    #"store.verify(usernameBytes: Array("valencia".utf8), password: Password("naranjo-en-flor-2026"), upgradeOnSuccess: false, client: nil, cache: GoodLoginCache(path: "usuarios.txt", lifetime: .seconds(1)))"#,
    #"store.lock(username: "valencia")"#,
    #"store.unlock(username: "valencia")"#,
]

/// What `swiftc -typecheck` says of `source` as `main.swift` (top-level code) or as a
/// library file (`-parse-as-library`), compiled against the module the tests were built with.
private func typecheck(_ source: String, topLevel: Bool) throws -> ProcessResult {
    let directory = try TemporaryDirectory.make(prefix: "credfile-noasync")
    defer { directory.remove() }
    let file = directory.file("main.swift")
    try source.write(toFile: file, atomically: false, encoding: .utf8)
    let root = BuiltProduct.packageRoot.path
    let flags = try ChildProcess.run(
        "/bin/bash", [root + "/Scripts/module-flags.sh", try BuiltProduct.buildDirectory()])
    #expect(flags.status == 0, "\(flags)")
    let arguments =
        ["-swift-version", "6", "-typecheck", "-warnings-as-errors", "-module-cache-path", directory.file("cache")]
        + flags.stdout.split(separator: "\n").map(String.init) + (topLevel ? [] : ["-parse-as-library"]) + [file]
    return try ChildProcess.run(try ExternalTool.path("swiftc"), arguments, timeout: .seconds(300))
}

/// A client file: one function, `signature`, that makes every front-door call with `prefix`.
private func function(_ signature: String, calling prefix: String) -> String {
    let body = frontDoorCalls.map { "    _ = \(prefix) \($0)" }.joined(separator: "\n")
    return "import CredFile\n\n\(signature) {\n\(body)\n}\n"
}

/// The 1-based lines of `source` whose call the compiler refused as unavailable from
/// asynchronous contexts.
private func refusedLines(_ result: ProcessResult) -> Set<Int> {
    var lines = Set<Int>()
    for line in result.stderr.split(separator: "\n")
    where line.contains("error: ") && line.contains("is unavailable from asynchronous contexts") {
        // main.swift:LINE:COLUMN: error: …
        let fields = line.split(separator: ":")
        if let index = fields.firstIndex(where: { $0.hasSuffix("main.swift") }), index + 1 < fields.count,
            let number = Int(fields[index + 1])
        {
            lines.insert(number)
        }
    }
    return lines
}

@Suite("noasync: in async code the blocking forms are never picked silently", .serialized)
struct NoasyncTests {
    @Test("top-level `try await store.…` of each blocking form is a compile error, not a blocking call")
    func topLevelAwaitIsRefused() throws {
        // Top-level code that awaits is an async context, yet the compiler picks the
        // synchronous overload there: without noasync each line would compile and block.
        let header = ["import CredFile", #"let store = CredentialStore(path: "usuarios.txt")"#]
        let source = (header + frontDoorCalls.map { "_ = try await " + $0 }).joined(separator: "\n") + "\n"
        let result = try typecheck(source, topLevel: true)
        #expect(result.status != 0, "the compiler accepted blocking calls in async top-level code")
        #expect(refusedLines(result) == Set(header.count + 1...header.count + frontDoorCalls.count), "\(result.stderr)")
    }

    @Test("inside an async function `try await store.…` compiles to the async form")
    func asyncFunctionPicksTheAsyncForm() throws {
        // The blocking forms are unavailable here, so a clean compile (warnings are errors:
        // "no 'async' operations occur within 'await'" would mean a blocking form) shows the
        // async one was chosen.
        let source = function("func serve(store: CredentialStore) async throws", calling: "try await")
        let result = try typecheck(source, topLevel: false)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("inside an async function a call without await is an error, never a blocking call")
    func asyncFunctionWithoutAwaitIsRefused() throws {
        let source = """
            import CredFile

            func serve(store: CredentialStore) async throws -> Bool {
                try store.authenticate(username: "valencia", password: "naranjo-en-flor-2026")
            }

            """
        let result = try typecheck(source, topLevel: false)
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("is unavailable from asynchronous contexts")
                || result.stderr.contains("expression is 'async' but is not marked with 'await'"), "\(result.stderr)")
    }

    @Test("synchronous code (scripts, the command line) still calls the blocking forms")
    func synchronousCodeKeepsTheBlockingForms() throws {
        let source = function("func administer(store: CredentialStore) throws", calling: "try")
        let result = try typecheck(source, topLevel: false)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(
        "LoginModel: top-level `await model.login()` is refused, never a login started and left running; the async forms and a button's call compile"
    )
    func loginModelNeverStartsALoginWhereItMustWait() throws {
        // The Task-returning forms are for buttons. At top level the compiler picks them for
        // `await model.login()` (it did, with only a warning: "no 'async' operations occur
        // within 'await'"), and the next line ran before the login ended. They are noasync:
        // that line is an error saying what to write, `as Void` picks the async form.
        let header = ["import CredFile", #"let model = LoginModel(store: CredentialStore(path: "usuarios.txt"))"#]
        let refused = try typecheck(
            (header + ["await model.login()", "await model.register()"]).joined(separator: "\n") + "\n",
            topLevel: true)
        #expect(refused.status != 0, "the compiler started a login where the code waits for it")
        #expect(refusedLines(refused) == [3, 4], "\(refused.stderr)")
        #expect(refused.stderr.contains("as Void"), "the error does not say what to write: \(refused.stderr)")
        let topLevel =
            (header + [
                "await model.login() as Void", "await model.register() as Void",
                "print(model.isAuthenticated, model.isRegistered)",
            ]).joined(separator: "\n") + "\n"
        let result = try typecheck(topLevel, topLevel: true)
        #expect(result.status == 0, "\(result.stderr)")
        let function = """
            import CredFile

            @MainActor func signIn(_ model: LoginModel) async -> Bool {
                await model.register()
                await model.login()
                return model.isAuthenticated
            }

            """
        let inFunction = try typecheck(function, topLevel: false)
        #expect(inFunction.status == 0, "\(inFunction.stderr)")
        let button = """
            import CredFile

            @MainActor func tapped(_ model: LoginModel) {
                model.login()
                let task: Task<Void, Never> = model.register()
                _ = task
            }

            """
        let buttons = try typecheck(button, topLevel: false)
        #expect(buttons.status == 0, "\(buttons.stderr)")
    }
}
