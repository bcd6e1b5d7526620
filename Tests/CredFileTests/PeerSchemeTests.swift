import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

@testable import CredFile

// The peer hash families verified through libxcrypt, libargon2 and OpenSSL's scrypt and
// digests (SPEC §3.2): hashes written by the real peers verify with the right password
// and only with it, the hash string itself never logs in, hostile parameters and broken
// strings are malformed before any work, and the peers still accept what credfile keeps.

// MARK: - Helpers

/// One hash written by a peer, from Vectors/peers-*.txt.
struct PeerVector: Sendable, CustomTestStringConvertible {
    let file: String
    let line: Int
    let tool: String
    let password: [UInt8]
    let scheme: String
    let weak: Bool
    let hash: String

    init(_ block: VectorBlock) throws {
        file = block.file
        line = block.line
        tool = try block.string("tool")
        password = try block.bytes("password")
        scheme = try block.string("scheme")
        weak = try block.string("weak") == "yes"
        hash = try block.string("hash")
    }

    var testDescription: String { "\(file):\(line) \(tool) → \(scheme)" }

    static let files = ["peers-debian.txt", "peers-pypi.txt"]

    static func loadAll() throws -> [PeerVector] {
        try files.flatMap { try VectorFile.load($0).map(PeerVector.init) }
    }

    /// For test arguments; ``PeerSchemeTests/vectorFilesHoldEveryFamily()`` fails loudly if loading fails.
    static let all: [PeerVector] = (try? loadAll()) ?? []
}

/// The PBKDF2 families (credfile's own and the peers'), whose vectors are PeerHashTests'.
let pbkdf2Families: [any HashFamily.Type] = [
    PBKDF2Family.self, PasslibPBKDF2Family.self, LDAPPBKDF2Family.self, DovecotPBKDF2Family.self,
    DjangoPBKDF2Family.self, WerkzeugPBKDF2Family.self, MosquittoPBKDF2Family.self, MosquittoSHA512Family.self,
]

/// The parse of `text` by the registry, when a family other than the PBKDF2 ones (and
/// mosquitto's `$6$`) answers: the families these vectors are about.
func peerParse(_ text: String) -> HashParse {
    guard let (family, answer) = SecretSyntax.familyAnswer(ArraySlice(Array(text.utf8))) else { return .notThisFamily }
    if pbkdf2Families.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(family) }) { return .notThisFamily }
    return answer
}

/// The hash when `text` parses as one, or nil.
func peerHash(_ text: String) -> (any KnownHash)? {
    if case .hash(let hash) = peerParse(text) { return hash }
    return nil
}

/// "hash", "malformed" or "not ours": the kind of a parse, for `#expect` messages.
func kind(_ parse: HashParse) -> String {
    switch parse {
    case .hash: "hash"
    case .malformed: "malformed"
    case .notThisFamily: "not ours"
    }
}

func secret(_ bytes: [UInt8]) -> SecretBytes { SecretBytes(bytes) }

@Suite("Peer hash families (libxcrypt, libargon2, OpenSSL scrypt and digests)")
struct PeerSchemeTests {
    // MARK: Vectors from the real peers

    @Test func vectorFilesHoldEveryFamily() throws {
        let vectors = try PeerVector.loadAll()
        #expect(vectors.count == PeerVector.all.count)
        let schemes = Set(vectors.map(\.scheme))
        for expected in [
            "bcrypt", "sha256-crypt", "sha512-crypt", "yescrypt", "scrypt-crypt", "md5-crypt", "des-crypt", "apr1",
            "{SHA}", "{SSHA}", "{SSHA256}", "{SSHA512}", "argon2id", "argon2i", "argon2d", "django argon2id",
            "django bcrypt_sha256", "django bcrypt", "django scrypt", "django md5", "django sha1", "werkzeug scrypt",
            // SPEC v3: inside {CRYPT} (any hash libxcrypt computes), Django unsalted, OpenLDAP {ARGON2}.
            "gost-yescrypt", "sun-md5-crypt", "bsdi-crypt", "bigcrypt", "nt-hash", "sha1-crypt", "django unsalted_md5",
            "django unsalted_sha1", "ldap argon2i",
        ] {
            #expect(schemes.contains(expected), "no vector of \(expected)")
        }
        // Non-ASCII and NFD passwords are among them.
        #expect(vectors.contains { $0.password.contains { $0 >= 0x80 } })
        let nfd = Array("contrasen\u{0303}a123".utf8)
        #expect(vectors.contains { $0.password == nfd })
    }

