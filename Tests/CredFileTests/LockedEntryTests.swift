import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// SPEC §2's locked entries (`!` before a hash of a verified scheme, as `usermod -L`):
// parsed, listed, checked, exported, never authenticated; locked and unlocked by the
// store. Through the CLI: CLITests/GuardCLITests.swift.

/// A hash of `password` at 1,000 rounds.
private func hash(_ password: String) throws -> String {
    try PasswordHash(hashing: Password(password), policy: HashPolicy(rounds: 1000)).string
}

/// Real sha512-crypt and `{SSHA}` hashes of "locked-password-1" (`openssl passwd -6`, Python's hashlib).
private let sha512Crypt =
    "$6$saltsalt$F23W8DBSVc1Y8/2MnJFAOi0nSIgyIHyC5UEebofolfaPc81L1PY1u3RtdKT0vuqjMH9JiGVnmsel3b7illWOc."
private let ssha = "{SSHA}RfD4J3fP/3hcFopO3aWkVoL3lPYxMjM0NTY3OA=="

/// The secret of `u`'s entry in `u,<secret>`.
private func classify(_ secret: String) -> StoredSecret? {
    CredentialFile("u,\(secret)\n").firstEntry(named: "u")?.entry?.secret
}

@Suite("Locked entries (SPEC §2)")
struct LockedEntryTests {
    @Test("! before a verified hash is locked; ! before anything else is the legacy plaintext it always was")
    func classification() throws {
        let own = try hash("locked-password-1")
        for locked in ["!" + own, "!" + sha512Crypt, "!" + ssha] {
            guard case .locked(let inner)? = classify(locked) else {
                Issue.record("\(locked) is \(classify(locked)?.storageDescription ?? "nothing")")
                continue
            }
            #expect(inner == classify(String(locked.dropFirst())), "\(locked)")
        }
        for legacy in ["!", "!password", "!{FOO}abc", "!$pbkdf2-sha256$x", "!!" + own, "!$99$abc$def", "! " + own] {
            #expect(classify(legacy) == .plaintext, "\(legacy)")
        }
    }

