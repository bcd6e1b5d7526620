import CredFileTestSupport
import Testing

@testable import CredFile

/// ``CryptSetting`` against libxcrypt itself (SPEC §3.2: `{CRYPT}` holds any hash
/// libxcrypt computes; "let libxcrypt decide"): on seeded random settings of every method
/// (cheap costs, salts of every byte libxcrypt takes), what libxcrypt writes parses and
/// verifies; a mutation the parser accepts is one libxcrypt computes and gives back in the
/// same shape; and at the last character of a salt or hash, the parser accepts exactly
/// the characters libxcrypt writes there.
@Suite("crypt(3) settings against libxcrypt")
struct CryptSettingTests {
    static let alphabet = Array("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// What libxcrypt writes for `password` and `setting`, or nil when it refuses.
    static func crypt(_ password: [UInt8], _ setting: [UInt8]) -> [UInt8]? {
        Libxcrypt.crypt(SecretBytes(password), setting: setting[...]) { $0.map { Array($0) } }
    }

    /// The parse of `text` inside `{CRYPT}`, where every method is verified.
    static func parsed(_ text: [UInt8]) -> CryptHash? {
        guard case .hash(let hash) = LDAPCryptFamily.parse(ArraySlice(Array("{CRYPT}".utf8) + text)) else { return nil }
        return hash as? CryptHash
    }

    struct Method: Sendable, CustomTestStringConvertible {
        let name: String
        /// A random setting of this method at a cheap cost.
        let setting: @Sendable (inout SeededRandom) -> [UInt8]
        var testDescription: String { name }
    }

    static func salt(_ random: inout SeededRandom, count: ClosedRange<Int>, from bytes: [UInt8]) -> [UInt8] {
        (0..<Int.random(in: count, using: &random)).map { _ in random.pick(bytes) }
    }

    /// Bytes for sha-crypt and md5crypt salts: printable ASCII but `$` (a credential file's
    /// line holds no control byte), so some that libxcrypt refuses (space, `!*:;\`) and many
    /// it takes (punctuation: `$1$,,,,,,,,$…` of its own tests).
    static let saltBytes = (0x20...0x7E).map(UInt8.init).filter { $0 != UInt8(ascii: "$") }

    static let methods: [Method] = [
        Method(name: "bcrypt $2b$") { r in Array("$2b$04$".utf8) + salt(&r, count: 22...22, from: alphabet) },
        Method(name: "bcrypt $2x$") { r in Array("$2x$04$".utf8) + salt(&r, count: 22...22, from: alphabet) },
        Method(name: "sha256-crypt") { r in Array("$5$rounds=1000$".utf8) + salt(&r, count: 0...16, from: saltBytes) },
        Method(name: "sha512-crypt") { r in Array("$6$".utf8) + salt(&r, count: 0...16, from: saltBytes) },
        Method(name: "md5crypt") { r in Array("$1$".utf8) + salt(&r, count: 0...8, from: saltBytes) },
        Method(name: "yescrypt") { r in Array("$y$j7.$".utf8) + salt(&r, count: 0...30, from: alphabet) },
        Method(name: "gost-yescrypt") { r in Array("$gy$j7.$".utf8) + salt(&r, count: 0...30, from: alphabet) },
        Method(name: "scrypt $7$") { r in Array("$7$7/..../....".utf8) + salt(&r, count: 0...20, from: alphabet) },
        Method(name: "sha1-crypt") { r in
            Array("$sha1$\(Int.random(in: 1...40, using: &r))$".utf8) + salt(&r, count: 1...64, from: alphabet)
        },
        Method(name: "SunMD5") { r in
            Array((r.next() & 1 == 0 ? "$md5$" : "$md5,rounds=\(Int.random(in: 1...50, using: &r))$").utf8)
                + salt(&r, count: 0...12, from: alphabet) + (r.next() & 1 == 0 ? [] : Array("$".utf8))
        },
        Method(name: "NT") { _ in Array("$3$".utf8) },
        Method(name: "BSDi") { r in
            Array("_".utf8) + [random(&r), UInt8(ascii: "."), UInt8(ascii: "."), UInt8(ascii: ".")]
                + salt(&r, count: 4...4, from: alphabet)
        },
        Method(name: "DES") { r in salt(&r, count: 2...2, from: alphabet) },
        // A setting longer than 13 characters asks for bigcrypt (libxcrypt's gensalt adds 12 dots).
        Method(name: "bigcrypt") { r in salt(&r, count: 2...2, from: alphabet) + Array("............".utf8) },
    ]

    static func random(_ r: inout SeededRandom) -> UInt8 { r.pick(alphabet) }

    /// A random password: ASCII, sometimes UTF-8, sometimes long (bigcrypt's blocks).
    static func password(_ r: inout SeededRandom) -> [UInt8] {
        let base = Array("pässwörd-".utf8) + salt(&r, count: 0...40, from: (0x21...0x7E).map(UInt8.init))
        return Array(base.prefix(Int.random(in: 1...base.count, using: &r)))
    }

    @Test(arguments: methods)
    func whatLibxcryptWritesParsesAndVerifies(_ method: Method) throws {
        var random = SeededRandom(seed: UInt64(method.name.utf8.reduce(7) { $0 &* 31 &+ UInt64($1) }))
        var (accepted, refused) = (0, 0)
        var template: [UInt8]? = nil  // the hash part of a real output, to pair with refused settings
        var refusedSettings: [[UInt8]] = []
        for _ in 0..<80 {
            let pw = Self.password(&random)
            let setting = method.setting(&random)
            guard let out = Self.crypt(pw, setting) else {
                refusedSettings.append(setting)
                continue
            }
            let hash = try #require(Self.parsed(out), "\(method.name): \(String(decoding: out, as: UTF8.self)) refused")
            #expect(try hash.verify(SecretBytes(pw)))
            // (DES, and bigcrypt's one-block hashes, which are DES, read 8 bytes of the password.)
            let truncates = method.name == "DES" || (method.name == "bigcrypt" && out.count == 13)
            #expect(try !hash.verify(SecretBytes(pw + [0x21])) || truncates, "\(method.name)")
            template = out.lastIndex(of: UInt8(ascii: "$")).map { Array(out[$0...]) }
            accepted += 1
        }
        // A setting libxcrypt refuses (a salt it cannot decode, a byte it bans) is refused
        // by the parser too, whatever hash follows it: found by `check`, never an error at login.
        if let template {
            for setting in refusedSettings {
                let candidate = (setting.last == UInt8(ascii: "$") ? Array(setting.dropLast()) : setting) + template
                #expect(Self.parsed(candidate) == nil, "\(method.name): \(String(decoding: candidate, as: UTF8.self))")
                refused += 1
            }
        }
        #expect(accepted >= 20, "\(method.name): libxcrypt refused most settings")
    }

    /// Whatever the parser accepts among mutations of real outputs is a string libxcrypt
    /// computes and gives back in the same shape (its setting, then a hash as long).
    @Test(arguments: methods)
    func whatTheParserAcceptsLibxcryptComputes(_ method: Method) throws {
        var random = SeededRandom(seed: UInt64(method.name.utf8.reduce(11) { $0 &* 131 &+ UInt64($1) }))
        let interesting = Array("$.:/,=rounds0123456789zZ".utf8) + [0x20, 0x7E, 0xC3, 0xA9]
        var checked = 0
        for _ in 0..<300 {
            let pw = Self.password(&random)
            guard var text = Self.crypt(pw, method.setting(&random)) else { continue }
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let at = Int.random(in: 0..<text.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: text[at] = random.pick(interesting)
                case 1: text.insert(random.pick(Self.alphabet), at: at)
                case 2: text.remove(at: at)
                default: text[at] = random.pick(Self.alphabet)
                }
                if text.isEmpty { text = [UInt8(ascii: "$")] }
            }
            // A mutation may raise the cost (bcrypt 04 → 24): what the limits would refuse is not run here.
            guard let hash = Self.parsed(text), hash.estimatedWork < 2_000_000, hash.estimatedMemory < 64 << 20 else {
                continue
            }
            checked += 1
            let out = try #require(
                Self.crypt(pw, text),
                "\(method.name): accepted \(String(decoding: text, as: UTF8.self)), libxcrypt refuses it")
            // (DES and bigcrypt write one 11-character block per 8 bytes of the password,
            // whatever the stored string's length: only the salt must come back.)
            let lengthFollowsThePassword = method.name == "DES" || method.name == "bigcrypt"
            #expect(
                lengthFollowsThePassword || out.count == text.count,
                "\(method.name): \(String(decoding: text, as: UTF8.self)) → \(String(decoding: out, as: UTF8.self))")
            // The setting part comes back as it was: the hash's characters are the only change.
            let settingLength = out.lastIndex(of: UInt8(ascii: "$")).map { $0 + 1 } ?? (method.name == "BSDi" ? 9 : 2)
            #expect(
                out.prefix(settingLength) == text.prefix(settingLength),
                "\(method.name): \(String(decoding: text, as: UTF8.self))")
        }
        #expect(checked >= 20, "\(method.name): too few mutations accepted to say anything")
    }

    /// At the last character of the hash (and of bcrypt's salt), where the digest leaves
    /// bits unused, the parser accepts exactly what libxcrypt writes there over many
    /// passwords: no spelling libxcrypt would never give back.
    @Test(arguments: methods)
    func theLastCharacterIsWhatLibxcryptWrites(_ method: Method) throws {
        var random = SeededRandom(seed: 99)
        var setting = method.setting(&random)
        for _ in 0..<50 where Self.crypt(Array("pw".utf8), setting) == nil { setting = method.setting(&random) }
        var written = Set<UInt8>()
        var sample: [UInt8] = []
        // sha1-crypt's last character carries 6 bits of the digest: 64 values to see.
        for index in 0..<(method.name == "sha1-crypt" ? 1500 : 240) {
            guard let out = Self.crypt(Array("pw \(index)".utf8), setting) else { continue }
            written.insert(out[out.count - 1])
            sample = out
        }
        try #require(!sample.isEmpty)
        let accepted = Set(Self.alphabet.filter { c in Self.parsed(Array(sample.dropLast()) + [c]) != nil })
        #expect(accepted == written, "\(method.name): accepts \(accepted.count), libxcrypt writes \(written.count)")
        if method.name.hasPrefix("bcrypt") {
            // The salt's 22nd character: libxcrypt writes it canonical whatever the setting had.
            let salts = Set(
                Self.alphabet.compactMap { c -> UInt8? in
                    Self.crypt(Array("pw".utf8), Array(setting.prefix(28)) + [c]).map { $0[28] }
                })
            let acceptedSalts = Set(
                Self.alphabet.filter { c in
                    var text = sample
                    text[28] = c
                    return Self.parsed(text) != nil
                })
            #expect(acceptedSalts == salts)
        }
    }
}