    @Test(arguments: PeerVector.all)
    func peerHashVerifiesTheRightPasswordOnly(_ vector: PeerVector) throws {
        let hash = try #require(peerHash(vector.hash), "\(kind(peerParse(vector.hash)))")
        #expect(hash.scheme == vector.scheme)
        #expect(hash.isWeak == vector.weak)
        #expect(hash.estimatedWork > 0)
        #expect(try hash.verify(secret(vector.password)))
        // Wrong passwords that differ early: DES crypt reads only the first 8 bytes.
        #expect(try !hash.verify(secret(Array("x".utf8) + vector.password)))
        #expect(try !hash.verify(secret([vector.password[0] ^ 0x01] + vector.password.dropFirst())))
        // Pass-the-hash: the string itself is never the password.
        #expect(try !hash.verify(secret(Array(vector.hash.utf8))))
    }

    @Test(arguments: PeerVector.all)
    func brokenPeerHashIsMalformedNotAnotherFamily(_ vector: PeerVector) {
        let text = vector.hash
        let half = String(text.prefix(text.count / 2))
        #expect(kind(peerParse(half)) == "malformed", "truncated to half")
        let badAlphabet = String(text.dropLast()) + "!"
        #expect(kind(peerParse(badAlphabet)) == "malformed", "bad alphabet")
        // A PHC argon2 tag has no fixed length: a shorter tag is another well-formed hash.
        if !vector.scheme.contains("argon2") {
            #expect(kind(peerParse(String(text.dropLast()))) == "malformed", "one character short")
        }
    }

    @Test func nfdPasswordVerifiesOnlyAsTyped() throws {
        // A peer hashed the NFD bytes; the NFC form is other bytes and does not verify
        // (the caller tries both, SPEC §3.2).
        let nfd = Array("contrasen\u{0303}a123".utf8)
        let nfc = Array("contraseña123".utf8)
        let vectors = PeerVector.all.filter { $0.password == nfd && !$0.scheme.hasPrefix("des") }
        #expect(vectors.count >= 10)
        for vector in vectors {
            let hash = try #require(peerHash(vector.hash))
            #expect(try hash.verify(secret(nfd)), "\(vector.testDescription)")
            #expect(try !hash.verify(secret(nfc)), "\(vector.testDescription)")
        }
    }

    // MARK: Shared prefixes and syntax

    @Test(arguments: [
        // mosquitto_passwd 2.0.11 (`-b`, password "pw"): its `$7$` PBKDF2 and `$6$` salted SHA-512.
        "$7$101$tOJvNLYX5nw2mGOW$HWoFWiGzvqnUTstBUkRNyGJrdJ8jptuGoWJ/8d8CWfrXjSlCecaxHgGCJTby6eguiPbeeRnpxO2pKiO79AJu1Q==",
        "$6$lw+2YcVPen9OCKVH$Sghu5hui6xwFeIENQ7eRbt9Y5tFNUJu9X0Y69j+T7mgSmwe+MZLCdxhZE3Fyw+OBT84uy3SA8JEuAve3lmKW2w==",
        // The hashes helper's families and what no family here claims.
        "$pbkdf2-sha256$1000$bncp9Nq.rdcuURzFeHSieQ$oU1ETNQ9zZvdmyhal1dxUEDNPPrHXg49.G1ElXfSCE4",
        "pbkdf2_sha256$1000000$wvvP7ZegLRSwsgpGS6IvzC$A+FQ", "pbkdf2:sha256:600000$salt$00",
        "{PBKDF2-SHA256}1000$c2FsdA$aGFzaA", "{PBKDF2}$1$salt$1000$00", "plain password", "$2x$05$abc",
        "{MD5}X03MO1qnZdYdgyfeuILPmQ==", "scryptsalt", "md5", "bcrypt",
    ])
    func otherFamiliesAreNotClaimed(_ text: String) {
        #expect(kind(peerParse(text)) == "not ours")
    }