    @Test("list shows locked before the scheme, through the fast path too; check reports no error and no plaintext")
    func listAndCheck() throws {
        let own = try hash("locked-password-1")
        let file = CredentialFile("a,!\(own)\nb,!\(ssha)\nc,!\(sha512Crypt)\n")
        let policy = try HashPolicy(rounds: 1000)
        #expect(
            file.listing(policy: policy).map(\.storage.description) == [
                "locked pbkdf2-sha256 1000", "locked {SSHA}", "locked sha512-crypt 5000",
            ])
        #expect(file.listing(policy: policy).allSatisfy { $0.storage.isLocked })
        var listed: [UInt8] = []
        file.forEachListingBlock(policy: policy) { listed += $0 }
        #expect(String(decoding: listed, as: UTF8.self).hasPrefix("a\tlocked pbkdf2-sha256 1000\nb\tlocked {SSHA}\n"))
        let findings = file.findings(policy: policy)
        #expect(!findings.contains { $0.severity == .error || $0.kind == .plaintext }, "\(findings.map(\.message))")
        // The hash behind the `!` is still judged: a weak scheme warns (it is weak again once unlocked).
        #expect(findings.contains { $0.line == 2 && $0.kind == .weakHash })
    }

    @Test("a locked entry never authenticates, with a reason of its own; export refuses it")
    func neverAuthenticates() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("l.cred")
            try writeText(path, "a,!\(try hash("locked-password-1"))\nb,!\(sha512Crypt)\n")
            let store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1000))
            for user in ["a", "b"] {
                let result = try store.verify(
                    username: user, password: Password("locked-password-1"), upgradeOnSuccess: true)
                #expect(!result.granted && result.denial == .locked && !result.upgraded, "\(user)")
            }
            let (records, unexportable) = try LDIFExport(baseDN: "dc=example,dc=org").export(try store.read())
            #expect(records.isEmpty && unexportable.map(\.line) == [1, 2])
            #expect(unexportable.allSatisfy { $0.reason.hasPrefix("locked entry") })
        }
    }

    @Test("lock writes ! before the hash (a plaintext entry hashed first), unlock removes it and nothing else")
    func lockAndUnlock() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("u.cred")
            let own = try hash("hashed-password-1")
            let original = "# users\nplain,legacy-password-1\r\nhashed,\(own)\npeer,\(sha512Crypt)\nplain,shadowed\n"
            try writeText(path, original)
            var store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1000))
            #expect(try store.lock(username: "hashed"))
            #expect(try store.lock(username: "peer"))
            #expect(try store.lock(username: "plain"))
            #expect(try !store.lock(username: "plain"), "locking twice changes nothing")
            let locked = try String(decoding: readBytes(path), as: UTF8.self)
            // Split as bytes: "\r\n" is one Character, which a String split on "\n" keeps whole.
            let lines = locked.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            #expect(lines[0] == "# users" && lines[4] == "plain,shadowed")
            #expect(lines[1].hasPrefix("plain,!$pbkdf2-sha256$1000$") && lines[1].hasSuffix("\r"), "kept its CRLF")
            #expect(lines[2] == "hashed,!" + own && lines[3] == "peer,!" + sha512Crypt)
            for (user, password) in [
                ("plain", "legacy-password-1"), ("hashed", "hashed-password-1"), ("peer", "locked-password-1"),
            ] {
                #expect(try !store.authenticate(username: user, password: password), "\(user) while locked")
            }
            // Unlock clears the guard's failures too.
            store.loginGuard = try LoginGuard(
                credentialFile: path, policy: try GuardPolicy(maximumFailures: 1), log: .none, service: "test")
            _ = try store.authenticate(username: "hashed", password: "wrong")
            #expect(try store.loginGuard?.failureRecord(username: "hashed")?.isLockedOut == true)
            for user in ["plain", "hashed", "peer"] { #expect(try store.unlock(username: user)) }
            #expect(try !store.unlock(username: "plain"), "unlocking an unlocked entry changes nothing")
            #expect(try store.loginGuard?.failureRecord(username: "hashed") == nil)
            let unlocked = try String(decoding: readBytes(path), as: UTF8.self)
            #expect(unlocked == locked.replacingOccurrences(of: ",!", with: ","), "unlock removed more than the !")
            for (user, password) in [
                ("plain", "legacy-password-1"), ("hashed", "hashed-password-1"), ("peer", "locked-password-1"),
            ] {
                #expect(try store.authenticate(username: user, password: password), "\(user) after unlock")
            }
        }
    }

    @Test("lock and unlock: a name with no entry is userNotFound, an entry without a verified hash cannot be locked")
    func lockRefusals() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("r.cred")
            try writeText(path, "mal,$pbkdf2-sha256$x\nuns,{FOO}abc\n")
            let store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1000))
            let before = try readBytes(path)
            #expect(throws: CredFileError(.userNotFound, "")) { try store.lock(username: "nobody") }
            #expect(throws: CredFileError(.userNotFound, "")) { try store.unlock(username: "nobody") }
            #expect(throws: CredFileError(.malformedFile, "")) { try store.lock(username: "mal") }
            #expect(throws: CredFileError(.malformedFile, "")) { try store.lock(username: "uns") }
            #expect(try readBytes(path) == before)
        }
    }

    @Test("a new plaintext password may not be ! before hash syntax; other passwords starting with ! may")
    func newPlaintextPasswords() throws {
        for refused in ["!" + (try hash("x")), "!{FOO}abc", "!" + sha512Crypt, "!$pbkdf2-sha256$x"] {
            #expect(throws: CredFileError.self, "\(refused)") {
                try PasswordRules.validate(Password(refused), plaintext: true)
            }
        }
        for accepted in ["!hello-there-friend", "!", "a!$x"] {
            #expect(throws: Never.self) { try PasswordRules.validate(Password(accepted), plaintext: true) }
        }
    }
}
