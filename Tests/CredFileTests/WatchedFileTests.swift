import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §13's files as servers keep them: read again when they change, the last good copy
/// kept (and the refusal reported once) when a new version is bad; and `--group`'s
/// requirement on the one login path.
@Suite struct WatchedFileTests {
    /// Replaces `path` by rename, as every writer does (a new inode).
    static func replace(_ path: String, _ text: String) throws {
        try writeText(path + ".new", text)
        #expect(rename(path + ".new", path) == 0)
    }

    @Test("re-read on change; a bad or missing version keeps the last good copy and is reported once")
    func lastGoodCopy() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("app.htgroup")
            try writeText(path, "admins: alice\n")
            let file = try WatchedFile(groupFile: path)
            #expect(file.current().value.groups(of: "alice") == ["admins"])
            try Self.replace(path, "admins: alice bob\n")
            #expect(file.current().value.isMember("bob", of: "admins"))
            try Self.replace(path, "admins alice\n")
            let bad = file.current()
            #expect(bad.value.isMember("bob", of: "admins"), "the last good copy answers")
            #expect(bad.refused?.contains("app.htgroup:1:") == true, "\(bad.refused ?? "nil")")
            #expect(file.current().refused == nil, "the same bad version is reported once")
            unlink(path)
            #expect(file.current().refused != nil)
            #expect(file.current().refused == nil && file.current().value.isMember("bob", of: "admins"))
            try Self.replace(path, "staff: carol\n")
            let good = file.current()
            #expect(good.refused == nil && good.value.groups(of: "carol") == ["staff"])
        }
    }

    @Test("at start a bad or missing file is an error naming FILE:LINE")
    func badAtStart() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("credfile.rules")
            try writeText(path, "allow host=a.example\nallow colour=blue\n")
            #expect(throws: CredFileError.self) { try WatchedFile(rulesFile: path) }
            do {
                _ = try WatchedFile(rulesFile: path)
            } catch let error as CredFileError {
                #expect(error.code == .usage && error.message.contains("credfile.rules:2:"), "\(error)")
            }
            #expect(throws: CredFileError.self) { try WatchedFile(rulesFile: directory.file("none")) }
        }
    }

    @Test("requiredGroup: a member is granted, a non-member with the right password denied as not-in-group")
    func requiredGroup() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file("users.txt")
            var store = CredentialStore(path: path, policy: try HashPolicy(rounds: 1000))
            store.passwordPolicy = .permissive
            try store.register(username: "alice", password: Password("Alice-Pass-2026!"), storage: .hashed)
            try store.register(username: "bob", password: Password("B0b-Pass-2026!~"), storage: .hashed)
            let groups = directory.file("app.htgroup")
            try writeText(groups, "mail: alice\n")
            store.requiredGroup = GroupRequirement(groups: try WatchedFile(groupFile: groups), group: "mail")
            let member = try store.verify(
                username: "alice", password: Password("Alice-Pass-2026!"), upgradeOnSuccess: false, client: nil)
            #expect(member.granted)
            let outsider = try store.verify(
                username: "bob", password: Password("B0b-Pass-2026!~"), upgradeOnSuccess: false, client: nil)
            #expect(!outsider.granted && outsider.denial == .notInGroup)
            let wrong = try store.verify(
                username: "bob", password: Password("B0b-Pass-2026!x"), upgradeOnSuccess: false, client: nil)
            #expect(!wrong.granted && wrong.denial == .wrongPassword)
        }
    }
}
