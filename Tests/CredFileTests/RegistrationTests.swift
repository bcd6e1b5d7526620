import Foundation
import Testing

@testable import CredFile

/// SPEC §12 in the library: invitation codes (their text form and parser), the
/// invitations in the state database (single use, expiring, bound, revoked), the hourly
/// limits, and ``CredentialStore/register(username:password:invitation:registrations:storage:now:)``.
@Suite struct RegistrationTests {
    static func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.path + "/credfile-registration-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        return directory
    }

    static func store(_ directory: String) throws -> CredentialStore {
        var store = CredentialStore(path: directory + "/users.txt", policy: try HashPolicy(rounds: 1000))
        store.passwordPolicy = .standard
        return store
    }

    @Test("a code: 24 characters in six groups, 120 bits, parsed back as people type it")
    func codeText() throws {
        let code = try InvitationCode.generate()
        let text = code.text
        #expect(text.count == 29 && text.split(separator: "-").map(\.count) == [4, 4, 4, 4, 4, 4])
        #expect(InvitationCode.byteCount * 8 >= 100)
        let forms = [
            text, text.lowercased(), text.replacingOccurrences(of: "-", with: ""),
            text.replacingOccurrences(of: "-", with: " "), " " + text + " ",
            text.replacingOccurrences(of: "0", with: "O").replacingOccurrences(of: "1", with: "l"),
        ]
        for form in forms {
            let parsed = try #require(InvitationCode(parsing: Array(form.utf8)), "\(form)")
            #expect(parsed.digest == code.digest && parsed.text == text)
        }
        #expect("\(code)" == "InvitationCode(redacted)")
    }

    @Test(
        "not a code: too short, too long, a letter outside the alphabet, other punctuation, over 200 bytes",
        arguments: [
            "", "ABCD", "0000-0000-0000-0000-0000-000", "0000-0000-0000-0000-0000-00000",
            "0000-0000-0000-0000-0000-000U", "0000_0000_0000_0000_0000_0000", "0000-0000-0000-0000-0000-000é",
            String(repeating: "-", count: 190) + "000000000000000000000000",
        ])
    func notACode(_ text: String) {
        #expect(InvitationCode(parsing: Array(text.utf8)) == nil)
    }

    @Test("invitations: single use, expiring, bound to a name, revoked; only the SHA-256 stored")
    func invitations() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let registrations = Registrations(statePath: directory + "/users.txt.guard.db")
        let issued = try registrations.issue(count: 3, lifetime: 100, user: nil, now: 1000)
        let bound = try registrations.issue(count: 1, lifetime: 100, user: "dora", now: 1000)[0]
        #expect(try registrations.accepts(issued[0].code, username: "x", now: 1099))
        #expect(try !registrations.accepts(issued[0].code, username: "x", now: 1100), "expired at its second")
        #expect(try registrations.accepts(bound.code, username: "dora", now: 1000))
        #expect(try !registrations.accepts(bound.code, username: "carla", now: 1000))
        let id = try #require(try registrations.redeem(issued[0].code, username: "x", now: 1001))
        #expect(try registrations.redeem(issued[0].code, username: "y", now: 1002) == nil, "used once")
        try registrations.unredeem(id: id)
        #expect(try registrations.accepts(issued[0].code, username: "y", now: 1002))
        #expect(try registrations.revoke(id: issued[1].id))
        #expect(try !registrations.accepts(issued[1].code, username: "x", now: 1000))
        #expect(try registrations.invitations().map(\.id) == [issued[0].id, issued[2].id, bound.id])
        #expect(try registrations.invitations().last?.user == "dora")
        // The database holds no code: not its text, not its bytes.
        let database = try Data(contentsOf: URL(fileURLWithPath: registrations.path))
        for invitation in issued + [bound] {
            #expect(database.range(of: Data(invitation.code.text.utf8)) == nil)
            #expect(invitation.code.bytes.withUnsafeBytes { database.range(of: Data($0)) } == nil)
        }
        #expect(try registrations.revokeAll() == 3)
        #expect(throws: CredFileError.self) { try registrations.issue(count: 0, lifetime: 1, user: nil) }
        #expect(throws: CredFileError.self) { try registrations.issue(count: 1, lifetime: 1, user: "a,b") }
    }

    @Test("limits: per address and in all, over a sliding hour; a released ticket uses up nothing")
    func limits() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let registrations = Registrations(statePath: directory + "/g.db")
        let limits = RegistrationLimits(perAddress: 2, total: 3)
        #expect(try registrations.admit(client: "a", limits: limits, now: 0) != nil)
        let second = try #require(try registrations.admit(client: "a", limits: limits, now: 10))
        #expect(try registrations.admit(client: "a", limits: limits, now: 20) == nil)
        try registrations.release(second)
        #expect(try registrations.admit(client: "a", limits: limits, now: 30) != nil)
        #expect(try registrations.admit(client: "b", limits: limits, now: 40) != nil)
        #expect(try registrations.admit(client: "c", limits: limits, now: 50) == nil, "the total")
        #expect(try registrations.admit(client: "c", limits: limits, now: 3601) != nil, "an hour later")
        #expect(
            try registrations.admit(client: nil, limits: RegistrationLimits(perAddress: 0, total: 9), now: 3602) != nil)
    }

    @Test(
        "register with an invitation: the code first, the name's rules, the code used once, kept when the name is taken"
    )
    func registerWithInvitation() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Self.store(directory)
        let registrations = Registrations(statePath: directory + "/users.txt.guard.db")
        let code = try registrations.issue(count: 1, lifetime: 3600, user: nil)[0].code
        let password = Password("naranjo-en-flor-2026")
        try store.register(username: "valencia", password: password, storage: .hashed)
        #expect(throws: CredFileError(.userExists, "user already exists")) {
            try store.register(username: "valencia", password: password, invitation: code, registrations: registrations)
        }
        let wrong = try InvitationCode.generate()
        for name in ["valencia", "bruno", "a,b"] {
            #expect(throws: CredFileError(.invitationRefused, "")) {
                try store.register(username: name, password: password, invitation: wrong, registrations: registrations)
            }
        }
        try store.register(username: "bruno", password: password, invitation: code, registrations: registrations)
        #expect(throws: CredFileError(.invitationRefused, "")) {
            try store.register(username: "carla", password: password, invitation: code, registrations: registrations)
        }
        #expect(try store.authenticate(username: "bruno", password: "naranjo-en-flor-2026"))
        #expect(try !store.hasEntry(named: "carla"))
    }
}
