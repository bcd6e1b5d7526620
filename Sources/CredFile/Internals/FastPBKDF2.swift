// The fast PBKDF2 path. Like every file that imports a C module, it lives in Internals/
// (Scripts/layers.sh checks that). The loop itself lives in C, in Sources/CCredFile/pbkdf2.c (one
// template instantiated per hash); this file only checks the arguments and calls it.
internal import CCredFile

/// PBKDF2-HMAC with precomputed HMAC states and two compression-function calls per
/// round (the fastpbkdf2 technique), bit-identical to OpenSSL's `PKCS5_PBKDF2_HMAC`.
///
/// The C side computes the password's HMAC inner and outer states once, computes each
/// block's U₁ = HMAC(P, S ‖ INT(i)) the ordinary way, and then runs every further round
/// as exactly two compressions on prebuilt padded blocks, with no allocation and no
/// context copy in the loop, on one of the ``Loop``s. All intermediate state is cleansed
/// before it returns.
enum FastPBKDF2 {
    /// The C loops that run the rounds; all give the same bytes. Everything but tests and
    /// benchmarks takes ``best``.
    enum Loop: CaseIterable, Sendable {
        /// ``shaExtensions`` for SHA-256 where it runs, else ``transform``.
        case best
        /// Two calls of OpenSSL's `SHA*_Transform` per round: every PRF, every CPU.
        case transform
        /// SHA-256 on an x86-64 CPU with the SHA extensions, the state kept in registers.
        case shaExtensions

        /// True when this loop can derive with `prf` in this build on this CPU.
        ///
        /// The corresponding C function is `credfile_pbkdf2_loop_available`.
        func isAvailable(for prf: PRF) -> Bool { credfile_pbkdf2_loop_available(prf.cDigest, cLoop) != 0 }

        /// The C side's `enum credfile_pbkdf2_loop` value.
        var cLoop: Int32 {
            switch self {
            case .best: Int32(CREDFILE_PBKDF2_LOOP_BEST.rawValue)
            case .transform: Int32(CREDFILE_PBKDF2_LOOP_TRANSFORM.rawValue)
            case .shaExtensions: Int32(CREDFILE_PBKDF2_LOOP_SHA_NI.rawValue)
            }
        }
    }

    /// True when the fast loop was built in; false when OpenSSL's headers leave out the
    /// low-level SHA API (deprecated in 3.0), in which case ``deriveKey(_:password:salt:rounds:into:)``
    /// still works but calls `PKCS5_PBKDF2_HMAC`. Decided at build time.
    ///
    /// The corresponding C function is `credfile_fast_pbkdf2_available`.
    static var isAvailable: Bool { credfile_fast_pbkdf2_available() != 0 }

    /// Derives `out.count` bytes from `password` and `salt` with `rounds` rounds of
    /// PBKDF2-HMAC-`algorithm` into `out`.
    ///
    /// - Parameters:
    ///   - prf: The hash behind the HMAC: SHA-1, SHA-256 or SHA-512.
    ///   - password: The password bytes; may be empty.
    ///   - salt: The salt bytes; may be empty.
    ///   - rounds: The iteration count, 1 ... `Int32.max`.
    ///   - out: Where the derived key goes, 1 ... `Int32.max` bytes; cleansed on failure.
    ///   - loop: Which C loop runs the rounds.
    /// - Throws: ``CredFileError/Code/crypto`` when an argument is out of range, the loop
    ///   cannot run here, or OpenSSL fails.
    ///
    /// The corresponding C function is `credfile_fast_pbkdf2`.
    static func deriveKey(
        _ prf: PRF, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        rounds: Int, into out: UnsafeMutableRawBufferPointer, loop: Loop = .best
    ) throws {
        guard rounds >= 1, rounds <= Int(Int32.max) else {
            throw CredFileError(.crypto, "PBKDF2 rounds must be between 1 and \(Int32.max)")
        }
        guard out.count >= 1, out.count <= Int(Int32.max),
            password.count <= Int(Int32.max), salt.count <= Int(Int32.max)
        else {
            throw CredFileError(.crypto, "PBKDF2 input or output length out of range")
        }
        let ok = credfile_fast_pbkdf2(
            prf.cDigest, loop.cLoop, password.baseAddress, password.count, salt.baseAddress, salt.count,
            UInt32(rounds), out.baseAddress, out.count)
        guard ok == 1 else {
            throw CredFileError(.crypto, "fast PBKDF2-HMAC-\(prf) failed")
        }
    }

    /// Two derivations with the same PRF, rounds and output length at once, as two calls
    /// of ``deriveKey(_:password:salt:rounds:into:loop:)`` would give them; on the
    /// ``Loop/shaExtensions`` loop their rounds run interleaved. The outputs, of equal
    /// length, must not overlap.
    ///
    /// The corresponding C function is `credfile_fast_pbkdf2_pair`.
    static func deriveKeys(
        _ prf: PRF, rounds: Int,
        _ first: (password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, out: UnsafeMutableRawBufferPointer),
        _ second: (password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, out: UnsafeMutableRawBufferPointer),
        loop: Loop = .best
    ) throws {
        guard rounds >= 1, rounds <= Int(Int32.max), first.out.count == second.out.count else {
            throw CredFileError(.crypto, "PBKDF2 rounds or output lengths out of range")
        }
        let ok = credfile_fast_pbkdf2_pair(
            prf.cDigest, loop.cLoop, UInt32(rounds), first.out.count,
            first.password.baseAddress, first.password.count, first.salt.baseAddress, first.salt.count,
            first.out.baseAddress, second.password.baseAddress, second.password.count,
            second.salt.baseAddress, second.salt.count, second.out.baseAddress)
        guard ok == 1 else { throw CredFileError(.crypto, "fast PBKDF2-HMAC-\(prf) of two failed") }
    }
}
