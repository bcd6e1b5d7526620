import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// A loop of the fast path with a PRF it serves on this CPU: the cases the tests run. A
/// loop the CPU lacks (``FastPBKDF2/Loop/shaExtensions`` without SHA-NI) is left out of
/// the arguments, not counted as passed; ``FastPBKDF2Tests/shaExtensionsFollowTheCPU()``
/// says whether it should have been there.
struct LoopCase: Sendable, CustomTestStringConvertible {
    let prf: PRF
    let loop: FastPBKDF2.Loop
    var testDescription: String { "\(prf) on \(loop)" }

    /// Every (PRF, loop) that runs here.
    static let available: [LoopCase] = [PRF.sha1, .sha256, .sha512].flatMap { prf in
        FastPBKDF2.Loop.allCases.filter { $0.isAvailable(for: prf) }.map { LoopCase(prf: prf, loop: $0) }
    }

    /// The loops that run PBKDF2-HMAC-SHA256 here.
    static var sha256: [FastPBKDF2.Loop] { available.filter { $0.prf == .sha256 }.map(\.loop) }
}

/// The fast PBKDF2 loops (OpenSSL's `SHA*_Transform` and credfile's SHA-NI SHA-256) and
/// their two-at-once form against OpenSSL's `PKCS5_PBKDF2_HMAC` and published vectors.
/// Every loop the CPU has runs in the same test run.
@Suite("Fast PBKDF2")
struct FastPBKDF2Tests {
    /// One derivation on `loop`.
    static func fast(
        _ prf: PRF, _ loop: FastPBKDF2.Loop, password: [UInt8], salt: [UInt8], rounds: Int, count: Int
    ) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        try password.withUnsafeBytes { p in
            try salt.withUnsafeBytes { s in
                try out.withUnsafeMutableBytes { o in
                    try FastPBKDF2.deriveKey(prf, password: p, salt: s, rounds: rounds, into: o, loop: loop)
                }
            }
        }
        return out
    }

    /// One derivation by `PKCS5_PBKDF2_HMAC`.
    static func openSSL(_ prf: PRF, password: [UInt8], salt: [UInt8], rounds: Int, count: Int) throws -> [UInt8] {
        bytes(
            try PBKDF2.deriveKey(
                prf: prf, password: SecretBytes(password), salt: salt, rounds: rounds, count: count, using: .openSSL))
    }

    /// Two derivations at once on `loop`.
    static func pair(
        _ prf: PRF, _ loop: FastPBKDF2.Loop, _ first: (password: [UInt8], salt: [UInt8]),
        _ second: (password: [UInt8], salt: [UInt8]), rounds: Int, count: Int
    ) throws -> ([UInt8], [UInt8]) {
        var out1 = [UInt8](repeating: 0, count: count)
        var out2 = [UInt8](repeating: 0, count: count)
        try first.password.withUnsafeBytes { p1 in
            try first.salt.withUnsafeBytes { s1 in
                try second.password.withUnsafeBytes { p2 in
                    try second.salt.withUnsafeBytes { s2 in
                        try out1.withUnsafeMutableBytes { o1 in
                            try out2.withUnsafeMutableBytes { o2 in
                                try FastPBKDF2.deriveKeys(prf, rounds: rounds, (p1, s1, o1), (p2, s2, o2), loop: loop)
                            }
                        }
                    }
                }
            }
        }
        return (out1, out2)
    }

    /// Random inputs from one seed: password lengths 0 ... 200 and salt lengths 0 ...
    /// 1,024 (the block edges first: a password of one block and around it, where HMAC
    /// starts hashing the key; salts whose `S ‖ INT(i)` just fits one padded block or
    /// just does not), rounds 1, 2 and 3, 4 ... 100 and 1,000 ... 5,000, output lengths
    /// 1 ... 3 digests (the digest length ± 1 and its multiples among them).
    struct Inputs: IteratorProtocol {
        let digest: Int
        var rng: SeededRandom
        var n = 0
        static let passwordEdges = [0, 1, 31, 32, 33, 55, 56, 63, 64, 65, 127, 128, 129, 200]
        static let saltEdges = [0, 1, 51, 52, 55, 56, 63, 64, 115, 116, 119, 120, 127, 128, 1_024]

        init(_ prf: PRF, seed: UInt64) {
            digest = prf.digestCount
            rng = SeededRandom(seed: seed)
        }

        mutating func next() -> (password: [UInt8], salt: [UInt8], rounds: Int, count: Int)? {
            defer { n += 1 }
            let passwordCount =
                n < Self.passwordEdges.count * 2
                ? Self.passwordEdges[n % Self.passwordEdges.count] : Int.random(in: 0...200, using: &rng)
            let saltCount =
                n < Self.saltEdges.count * 2
                ? Self.saltEdges[n % Self.saltEdges.count] : Int.random(in: 0...1_024, using: &rng)
            let outputs = [1, digest - 1, digest, digest + 1, 2 * digest, 2 * digest + 1, 3 * digest]
            let count = n % 4 == 0 ? outputs[(n / 4) % outputs.count] : Int.random(in: 1...(3 * digest), using: &rng)
            let rounds =
                switch n % 10 {
                case 0, 1, 2: 1 + n % 10
                case 9: Int.random(in: 1_000...5_000, using: &rng)
                default: Int.random(in: 4...100, using: &rng)
                }
            return (rng.bytes(passwordCount), rng.bytes(saltCount), rounds, count)
        }
    }

    /// 300 seeded random inputs per loop and PRF, each derived by the loop and by
    /// `PKCS5_PBKDF2_HMAC`.
    @Test("every loop equals PKCS5_PBKDF2_HMAC on random inputs", arguments: LoopCase.available)
    func loopMatchesOpenSSL(_ c: LoopCase) throws {
        var inputs = Inputs(c.prf, seed: 0x5EED_0029 &+ UInt64(c.prf.digestCount))
        var failures: [String] = []
        for _ in 0..<300 {
            let input = inputs.next()!  // the generator never ends
            let fast = try Self.fast(
                c.prf, c.loop, password: input.password, salt: input.salt, rounds: input.rounds, count: input.count)
            let expected = try Self.openSSL(
                c.prf, password: input.password, salt: input.salt, rounds: input.rounds, count: input.count)
            if fast != expected {
                failures.append(
                    "password \(input.password.count) B, salt \(input.salt.count) B, rounds \(input.rounds), output \(input.count) B"
                )
            }
        }
        #expect(failures.isEmpty, "\(failures.count) mismatches, first: \(failures.prefix(3).joined(separator: "; "))")
    }

    /// Two derivations at once (different passwords and salts, the same rounds and output
    /// length) give what two single derivations give, on every loop; 150 seeded pairs.
    @Test("two derivations at once equal two single ones", arguments: LoopCase.available)
    func pairMatchesSingles(_ c: LoopCase) throws {
        var inputs = Inputs(c.prf, seed: 0x9A1E_0029 &+ UInt64(c.prf.digestCount))
        var failures: [String] = []
        for _ in 0..<150 {
            let a = inputs.next()!  // the generator never ends
            let b = inputs.next()!
            let (first, second) = try Self.pair(
                c.prf, c.loop, (a.password, a.salt), (b.password, b.salt), rounds: a.rounds, count: a.count)
            let expected = (
                try Self.openSSL(c.prf, password: a.password, salt: a.salt, rounds: a.rounds, count: a.count),
                try Self.openSSL(c.prf, password: b.password, salt: b.salt, rounds: a.rounds, count: a.count)
            )
            if first != expected.0 || second != expected.1 {
                failures.append(
                    "passwords \(a.password.count) / \(b.password.count) B, salts \(a.salt.count) / \(b.salt.count) B, "
                        + "rounds \(a.rounds), output \(a.count) B: first \(first == expected.0 ? "right" : "wrong"), "
                        + "second \(second == expected.1 ? "right" : "wrong")")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) mismatches, first: \(failures.prefix(3).joined(separator: "; "))")
    }

    /// Every loop serving a vector's PRF gives the published key (``FastPBKDF2/Loop/best``
    /// is ``PBKDF2Tests``' default path on the same vectors).
    @Test("every loop gives the published vectors' keys", arguments: try PBKDF2Vector.all())
    func publishedVector(_ vector: PBKDF2Vector) throws {
        let loops = LoopCase.available.filter { $0.prf == vector.prf && $0.loop != .best }.map(\.loop)
        #expect(!loops.isEmpty)
        for loop in loops {
            let key = try Self.fast(
                vector.prf, loop, password: vector.password, salt: vector.salt, rounds: vector.rounds,
                count: vector.derivedKey.count)
            #expect(VectorFile.hex(key) == VectorFile.hex(vector.derivedKey), "\(loop)")
        }
    }

    /// Every vector's password, salt, rounds and length with SHA-256, on every SHA-256
    /// loop (so on SHA-NI where the CPU has it), alone and paired with other inputs,
    /// against `PKCS5_PBKDF2_HMAC`-SHA256. All but RFC 6070's 16,777,216 rounds: its key
    /// is checked on the SHA-1 loops above, and on SHA-256 it would add about a minute of
    /// CPU to the debug build's run (the C code unoptimized) for nothing that its 4,096
    /// rounds do not show.
    @Test(
        "every vector's inputs on every SHA-256 loop equal PKCS5_PBKDF2_HMAC",
        arguments: try PBKDF2Vector.all().filter { $0.rounds <= 100_000 })
    func vectorInputsOnSHA256Loops(_ vector: PBKDF2Vector) throws {
        let count = vector.derivedKey.count
        let expected = try Self.openSSL(
            .sha256, password: vector.password, salt: vector.salt, rounds: vector.rounds, count: count)
        let other = (password: Array("another password".utf8), salt: vector.password)  // the same length
        let otherExpected = try Self.openSSL(
            .sha256, password: other.password, salt: other.salt, rounds: vector.rounds, count: count)
        for loop in LoopCase.sha256 {
            let single = try Self.fast(
                .sha256, loop, password: vector.password, salt: vector.salt, rounds: vector.rounds, count: count)
            #expect(single == expected, "\(loop)")
            let (first, second) = try Self.pair(
                .sha256, loop, (vector.password, vector.salt), other, rounds: vector.rounds, count: count)
            #expect(first == expected && second == otherExpected, "\(loop), paired")
        }
    }

    /// The SHA-NI loop runs exactly where the CPU reports the SHA extensions with SSSE3
    /// and SSE4.1 (read here from /proc/cpuinfo, independently of the C side's cpuid),
    /// for SHA-256 only; asking for it where it cannot run throws instead of computing
    /// something else.
    @Test("the SHA-NI loop runs where the CPU has it, for SHA-256 only")
    func shaExtensionsFollowTheCPU() throws {
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(
            (cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? "").split(separator: " ").map(
                String.init))
        #if arch(x86_64)
        let expected = flags.isSuperset(of: ["sha_ni", "ssse3", "sse4_1"])
        #else
        let expected = false
        #endif
        #expect(
            FastPBKDF2.Loop.shaExtensions.isAvailable(for: .sha256) == expected,
            "cpuinfo flags: sha_ni \(flags.contains("sha_ni"))")
        #expect(LoopCase.sha256.contains(.shaExtensions) == expected)
        for prf in [PRF.sha1, .sha512] {
            #expect(!FastPBKDF2.Loop.shaExtensions.isAvailable(for: prf))
            #expect(throws: CredFileError(.crypto, "")) {
                try Self.fast(prf, .shaExtensions, password: [1], salt: [2], rounds: 1, count: 8)
            }
        }
        if !expected {
            #expect(throws: CredFileError(.crypto, "")) {
                try Self.fast(.sha256, .shaExtensions, password: [1], salt: [2], rounds: 1, count: 8)
            }
        }
        // Batches pair passwords exactly where that is faster.
        #expect(PBKDF2.interleaves(.sha256) == expected)
        #expect(!PBKDF2.interleaves(.sha512))
    }

    /// The fast loop is built in with this OpenSSL, and the default path uses it. Fails
    /// if the headers ever hide the low-level SHA API, which would silently cost speed.
    @Test("fast path is built in and preferred")
    func fastPathIsPreferred() {
        #expect(FastPBKDF2.isAvailable)
        #expect(PBKDF2.Implementation.preferred == .fast)
        #expect(FastPBKDF2.Loop.transform.isAvailable(for: .sha512))
    }

    /// Arguments outside what `PKCS5_PBKDF2_HMAC` accepts throw instead of trapping, on
    /// every loop and for two at once; so do overlapping outputs of a pair, and outputs
    /// of different lengths.
    @Test("fast path refuses zero rounds, too many rounds, an empty output and overlapping pairs")
    func refusesBadArguments() {
        for c in LoopCase.available {
            for (rounds, count) in [(0, 32), (Int(Int32.max) + 1, 32), (1, 0)] {
                #expect(throws: CredFileError(.crypto, ""), "\(c)") {
                    try Self.fast(c.prf, c.loop, password: [1, 2, 3], salt: [4, 5], rounds: rounds, count: count)
                }
                #expect(throws: CredFileError(.crypto, ""), "\(c)") {
                    try Self.pair(c.prf, c.loop, ([1], [2]), ([3], [4]), rounds: rounds, count: count)
                }
            }
            var out = [UInt8](repeating: 0, count: 48)
            [UInt8]([1, 2]).withUnsafeBytes { p in
                out.withUnsafeMutableBytes { o in
                    let first = UnsafeMutableRawBufferPointer(rebasing: o[0..<32])
                    #expect(throws: CredFileError(.crypto, ""), "\(c): overlapping outputs") {
                        try FastPBKDF2.deriveKeys(
                            c.prf, rounds: 1, (p, p, first),
                            (p, p, UnsafeMutableRawBufferPointer(rebasing: o[16..<48])),
                            loop: c.loop)
                    }
                    #expect(throws: CredFileError(.crypto, ""), "\(c): outputs of different lengths") {
                        try FastPBKDF2.deriveKeys(
                            c.prf, rounds: 1, (p, p, UnsafeMutableRawBufferPointer(rebasing: o[0..<16])),
                            (p, p, UnsafeMutableRawBufferPointer(rebasing: o[16..<48])), loop: c.loop)
                    }
                }
            }
        }
    }
}
