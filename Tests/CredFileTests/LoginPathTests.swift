import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// Issue #34 item 1: one login path. Every login — the library's apps, `verify`, `pam`,
// `checkpassword`, `helper`, `serve` — goes through the front door's byte-level login
// (Guard/CredentialStore+Guard.swift), which alone calls the guard's attempt.

/// The `.swift` files under `folder` of the package (recursively), as paths relative to the root.
private func swiftFiles(under folder: String) -> [String] {
    let root = BuiltProduct.packageRoot
    guard let walker = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path) else {
        return []
    }
    return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { "\(folder)/\($0)" }.sorted()
}

/// `text` without comments and string literals (a doc comment may name anything), as
/// `Scripts/layers.sh` reads code.
private func code(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        var kept = ""
        var inString = false
        var escaped = false
        var previous: Character = " "
        for character in line {
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
            } else if character == "\"" {
                inString = true
            } else if character == "/" && previous == "/" {
                kept.removeLast()
                break
            } else {
                kept.append(character)
            }
            previous = character
        }
        return kept
    }.joined(separator: "\n")
}

/// The guard's login entries, each with the one file allowed to call it: the attempt
/// from the front door's login, the cached-login admission from the store's login with a
/// cache of good logins (the guard decides there whether the cache may be looked at).
private let guardEntries: [(pattern: String, caller: String)] = [
    (#"\.attempt\s*\("#, "Sources/CredFile/Guard/CredentialStore+Guard.swift"),
    (#"\.(admitsCachedLogin|cachedLogin)\s*\("#, "Sources/CredFile/Integrations/CredentialStore+GoodLoginCache.swift"),
]

/// The lines of `text`'s code that match `pattern` (a call of one of the guard's entries).
private func calls(_ pattern: String, in text: String) -> [Int] {
    code(text).split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { number, line in
        line.range(of: pattern, options: .regularExpression) != nil ? number + 1 : nil
    }
}

@Suite("One login path (#34): the front door's byte-level login")
struct LoginPathTests {
    @Test("nothing outside Sources/CredFile/Guard/ calls the guard's attempt: every login goes through the store")
    func oneCallerOfTheGuard() throws {
        let root = BuiltProduct.packageRoot
        let files = ["Sources", "Examples", "Fuzz", "Benchmarks"].flatMap(swiftFiles(under:))
        #expect(files.contains("Sources/credfile/Serve/LoginService.swift"), "the scan reads the CLI")
        for (pattern, caller) in guardEntries {
            var callers: [String] = []
            for file in files {
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                let lines = calls(pattern, in: text)
                if lines.isEmpty { continue }
                callers.append(file)
                #expect(
                    file == caller, "\(file):\(lines.map(String.init).joined(separator: ",")) calls the guard directly")
            }
            // The scan finds the one call where it belongs (so it can fail).
            #expect(callers == [caller], "\(pattern)")
        }
    }

    @Test("the scan sees a direct call and ignores declarations, comments and strings")
    func scanner() {
        let (attempt, cached) = (guardEntries[0].pattern, guardEntries[1].pattern)
        #expect(
            calls(attempt, in: "x\n    try store.loginGuard?.attempt(username: n, client: nil) { check() }\n") == [2])
        #expect(calls(cached, in: "let ok = try g.admitsCachedLogin(username: n, client: c)") == [1])
        #expect(calls(cached, in: "return try loginGuard.cachedLogin(username: name, client: client) {") == [1])
        #expect(calls(attempt, in: "/// ``LoginGuard/attempt(username:client:_:)``\nlet s = \".attempt(\"") == [])
        #expect(calls(attempt, in: "let a = try store.verify(usernameBytes: n, password: p)  // not .attempt(") == [])
        #expect(calls(attempt, in: "    public func attempt(") == [])
    }

    // MARK: The byte-level login

    /// A store over `bob` (1 round), guarded by `policy`, logging nowhere.
    private func store(_ directory: TemporaryDirectory, policy guardPolicy: GuardPolicy) throws -> CredentialStore {
        let path = directory.file("app.cred")
        var store = CredentialStore(path: path, policy: try policy(rounds: 1))
        try store.register(username: "bob", password: Password("tangerine-river-stone"), storage: .hashed)
        store.loginGuard = try LoginGuard(credentialFile: path, policy: guardPolicy, log: .none, service: "test")
        return store
    }

    @Test("the String form and the byte form give the same answers and counts")
    func bothFormsAgree() throws {
        try withTemporaryDirectory { directory in
            let store = try store(directory, policy: .standard)
            let good = try store.verify(
                usernameBytes: Array("bob".utf8), password: Password(utf8: Array("tangerine-river-stone".utf8)),
                upgradeOnSuccess: false, client: "192.0.2.1")
            #expect(good.granted && good.denial == nil)
            let wrongBytes = try store.verify(
                usernameBytes: Array("bob".utf8), password: Password(utf8: Array("wrong".utf8)),
                upgradeOnSuccess: false, client: nil)
            let wrongText = try store.verify(
                username: "bob", password: Password("wrong"), upgradeOnSuccess: false, client: nil)
            #expect(wrongBytes.denial == .wrongPassword && wrongText.denial == .wrongPassword)
            #expect(try store.loginGuard?.failureRecord(username: "bob")?.failures == 2)
        }
    }

    @Test(
        "a name that is not UTF-8 or a password with NUL is denied as a name no entry has, and counted as sent",
        arguments: [
            ("not UTF-8", [0x62, 0x6F, 0xFF], Array("tangerine-river-stone".utf8)),
            ("NUL in the password", Array("bob".utf8), Array("tangerine-river-stone".utf8) + [0]),
            ("NUL inside the password", Array("bob".utf8), Array("tangerine".utf8) + [0] + Array("river-stone".utf8)),
        ] as [(String, [UInt8], [UInt8])])
    func unmatchable(_ name: String, _ user: [UInt8], _ password: [UInt8]) throws {
        try withTemporaryDirectory { directory in
            let store = try store(directory, policy: .standard)
            let result = try store.verify(
                usernameBytes: user, password: Password(utf8: password), upgradeOnSuccess: true, client: nil)
            #expect(!result.granted && !result.upgraded && result.denial == .unknownUser, "\(name)")
            let counted = try #require(store.loginGuard?.failureRecords().first)
            #expect(counted.username == user && counted.failures == 1, "\(name)")
        }
    }
}
