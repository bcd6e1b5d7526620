import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension FuzzChecks {
    /// FuzzRegistration (SPEC §12): the first byte even → the rest is an invitation code as
    /// a person types it; odd → the rest is the register page's form body (`username`,
    /// `password`, `code`), registered with bit 1 of the first byte in `invite` mode (a
    /// `code` of `GOOD` stands for a code just issued) into a file holding only `alice`.
    public static func registration(_ input: [UInt8], directory: String) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let rest = Array(input.dropFirst())
        if selector % 2 == 0 {
            try invitationCode(rest)
        } else {
            try registrationForm(rest, invited: selector & 2 != 0, directory: directory)
        }
    }

    // MARK: The code parser

    /// `InvitationCode(parsing:)` accepts exactly what a naive reading accepts (at most
    /// 200 bytes; `-` and space skipped; 24 characters of Crockford's alphabet in any case,
    /// `O` read as `0`, `I` and `L` as `1`), and prints the canonical characters in six
    /// groups of four; the printed code parses back to itself.
    static func invitationCode(_ text: [UInt8]) throws(FuzzFailure) {
        let parsed = InvitationCode(parsing: text)
        let expected = naiveCode(text)
        try expect((parsed == nil) == (expected == nil), "code: accepted \(parsed != nil), naive \(expected != nil)")
        guard let parsed, let expected else { return }
        try expect(parsed.text == expected, "code: printed differently from the naive reading")
        try expect(InvitationCode(parsing: Array(parsed.text.utf8))?.text == parsed.text, "code: no round trip")
    }

    /// The canonical text of a typed code, or nil.
    static func naiveCode(_ text: [UInt8]) -> String? {
        guard text.count <= 200 else { return nil }
        let alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
        var characters: [Character] = []
        for byte in text where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") {
            guard byte < 0x80 else { return nil }
            var character = Character(Unicode.Scalar(byte)).uppercased()
            if character == "O" { character = "0" }
            if character == "I" || character == "L" { character = "1" }
            guard character.count == 1, let one = character.first, alphabet.contains(one) else { return nil }
            characters.append(one)
        }
        guard characters.count == 24 else { return nil }
        return stride(from: 0, to: 24, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }

    // MARK: The form

    /// What the page's form leads to, by the library's one registration (the portal's
    /// call), against a naive reading of SPEC §2 and §12: a wrong code → `invitationRefused`
    /// whatever the name; a name or password outside §2 → `usage`; `alice` (after NFC) →
    /// `userExists` and the code kept; else exactly one line appended, a hash of the
    /// policy that verifies the password, and the code used up. A refusal writes nothing.
    static func registrationForm(_ body: [UInt8], invited: Bool, directory: String) throws(FuzzFailure) {
        guard let form = FormFields(parsing: body), let username = form.text("username"),
            let typed = form.secret("password"), typed.count > 0, typed.count <= 4000
        else { return }
        let path = directory + "/registration.txt"
        unlink(path)
        var store = CredentialStore(path: path, policy: (try? HashPolicy(rounds: 1)) ?? .standard)
        store.passwordPolicy = .permissive
        let registrations = Registrations(statePath: directory + "/registration.guard.db")
        do {
            try store.register(username: "alice", password: Password("alice-password"), storage: .plaintext)
        } catch {
            try expect(false, "form: the fixture could not be written: \(error)")
        }
        let before = (try? store.read().render()) ?? []
        let password = typed.withUnsafeBytes { Password(utf8: $0) }
        let passwordBytes = typed.withUnsafeBytes { Array($0) }
        var code: InvitationCode?
        var goodCode = false
        if invited {
            let issued = try? registrations.issue(count: 1, lifetime: 3600, user: nil)
            let given = form.text("code")
            goodCode = given == "GOOD"
            code = goodCode ? issued?.first?.code : given.flatMap { InvitationCode(parsing: Array($0.utf8)) }
            if code == nil { return }  // the page answers a code that does not parse before any call
        }
        var outcome: CredFileError.Code? = nil
        do {
            if let code {
                try store.register(
                    username: username, password: password, invitation: code, registrations: registrations)
            } else {
                try store.register(username: username, password: password, storage: .hashed)
            }
        } catch let error as CredFileError {
            outcome = error.code
        } catch {
            try expect(false, "form: not a CredFileError: \(error)")
        }
        let after = (try? store.read().render()) ?? []
        let validPassword = !passwordBytes.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
        let expected: CredFileError.Code? =
            if invited && !goodCode {
                .invitationRefused
            } else if !Reference.usernameIsValid(username) || !validPassword { .usage } else if username == "alice" {
                .userExists
            } else { nil }
        try expect(
            outcome == expected,
            "form: \(outcome.map { "\($0)" } ?? "registered"), expected \(expected.map { "\($0)" } ?? "registered")")
        if expected != nil {
            try expect(after == before, "form: a refused registration changed the file")
            if let code, goodCode {
                try expect(
                    (try? registrations.accepts(code, username: "bruno")) == true, "form: a refusal used the code")
            }
            return
        }
        try expect(Array(after.prefix(before.count)) == before, "form: an earlier line changed")
        let added = Array(after.dropFirst(before.count))
        let prefix = Array((username + ",$pbkdf2-sha256$1$").utf8)
        try expect(added.starts(with: prefix) && added.last == 0x0A, "form: the new line is not name,hash LF")
        try expect(added.filter { $0 == 0x0A }.count == 1, "form: more than one line added")
        let granted = (try? store.verify(username: username, password: password, upgradeOnSuccess: false))?.granted
        try expect(granted == true, "form: the new entry does not verify its password")
        if let code {
            try expect((try? registrations.accepts(code, username: "bruno")) == false, "form: the code still works")
        }
    }
}
