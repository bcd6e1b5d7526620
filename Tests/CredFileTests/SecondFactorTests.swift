import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

// SPEC §14's one-time codes in the library: liboath's TOTP against RFC 6238's own
// vectors, the users-file parser, the window of ±1 step, a code that works once, and the
// one login path asking a code of an enrolled user.

/// RFC 6238 Appendix B's SHA-1 key: "12345678901234567890".
private let rfcKey = SecretBytes(Array("12345678901234567890".utf8))

@Suite("Second factor (SPEC §14): TOTP through liboath")
struct SecondFactorTests {
    @Test("RFC 6238 Appendix B: the SHA-1, SHA-256 and SHA-512 vectors through liboath")
    func rfcVectors() throws {
        // (time, SHA-1, SHA-256, SHA-512), 8 digits, as the RFC prints them.
        let vectors: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        let key256 = SecretBytes(Array("12345678901234567890123456789012".utf8))
        let key512 = SecretBytes(Array("1234567890123456789012345678901234567890123456789012345678901234".utf8))
        for (time, sha1, sha256, sha512) in vectors {
            #expect(rfcKey.withUnsafeBytes { OATH.code(secret: $0, time: time, digits: 8) } == sha1)
            #expect(key256.withUnsafeBytes { OATH.code(secret: $0, time: time, digits: 8, digest: .sha256) } == sha256)
            #expect(key512.withUnsafeBytes { OATH.code(secret: $0, time: time, digits: 8, digest: .sha512) } == sha512)
            // The 6-digit code is the last six digits, and validation finds its step.
            let six = Array(sha1.suffix(6).utf8)
            #expect(rfcKey.withUnsafeBytes { OATH.code(secret: $0, time: time) } == String(sha1.suffix(6)))
            #expect(rfcKey.withUnsafeBytes { OATH.step(of: six, secret: $0, time: time) } == time / 30)
        }
    }

