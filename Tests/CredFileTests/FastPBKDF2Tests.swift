import Testing

@testable import CredFile

/// The fast PBKDF2 path against OpenSSL's `PKCS5_PBKDF2_HMAC` and RFC 7914's vectors.
@Suite("Fast PBKDF2")
struct FastPBKDF2Tests {
    /// Password and salt lengths at the SHA-256 and SHA-512 block boundaries: the last
    /// length whose padding fits one block (55, 111), the first that does not (56, 112),
    /// the block sizes (64, 128) where HMAC starts hashing the key, and their neighbours.
    static let edgeLengths = [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 300]

    /// One derivation with both implementations; `nil` when they agree.
    static func mismatch(
        _ algorithm: HashAlgorithm, password: [UInt8], salt: [UInt8], rounds: Int, count: Int
    ) throws -> String? {
        let secret = SecretBytes(password)
        let fast = try PBKDF2.deriveKey(
            algorithm, password: secret, salt: salt, rounds: rounds, count: count, using: .fast)
        let openSSL = try PBKDF2.deriveKey(
            algorithm, password: secret, salt: salt, rounds: rounds, count: count, using: .openSSL)
        if fast.count == count, openSSL.count == count, fast == openSSL { return nil }
        return "\(algorithm): password \(password.count) B, salt \(salt.count) B, "
            + "rounds \(rounds), output \(count) B"
    }

    /// 1,000 seeded random inputs per algorithm: the edge lengths crossed with each
    /// other first, then random password and salt lengths 0 ... 300; rounds 1 ... 2,000
    /// (half of them at most 100); output lengths 1 ... 3 digests (the digest length ± 1
    /// and its multiples included).
    @Test("fast path equals PKCS5_PBKDF2_HMAC on random inputs", arguments: HashAlgorithm.allCases)
    func matchesOpenSSL(_ algorithm: HashAlgorithm) throws {
        var rng = SeededRandom(seed: algorithm == .sha256 ? 0x5EED_0256 : 0x5EED_0512)
        let digest = algorithm.digestCount
        let edgeOutputs = [1, digest - 1, digest, digest + 1, 2 * digest, 2 * digest + 1, 3 * digest]
        let edges = Self.edgeLengths
        var failures: [String] = []
        for n in 0..<1_000 {
            let passwordCount: Int
            let saltCount: Int
            if n < edges.count * edges.count {
                passwordCount = edges[n % edges.count]
                saltCount = edges[n / edges.count]
            } else {
                passwordCount = Int.random(in: 0...300, using: &rng)
                saltCount = Int.random(in: 0...300, using: &rng)
            }
            let count =
                n % 4 == 0
                ? edgeOutputs[(n / 4) % edgeOutputs.count] : Int.random(in: 1...(3 * digest), using: &rng)
            // Every tenth input takes 1, 2 or 3 rounds; the odd ones at most 100 (the loop
            // bugs show within a few rounds, and this keeps the debug run short); the rest
            // range over all of 1 ... 2,000.
            let rounds =
                n % 10 == 0
                ? 1 + n % 3 : Int.random(in: 1...(n % 2 == 1 ? 100 : 2_000), using: &rng)
            if let failure = try Self.mismatch(
                algorithm, password: rng.bytes(passwordCount), salt: rng.bytes(saltCount),
                rounds: rounds, count: count)
            {
                failures.append(failure)
            }
        }
        let mismatches = failures.count
        #expect(mismatches == 0, "first mismatches: \(failures.prefix(3).joined(separator: "; "))")
    }

    /// A vector of RFC 7914 §11 (PBKDF2-HMAC-SHA-256).
    struct Vector: Sendable, CustomTestStringConvertible {
        /// P, as ASCII.
        let password: String
        /// S, as ASCII.
        let salt: String
        /// c.
        let rounds: Int
        /// DK in hex; dkLen is half its length.
        let key: String
        /// `P="passwd" S="salt" c=1`.
        var testDescription: String { "P=\"\(password)\" S=\"\(salt)\" c=\(rounds)" }
    }

    /// RFC 7914 §11, "Test Vectors for PBKDF2 with HMAC-SHA-256".
    static let rfc7914: [Vector] = [
        Vector(
            password: "passwd", salt: "salt", rounds: 1,
            key: "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
        Vector(
            password: "Password", salt: "NaCl", rounds: 80_000,
            key: "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
                + "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
    ]

    /// Both implementations reproduce RFC 7914 §11 (dkLen = 64: two SHA-256 blocks).
    @Test(
        "RFC 7914 §11 PBKDF2-HMAC-SHA256 vectors",
        arguments: rfc7914, PBKDF2.Implementation.allCases)
    func rfc7914Vector(_ vector: Vector, _ implementation: PBKDF2.Implementation) throws {
        let key = try PBKDF2.deriveKey(
            .sha256, password: SecretBytes(Array(vector.password.utf8)), salt: Array(vector.salt.utf8),
            rounds: vector.rounds, count: vector.key.count / 2, using: implementation)
        let hex = key.withUnsafeBytes { bytes in
            bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        #expect(hex == vector.key)
    }

    /// The fast loop is built in with this OpenSSL, and the default path uses it. Fails
    /// if the headers ever hide the low-level SHA API, which would silently cost speed.
    @Test("fast path is built in and preferred")
    func fastPathIsPreferred() {
        #expect(FastPBKDF2.isAvailable)
        #expect(PBKDF2.Implementation.preferred == .fast)
    }

    /// Arguments outside what `PKCS5_PBKDF2_HMAC` accepts throw instead of trapping.
    @Test("fast path refuses zero rounds, too many rounds and an empty output")
    func refusesBadArguments() {
        for algorithm in HashAlgorithm.allCases {
            for (rounds, count) in [(0, 32), (Int(Int32.max) + 1, 32), (1, 0)] {
                #expect(throws: CredFileError(.crypto, "")) {
                    try PBKDF2.deriveKey(
                        algorithm, password: SecretBytes([1, 2, 3]), salt: [4, 5], rounds: rounds,
                        count: count, using: .fast)
                }
            }
        }
    }
}