    @Test func schemeNamesAreCaseInsensitiveInBraces() throws {
        let sha = try #require(peerHash("{sha}qUqP5cyxm6YcTAhz05Hph5gvu9M="))  // htpasswd -nbs u test
        #expect(try sha.verify(secret(Array("test".utf8))))
        #expect(kind(peerParse("{crypt}SyI6LmnumN52k")) == "hash")
    }

    @Test func cryptWrappersHoldOnlyTheirMethod() {
        let sha512 =
            "$6$pNyhdvO/rtfc4X0J$llubxuYT8w8Jhlwb7XhikuQIkVbNYyp3J7Xfxf6gQCXDfoY4CcqvzbKiFTCyv/NkjwA0emtBenN5oD4bTOC8S/"
        let bcrypt = "$2b$05$Mey1/eqXqYWDCiO1EFF0P.DwEQKnF0pm425362qNAL3BfRsaDp/PW"
        #expect(peerHash("{SHA512-CRYPT}" + sha512)?.scheme == "sha512-crypt")
        #expect(kind(peerParse("{SHA512-CRYPT}" + bcrypt)) == "malformed")
        #expect(kind(peerParse("{BLF-CRYPT}" + sha512)) == "malformed")
        #expect(peerHash("{CRYPT}" + bcrypt)?.scheme == "bcrypt")
        #expect(peerHash("{CRYPT}" + bcrypt)?.cost == 5)
        #expect(kind(peerParse("{CRYPT}" + "$apr1$abc$def")) == "malformed")
        #expect(kind(peerParse("{CRYPT}SyI6LmnumN52")) == "malformed")  // 12 characters
        // Inside {CRYPT} there is no mosquitto: a $6$ that is not sha512-crypt is malformed.
        #expect(
            kind(
                peerParse(
                    "{CRYPT}$6$lw+2YcVPen9OCKVH$Sghu5hui6xwFeIENQ7eRbt9Y5tFNUJu9X0Y69j+T7mgSmwe+MZLCdxhZE3Fyw+OBT84uy3SA8JEuAve3lmKW2w=="
                ))
                == "malformed")
        #expect(
            kind(
                peerParse(
                    "{ARGON2I}$argon2id$v=19$m=1024,t=2,p=1$c2FsdHNhbHQ$2RRuQ+9kCHWYcD2NS1DQRxSzt4jy6cJyUQxj3SJJimo"))
                == "malformed")
    }

    @Test func listingNamesSchemeAndCost() throws {
        #expect(peerHash("$2b$05$Mey1/eqXqYWDCiO1EFF0P.DwEQKnF0pm425362qNAL3BfRsaDp/PW")?.description == "bcrypt 5")
        #expect(
            peerHash(
                "$6$pNyhdvO/rtfc4X0J$llubxuYT8w8Jhlwb7XhikuQIkVbNYyp3J7Xfxf6gQCXDfoY4CcqvzbKiFTCyv/NkjwA0emtBenN5oD4bTOC8S/"
            )?
            .description == "sha512-crypt 5000")
        #expect(peerHash("{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=")?.description == "{SHA}")
    }

    // MARK: Hostile parameters: both sides of every limit, refused before any work

    struct Boundary: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let accepted: Bool
        var testDescription: String { name }
    }

    static let salt22 = "Mey1/eqXqYWDCiO1EFF0P."
    static let bcryptBody = salt22 + "DwEQKnF0pm425362qNAL3BfRsaDp/PW"
    static let sha512Body =
        "pNyhdvO/rtfc4X0J$llubxuYT8w8Jhlwb7XhikuQIkVbNYyp3J7Xfxf6gQCXDfoY4CcqvzbKiFTCyv/NkjwA0emtBenN5oD4bTOC8S/"
    static let hash43 = "XQDNaFQpn3YFD.KptOy3mg8JRkO6ILUsDQHKxzxKL90"
    static let phcSalt = "c2FsdHNhbHQ"
    static let phcTag = "2RRuQ+9kCHWYcD2NS1DQRxSzt4jy6cJyUQxj3SJJimo"
    static let hex128 = String(repeating: "ab", count: 64)
    static let b64key = Data(repeating: 7, count: 64).base64EncodedString()
    static func b64(_ count: Int) -> String { Data(repeating: 0x41, count: count).base64EncodedString() }

    static let boundaries: [Boundary] = [
        Boundary(name: "bcrypt cost 31 accepted", text: "$2b$31$" + bcryptBody, accepted: true),
        Boundary(name: "bcrypt cost 32 refused", text: "$2b$32$" + bcryptBody, accepted: false),
        Boundary(name: "bcrypt cost 99 refused", text: "$2y$99$" + bcryptBody, accepted: false),
        Boundary(name: "bcrypt cost 04 accepted", text: "$2a$04$" + bcryptBody, accepted: true),
        Boundary(name: "bcrypt cost 03 refused", text: "$2a$03$" + bcryptBody, accepted: false),
        Boundary(
            name: "sha512-crypt rounds 50000000 accepted", text: "$6$rounds=50000000$" + sha512Body, accepted: true),
        Boundary(
            name: "sha512-crypt rounds 50000001 accepted (the cost limits judge it)",
            text: "$6$rounds=50000001$" + sha512Body, accepted: true),
        Boundary(
            name: "sha512-crypt rounds 999999999 accepted", text: "$6$rounds=999999999$" + sha512Body, accepted: true),
        Boundary(
            name: "sha512-crypt rounds 1000000000 refused", text: "$6$rounds=1000000000$" + sha512Body, accepted: false),
        Boundary(name: "sha512-crypt rounds 1000 accepted", text: "$6$rounds=1000$" + sha512Body, accepted: true),
        Boundary(name: "sha512-crypt rounds 999 refused", text: "$6$rounds=999$" + sha512Body, accepted: false),
        Boundary(name: "sha512-crypt rounds 01000 refused", text: "$6$rounds=01000$" + sha512Body, accepted: false),
        Boundary(
            name: "sha256-crypt rounds 50000001 accepted",
            text: "$5$rounds=50000001$salt$" + hash43, accepted: true),
        Boundary(
            name: "argon2 memory 1 GiB accepted", text: "$argon2id$v=19$m=1048576,t=1,p=1$\(phcSalt)$\(phcTag)",
            accepted: true),
        Boundary(
            name: "argon2 memory 1 GiB + 1 KiB accepted", text: "$argon2id$v=19$m=1048577,t=1,p=1$\(phcSalt)$\(phcTag)",
            accepted: true),
        Boundary(
            name: "argon2 memory 2^32 KiB refused", text: "$argon2id$v=19$m=4294967296,t=1,p=1$\(phcSalt)$\(phcTag)",
            accepted: false),
        Boundary(
            name: "argon2 time 10 accepted", text: "$argon2i$v=19$m=4096,t=10,p=1$\(phcSalt)$\(phcTag)", accepted: true),
        Boundary(
            name: "argon2 time 11 accepted", text: "$argon2i$v=19$m=4096,t=11,p=1$\(phcSalt)$\(phcTag)", accepted: true),
        Boundary(
            name: "argon2 lanes 255 accepted", text: "$argon2d$v=19$m=4096,t=1,p=255$\(phcSalt)$\(phcTag)",
            accepted: true),
        Boundary(
            name: "argon2 lanes 256 refused", text: "$argon2d$v=19$m=4096,t=1,p=256$\(phcSalt)$\(phcTag)",
            accepted: false),
        Boundary(
            name: "django argon2 memory 1 GiB + 1 KiB accepted",
            text: "argon2$argon2id$v=19$m=1048577,t=2,p=1$\(phcSalt)$\(phcTag)", accepted: true),
        Boundary(
            name: "dovecot argon2 time 11 accepted",
            text: "{ARGON2ID}$argon2id$v=19$m=65536,t=11,p=1$\(phcSalt)$\(phcTag)",
            accepted: true),
        Boundary(name: "django scrypt N·r 2^30 accepted", text: "scrypt$134217728$salt$8$1$\(b64key)", accepted: true),
        Boundary(name: "django scrypt N·r 2^31 accepted", text: "scrypt$268435456$salt$8$1$\(b64key)", accepted: true),
        Boundary(
            name: "django scrypt N not a power of two refused", text: "scrypt$1000$salt$8$1$\(b64key)", accepted: false),
        Boundary(
            name: "werkzeug scrypt N·r 2^30 accepted", text: "scrypt:1048576:1024:1$salt$\(hex128)", accepted: true),
        Boundary(
            name: "werkzeug scrypt N·r 2^31 accepted", text: "scrypt:2097152:1024:1$salt$\(hex128)", accepted: true),
        Boundary(
            name: "werkzeug scrypt N·r·p 2^30 accepted", text: "scrypt:2:1024:524288$salt$\(hex128)", accepted: true),
        Boundary(
            name: "werkzeug scrypt p·r 2^30 refused (scrypt's own bound)", text: "scrypt:2:1024:1048576$salt$\(hex128)",
            accepted: false),
        Boundary(
            name: "django scrypt N·r·p 2^31 accepted", text: "scrypt$134217728$salt$8$2$\(b64key)", accepted: true),
        Boundary(name: "django scrypt N·r·p 2^30 accepted", text: "scrypt$65536$salt$8$2048$\(b64key)", accepted: true),
        // yescrypt j<N><r>: 'M' is log2 N = 25, 'N' 26; 'T' is r = 32.
        Boundary(name: "yescrypt N·r 2^30 accepted", text: "$y$jMT$salt$" + hash43, accepted: true),
        Boundary(name: "yescrypt N·r 2^31 accepted", text: "$y$jNT$salt$" + hash43, accepted: true),
        Boundary(name: "yescrypt N 2^64 refused", text: "$y$jzT$salt$" + hash43, accepted: false),
        // libxcrypt $7$: 'N' is log2 N = 25, 'O' 26; "U...." is r = 32; "/...." is p = 1.
        Boundary(name: "scrypt-crypt N·r 2^30 accepted", text: "$7$NU..../....salt$" + hash43, accepted: true),
        Boundary(name: "scrypt-crypt N·r 2^31 accepted", text: "$7$OU..../....salt$" + hash43, accepted: true),
        Boundary(name: "scrypt-crypt r·p above 2^30 refused", text: "$7$CU....zzzzzsalt$" + hash43, accepted: false),
        // 'C' is log2 N = 14, "U...." r = 32, ".0..." p = 2^7 = 128: N·r·p = 2^26 … 'M' (24) with p 32 ("U....") is 2^34.
        Boundary(name: "scrypt-crypt N·r·p 2^26 accepted", text: "$7$CU.....0...salt$" + hash43, accepted: true),
        Boundary(name: "scrypt-crypt N·r·p 2^34 accepted", text: "$7$MU....U....salt$" + hash43, accepted: true),
        Boundary(name: "{SSHA} salt 1024 bytes accepted", text: "{SSHA}" + b64(20 + 1024), accepted: true),
        Boundary(name: "{SSHA} salt 1025 bytes refused", text: "{SSHA}" + b64(20 + 1025), accepted: false),
        Boundary(name: "{SSHA512} salt 0 bytes refused", text: "{SSHA512}" + b64(64), accepted: false),
        Boundary(
            name: "django md5 salt 1024 accepted",
            text: "md5$\(String(repeating: "s", count: 1024))$\(String(repeating: "0", count: 32))", accepted: true),
        Boundary(
            name: "django md5 salt 1025 refused",
            text: "md5$\(String(repeating: "s", count: 1025))$\(String(repeating: "0", count: 32))", accepted: false),
        Boundary(
            name: "argon2 salt 1024 bytes accepted",
            text: "$argon2id$v=19$m=4096,t=1,p=1$\(b64(1024).replacingOccurrences(of: "=", with: ""))$\(phcTag)",
            accepted: true),
        Boundary(
            name: "argon2 salt 1025 bytes refused",
            text: "$argon2id$v=19$m=4096,t=1,p=1$\(b64(1025).replacingOccurrences(of: "=", with: ""))$\(phcTag)",
            accepted: false),
        Boundary(
            name: "argon2 salt 7 bytes refused",
            text: "$argon2id$v=19$m=4096,t=1,p=1$\(b64(7).replacingOccurrences(of: "=", with: ""))$\(phcTag)",
            accepted: false),
    ]

    @Test(arguments: boundaries)
    func theFormatsOwnLimitsAreMalformedBeforeAnyWork(_ boundary: Boundary) {
        // Parsing does no work: no parser runs a hash (only `verify` does; libxcrypt's
        // crypt_checksalt reads the prefix alone), so a refusal costs microseconds. Accepted costly cases are only
        // parsed here: verifying a 1 GiB argon2 or a 2^30 scrypt is what the limits prevent.
        // (No timing assertion: the machine is shared; the structure is the guarantee.)
        #expect(kind(peerParse(boundary.text)) == (boundary.accepted ? "hash" : "malformed"))
    }

    @Test func malformedReasonsNeverQuoteTheSecret() {
        for boundary in Self.boundaries where !boundary.accepted {
            guard case .malformed(let reason) = peerParse(boundary.text) else { continue }
            #expect(!reason.contains("salt$"), "\(boundary.name)")
            #expect(!reason.contains(Self.phcTag))
            #expect(!reason.contains(Self.hash43))
        }
    }

    @Test func mutatedPeerHashesParseWithoutTrappingAndWithinTheLimits() throws {
        // Seeded mutations of real peer hashes (byte flips, cuts, insertions of separators
        // and digits): every parse ends, and every hash it accepts is within SPEC §3.2's
        // limits, so verifying it could not be hostile.
        var random = SeededRandom(seed: 12)
        let vectors = PeerVector.all.map { Array($0.hash.utf8) }
        try #require(!vectors.isEmpty)
        let interesting = Array("$:,=+/.{}0123456789mtpvrounds=".utf8) + [0x00, 0x80, 0xFF]
        var accepted = 0
        for _ in 0..<20_000 {
            var text = random.pick(vectors)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<text.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: text[at] = random.pick(interesting)
                case 1: text.removeSubrange(at...)
                case 2: text.insert(random.pick(interesting), at: at)
                default: text[at] = UInt8.random(in: 0...255, using: &random)
                }
                if text.isEmpty { text = [0x24] }
            }
            guard case .hash(let hash) = SecretSyntax.familyAnswer(text[...])?.answer else { continue }
            accepted += 1
            #expect(hash.estimatedWork.isFinite && hash.estimatedWork > 0)
            #expect(hash.estimatedMemory >= 0)
            // The cost limits judge any of them without trapping (SPEC §3.1).
            _ = HashPolicy.standard.costVerdict(of: hash)
        }
        #expect(accepted > 0)
    }

    // MARK: Against the installed peers

    /// Runs `program arguments` with `stdin`; its standard output, trimmed.
    static func run(_ program: String, _ arguments: [String], stdin: [UInt8] = []) throws -> (
        status: Int32?, output: String
    ) {
        let child = try ChildProcess.start(
            program, arguments, stdin: stdin)
        let result = try child.checkedWait()
        return (result.status, result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(
        .enabled(
            if: ExternalTool.runnable("htpasswd", "mkpasswd", "doveadm", "slappasswd", "argon2"),
            Comment(rawValue: ExternalTool.skipNote("htpasswd", "mkpasswd", "doveadm", "slappasswd", "argon2"))))
    func freshHashesFromTheDebianToolsVerify() throws {
        let password = "fresh-contraseña-\(UInt32.random(in: 0...UInt32.max))"
        let bytes = Array(password.utf8)
        var made: [String] = []
        let htpasswd = try ExternalTool.path("htpasswd")
        for option in ["-nbB", "-nbm", "-nbs"] {
            let line = try Self.run(htpasswd, [option, "u", password]).output
            made.append(String(line.split(separator: ":", maxSplits: 1)[1]))
        }
        let mkpasswd = try ExternalTool.path("mkpasswd")
        for method in ["yescrypt", "sha512crypt", "sha256crypt", "bcrypt", "md5crypt"] {
            made.append(try Self.run(mkpasswd, ["--stdin", "-m", method], stdin: bytes).output)
        }
        made.append("{CRYPT}" + (try Self.run(mkpasswd, ["--stdin", "-m", "descrypt"], stdin: bytes).output))
        let doveadm = try ExternalTool.path("doveadm")
        for scheme in ["SHA512-CRYPT", "BLF-CRYPT", "ARGON2ID", "SSHA256", "SSHA512"] {
            made.append(try Self.run(doveadm, ["pw", "-s", scheme, "-p", password]).output)
        }
        let slappasswd = try ExternalTool.path("slappasswd")
        for scheme in ["{SSHA}", "{SHA}"] {
            made.append(try Self.run(slappasswd, ["-h", scheme, "-s", password]).output)
        }
        made.append(try Self.run(try ExternalTool.path("argon2"), ["saltsaltsalt", "-id", "-e"], stdin: bytes).output)
        #expect(made.count == 17)
        for text in made {
            let hash = try #require(peerHash(text), "\(text.prefix(14))… is \(kind(peerParse(text)))")
            #expect(try hash.verify(secret(bytes)), "\(hash.scheme)")
            #expect(try !hash.verify(secret([0x21] + bytes)), "\(hash.scheme)")
            #expect(try !hash.verify(secret(Array(text.utf8))), "\(hash.scheme)")
        }
    }

    /// A Python program that prints, for each JSON line {"password": hex, "hash": …} on
    /// standard input, "1" when the peer library verifies it and "0" when it does not.
    static let pythonVerifier = """
        import json, sys
        import django
        from django.conf import settings
        settings.configure(PASSWORD_HASHERS=[
            "django.contrib.auth.hashers.Argon2PasswordHasher",
            "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
            "django.contrib.auth.hashers.BCryptPasswordHasher",
            "django.contrib.auth.hashers.ScryptPasswordHasher",
            "django.contrib.auth.hashers.MD5PasswordHasher",
        ])
        django.setup()
        from django.contrib.auth.hashers import check_password
        from passlib.context import CryptContext
        from werkzeug.security import check_password_hash
        ctx = CryptContext(schemes=["bcrypt", "sha512_crypt", "sha256_crypt", "md5_crypt", "apr_md5_crypt",
            "ldap_salted_sha1", "ldap_salted_sha256", "ldap_salted_sha512", "ldap_sha1", "ldap_des_crypt",
            "ldap_bcrypt", "ldap_sha512_crypt", "argon2", "django_salted_sha1"])
        from passlib import hash as ph
        inside_crypt = CryptContext(schemes=["sha1_crypt", "sun_md5_crypt", "bsdi_crypt", "bigcrypt"])
        for line in sys.stdin:
            item = json.loads(line)
            password = bytes.fromhex(item["password"]).decode("utf-8")
            h = item["hash"]
            if h.startswith("{CRYPT}") and not ctx.identify(h) and inside_crypt.identify(h[7:]):
                ok = inside_crypt.verify(password, h[7:])
            elif h.startswith("md5$$"):
                ok = ph.hex_md5.verify(password, h[5:])  # Django <= 5.0's UnsaltedMD5PasswordHasher
            elif h.startswith("sha1$$"):
                ok = ph.hex_sha1.verify(password, h[6:])
            elif h.startswith("scrypt:"):
                ok = check_password_hash(h, password)
            elif h.split("$", 1)[0] in ("argon2", "bcrypt_sha256", "bcrypt", "scrypt", "md5"):
                ok = check_password(password, h)
            else:
                ok = ctx.verify(password, h)
            print(1 if ok else 0)
        """

    @Test(
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote(ExternalTool.peerPython))))
    func pythonPeersStillVerifyWhatCredfileVerifies() throws {
        // credfile stores a peer hash byte for byte; what it verifies, the peer that wrote
        // it still verifies (and denies the wrong password), so a file can go back.
        let vectors = try PeerVector.loadAll().filter { $0.file == "peers-pypi.txt" }
        var input: [UInt8] = []
        var expected: [String] = []
        for vector in vectors {
            let hash = try #require(peerHash(vector.hash))
            guard try hash.verify(secret(vector.password)) else { continue }
            for (password, outcome) in [(vector.password, "1"), (Array("x".utf8) + vector.password, "0")] {
                let line = try JSONSerialization.data(withJSONObject: [
                    "password": VectorFile.hex(password), "hash": vector.hash,
                ])
                input += Array(line) + [0x0A]
                expected.append(outcome)
            }
        }
        #expect(expected.count == 2 * vectors.count)
        let result = try Self.run(
            try ExternalTool.path(ExternalTool.peerPython), ["-c", Self.pythonVerifier], stdin: input)
        #expect(result.status == 0)
        #expect(result.output.split(separator: "\n").map(String.init) == expected)
    }

    @Test(.enabled(if: ExternalTool.runnable("htpasswd"), Comment(rawValue: ExternalTool.skipNote("htpasswd"))))
    func htpasswdStillVerifiesWhatCredfileVerifies() throws {
        let htpasswd = try ExternalTool.path("htpasswd")
        let vectors = try PeerVector.loadAll().filter { $0.tool.hasPrefix("htpasswd") }
        #expect(vectors.count >= 16)
        let directory = try TemporaryDirectory.make(prefix: "peer-htpasswd")
        defer { directory.remove() }
        let file = directory.file("htpasswd")
        for vector in vectors {
            let hash = try #require(peerHash(vector.hash))
            #expect(try hash.verify(secret(vector.password)))
            // credfile keeps htpasswd's DES as {CRYPT}<hash> (SPEC §5); htpasswd reads it bare.
            let stored = vector.hash.hasPrefix("{CRYPT}") ? String(vector.hash.dropFirst(7)) : vector.hash
            try writeText(file, "u:\(stored)\n")
            // -i: the password on standard input, never on argv.
            let right = try Self.run(htpasswd, ["-v", "-i", file, "u"], stdin: vector.password)
            #expect(right.status == 0, "\(vector.testDescription)")
            let wrong = try Self.run(htpasswd, ["-v", "-i", file, "u"], stdin: [0x78] + vector.password)
            #expect(wrong.status != 0, "\(vector.testDescription)")
        }
    }
}