    @Test("a window of ±1 step: codes of the steps before and after pass, ±2 do not")
    func skew() throws {
        let now: Int64 = 1_234_567_890
        for (offset, passes) in [(-2, false), (-1, true), (0, true), (1, true), (2, false)] {
            let code = try #require(rfcKey.withUnsafeBytes { OATH.code(secret: $0, time: now + Int64(offset) * 30) })
            let step = rfcKey.withUnsafeBytes { OATH.step(of: Array(code.utf8), secret: $0, time: now) }
            #expect((step != nil) == passes, "offset \(offset)")
            if passes { #expect(step == now / 30 + Int64(offset)) }
        }
        #expect(rfcKey.withUnsafeBytes { OATH.step(of: Array("12345".utf8), secret: $0, time: now) } == nil)
    }

    @Test("the users file: real users.oath shapes parse, bad lines are named by number")
    func usersFile() throws {
        let good = """
            # pam_oath's users.oath
            HOTP/T30 alice - 3132333435363738393031323334353637383930
            HOTP/T30/6\tbob\t-\t00112233445566778899aabbccddeeff00112233 0 123456 2026-12-05T00:00:00L

            hotp/t30 carol - ABCDEF0123456789ABCDEF0123456789ABCDEF01\r
            """
        let file = try OTPFile(parsing: Array(good.utf8), path: "u.oath")
        #expect(file.entries.map { String(decoding: $0.user, as: UTF8.self) } == ["alice", "bob", "carol"])
        #expect(file.entries.map(\.line) == [2, 3, 5])
        #expect(file.entry(for: "alice".utf8)?.secret == SecretBytes(Array("12345678901234567890".utf8)))
        let bad: [(String, String)] = [
            ("HOTP alice - 3132", "u.oath:1: type HOTP"),
            ("HOTP/T60 alice - 3132", "u.oath:1: type"),
            ("# c\nHOTP/T30 alice 1234 3132", "u.oath:2: a PIN"),
            ("HOTP/T30 alice - 313", "u.oath:1: the secret"),
            ("HOTP/T30 alice - zz", "u.oath:1: the secret"),
            ("HOTP/T30 alice -", "u.oath:1: a line needs"),
            ("HOTP/T30 a - 31\nHOTP/T30 a - 32", "u.oath:2: a second line"),
        ]
        for (text, message) in bad {
            #expect(throws: CredFileError.self) { try OTPFile(parsing: Array(text.utf8), path: "u.oath") }
            do {
                _ = try OTPFile(parsing: Array(text.utf8), path: "u.oath")
            } catch {
                #expect(error.message.hasPrefix(message), "\(text): \(error.message)")
            }
        }
        // A rewrite keeps every other line byte for byte.
        let replaced = OTPFile.replacing(user: Array("bob".utf8), in: Array(good.utf8), with: Array("X".utf8))
        #expect(String(decoding: replaced, as: UTF8.self).contains("# pam_oath's users.oath\nHOTP/T30 alice"))
        #expect(!String(decoding: replaced, as: UTF8.self).contains("bob"))
        #expect(replaced.suffix(2) == Array("X\n".utf8))
    }

    @Test(
        "enrolment saves after one good code (which counts as used); a code works once; removal",
        arguments: ["sqlite", "postgresql"])
    func enrolAndReplay(_ backend: String) throws {
        try withTemporaryDirectory { directory in
            let credentials = directory.file("app.cred")
            // SPEC §15: the code steps in PostgreSQL behave as in the SQLite file.
            let state = backend == "postgresql" ? try PostgreSQLServer.shared().freshDatabase() : nil
            let factor = try SecondFactor(credentialFile: credentials, state: state)
            let now: Int64 = 1_800_000_000
            let enrolment = try factor.newEnrolment(usernameBytes: "bob".utf8, issuer: "Example Co")
            #expect(enrolment.uri.hasPrefix("otpauth://totp/Example%20Co:bob?secret="))
            let code = try #require(SecondFactor.code(secret: enrolment.secret, time: now))
            #expect(
                try !factor.enroll(
                    enrolment, code: Array("000000".utf8).map { $0 == Array(code.utf8)[0] ? $0 + 1 : $0 }, time: now))
            #expect(try !factor.isEnrolled(usernameBytes: "bob".utf8))
            #expect(try factor.enroll(enrolment, code: code.utf8, time: now))
            #expect(try factor.isEnrolled(usernameBytes: "bob".utf8))
            var info = stat()
            #expect(stat(factor.otpFile, &info) == 0 && info.st_mode & 0o777 == 0o600)
            // The enrolment's code is used; so is the step before once a later one passed.
            #expect(try !factor.accept(usernameBytes: "bob".utf8, code: code.utf8, time: now))
            let next = try #require(SecondFactor.code(secret: enrolment.secret, time: now + 30))
            #expect(try factor.accept(usernameBytes: "bob".utf8, code: next.utf8, time: now + 30))
            #expect(try !factor.accept(usernameBytes: "bob".utf8, code: next.utf8, time: now + 30))
            #expect(try !factor.accept(usernameBytes: "bob".utf8, code: code.utf8, time: now + 30))
            #expect(try factor.remove(usernameBytes: "bob".utf8))
            #expect(try !factor.remove(usernameBytes: "bob".utf8))
            #expect(try !factor.isEnrolled(usernameBytes: "bob".utf8))
        }
    }

    @Test("a version-2 state database (failures, sessions) gains code_steps by migration 3, keeping its rows")
    func migration() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/app.cred.guard.db"
            #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
            do {
                let old = try SQLiteConnection(path: path, busyTimeout: 1000)
                try old.execute(SQLiteStateStore.migrations[0])
                try old.execute(SQLiteStateStore.migrations[1])
                try old.execute("INSERT INTO failures VALUES (x'626f62', 3, 1000, 0); PRAGMA user_version = 2")
            }
            let store = SQLiteStateStore(path: path, owner: nil)
            #expect(try store.write { try $0.codeSteps.accept(user: Array("bob".utf8), step: 7) })
            #expect(try !store.write { try $0.codeSteps.accept(user: Array("bob".utf8), step: 7) })
            #expect(try !store.write { try $0.codeSteps.accept(user: Array("bob".utf8), step: 6) })
            #expect(try store.write { try $0.codeSteps.accept(user: Array("bob".utf8), step: 8) })
            #expect(try store.read { try $0.codeSteps.lastStep(user: Array("bob".utf8)) } == 8)
            let connection = try SQLiteConnection(path: path, busyTimeout: 1000)
            #expect(try SQLiteStateStore.userVersion(connection) == SQLiteStateStore.schemaVersion)
            #expect(try GuardDatabase(path: path, owner: nil).row(Array("bob".utf8))?.count == 3)
        }
    }
}
