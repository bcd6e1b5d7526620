import CredFileTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredFile

// Issue #33 item 2 (SPEC §10): the cache of good logins is never an oracle for a
// throttled or locked-out name. The attack, in the library: the victim logs in (cached),
// an attacker throttles the name, then tries many passwords at the cache's speed.
// Through a real `credfile serve`: CLITests/IntegrationServeCacheTests.swift.

/// The right password of `bob` in these tests.
private let right = "tangerine-river-stone"
private let victim = "192.0.2.10"
private let stranger = "198.51.100.7"

/// A store over `bob` (1 round) guarded by `guardPolicy` (logging nowhere), and a cache of good logins.
private func guardedStore(_ directory: TemporaryDirectory, _ guardPolicy: GuardPolicy) throws -> (
    CredentialStore, GoodLoginCache
) {
    let path = directory.file("app.cred")
    var store = CredentialStore(path: path, policy: try policy(rounds: 1), caching: true)
    try store.register(username: "bob", password: Password(right), storage: .hashed)
    store.loginGuard = try LoginGuard(credentialFile: path, policy: guardPolicy, log: .none, service: "test")
    return (store, try GoodLoginCache(path: path, lifetime: .seconds(300)))
}

/// One login of `bob` with the cache, as `serve` makes it.
private func login(_ store: CredentialStore, _ cache: GoodLoginCache, _ password: String, from client: String?)
    throws -> CredentialStore.Verification
{
    try store.verify(
        usernameBytes: Array("bob".utf8), password: Password(password), upgradeOnSuccess: false, client: client,
        cache: cache)
}

/// `bob`'s failures now.
private func failures(_ store: CredentialStore) throws -> Int {
    try store.loginGuard?.failureRecord(username: "bob")?.failures ?? 0
}

/// Makes `bob` throttled for about `2^(count − free − 1)` seconds, as `count` failures a
/// moment ago would (recorded directly: the guard would not count them so fast).
private func throttle(_ store: CredentialStore, failures count: Int) throws {
    let row = GuardDatabase.Row(
        name: Array("bob".utf8), count: count, lastFailure: LoginGuard.now(), lockedOut: false)
    try #require(store.loginGuard).database.insert([row])
}

@Suite("The cache of good logins is no oracle for a throttled or locked-out name (#33 item 2)")
struct CacheOracleTests {
    @Test("the attack: the victim is cached, the attacker throttles the name, then many guesses find nothing")
    func attack() throws {
        try withTemporaryDirectory { directory in
            let limits = try GuardPolicy(freeFailures: 2, maximumFailures: 10, maximumDelay: 900)
            let (store, cache) = try guardedStore(directory, limits)
            #expect(try login(store, cache, right, from: victim).granted)  // hashed, then cached
            #expect(try login(store, cache, right, from: victim).granted)  // from the cache
            // The attacker's guesses: two free ones, the third throttles the name (1 s),
            // then the delays are waited out by recording them directly (2^4 s = 16 s).
            for guess in 0..<3 {
                #expect(try login(store, cache, "guess-\(guess)", from: stranger).denial == .wrongPassword)
            }
            #expect(try failures(store) == 3)
            try throttle(store, failures: 7)
            // Now many guesses at the cache's speed, the right password among them.
            let guesses = (0..<200).map { $0 == 137 ? right : "guess-\($0)" }
            for guess in guesses {
                let answer = try login(store, cache, guess, from: stranger)
                #expect(!answer.granted && answer.denial == .throttled, "\(guess == right ? "the right" : "a") guess")
            }
            for client in [nil, "203.0.113.5"] {
                #expect(try login(store, cache, right, from: client).denial == .throttled, "\(client ?? "no address")")
            }
            #expect(try failures(store) == 7, "a guess too early was counted")
            // The owner keeps working while the name is throttled: its address owns the login.
            #expect(try login(store, cache, right, from: victim).granted)
            // An attacker behind the owner's address (a shared NAT, a proxy that sends no
            // address) has each miss counted: the lockout comes at max-failures.
            var compared = 0
            for guess in 0..<20 {
                if try failures(store) >= limits.maximumFailures { break }
                let answer = try login(store, cache, "nat-guess-\(guess)", from: victim)
                #expect(!answer.granted && answer.denial == .throttled)
                compared += 1
            }
            #expect(try compared == 3 && failures(store) == limits.maximumFailures)
            #expect(try store.loginGuard?.failureRecord(username: "bob")?.isLockedOut == true)
            // Locked out: the right password from anyone, cached or not, is denied.
            for client in [victim, stranger, nil] {
                #expect(try login(store, cache, right, from: client).denial == .lockedOut)
            }
            #expect(try failures(store) == limits.maximumFailures, "a locked-out attempt was counted")
        }
    }

    @Test("a locked-out or throttled stranger's answer never looks at the cache; a throttled owner's does")
    func whatIsLookedAt() throws {
        try withTemporaryDirectory { directory in
            let (store, _) = try guardedStore(
                directory, try GuardPolicy(freeFailures: 0, maximumFailures: 5, maximumDelay: 900))
            let guardian = try #require(store.loginGuard)
            let asked = Mutex<[String]>([])
            func lookUp(owner: Bool) -> LoginGuard.CacheLookUp {
                LoginGuard.CacheLookUp(
                    holds: {
                        asked.withLock { $0.append("holds") }
                        return true
                    },
                    isOwner: {
                        asked.withLock { $0.append("isOwner") }
                        return owner
                    })
            }
            func ask(owner: Bool) throws -> (CredentialStore.Verification?, [String]) {
                asked.withLock { $0 = [] }
                let answer = try guardian.cachedLogin(
                    username: Array("bob".utf8), client: victim, cache: lookUp(owner: owner))
                return (answer, asked.withLock { $0 })
            }
            // Free: the cache answers.
            let (free, freeAsked) = try ask(owner: false)
            #expect(free?.granted == true && freeAsked == ["holds"])
            // Throttled: a stranger is answered without the password being looked at; an owner is.
            try throttle(store, failures: 3)
            let (strangerAnswer, strangerAsked) = try ask(owner: false)
            #expect(strangerAnswer?.denial == .throttled && strangerAsked == ["isOwner"])
            let (ownerAnswer, ownerAsked) = try ask(owner: true)
            #expect(ownerAnswer?.granted == true && ownerAsked == ["isOwner", "holds"])
            // Locked out: nothing is looked at.
            try throttle(store, failures: 5)
            let (locked, lockedAsked) = try ask(owner: true)
            #expect(locked?.denial == .lockedOut && lockedAsked.isEmpty)
        }
    }

    @Test("a miss whose check finds the name throttled since, or that is never checked, is counted")
    func missesAreCounted() throws {
        try withTemporaryDirectory { directory in
            let (store, cache) = try guardedStore(
                directory, try GuardPolicy(freeFailures: 1, maximumFailures: 50, maximumDelay: 900))
            // The cache is asked while the name is free …
            guard
                case .uncached(let login) = try store.cachedAnswer(
                    usernameBytes: Array("bob".utf8), password: Password("guess"), client: stranger, cache: cache)
            else {
                Issue.record("a miss was answered")
                return
            }
            // … and the name is throttled before its check (concurrent requests): counted.
            try throttle(store, failures: 4)
            let checked = try store.verify(login, upgradeOnSuccess: false)
            #expect(try checked.denial == .throttled && failures(store) == 5)
            // A login the server will not check (no room to hash it): counted too.
            #expect(try store.countUnchecked(login).denial == .throttled && failures(store) == 6)
            // While free, a miss is checked (hashed) and counted as any login.
            try #require(store.loginGuard).resetFailures(username: "bob")
            guard
                case .uncached(let good) = try store.cachedAnswer(
                    usernameBytes: Array("bob".utf8), password: Password(right), client: victim, cache: cache)
            else {
                Issue.record("an uncached login was answered")
                return
            }
            #expect(try store.verify(good, upgradeOnSuccess: false).granted && failures(store) == 0)
            guard
                case .answered(let cached) = try store.cachedAnswer(
                    usernameBytes: Array("bob".utf8), password: Password(right), client: stranger, cache: cache)
            else {
                Issue.record("a cached login was not answered")
                return
            }
            #expect(cached.granted)
        }
    }

    @Test("the owners: a client owns a login it made or was answered from the cache; a file change forgets them")
    func owners() throws {
        try withTemporaryDirectory { directory in
            let (store, cache) = try guardedStore(directory, .standard)
            let name = Array("bob".utf8)
            #expect(!cache.isOwner(username: name, client: victim))
            #expect(try login(store, cache, right, from: victim).granted)
            #expect(cache.isOwner(username: name, client: victim) && !cache.isOwner(username: name, client: stranger))
            #expect(!cache.isOwner(username: name, client: nil))
            #expect(!cache.isOwner(username: Array("bobx".utf8), client: victim))
            #expect(try login(store, cache, right, from: stranger).granted)  // from the cache: it knew the password
            #expect(cache.isOwner(username: name, client: stranger))
            try store.changePassword(username: "bob", to: Password("another-river-stone"), storage: .hashed)
            #expect(!cache.isOwner(username: name, client: victim), "a changed file kept an owner")
        }
    }
}
