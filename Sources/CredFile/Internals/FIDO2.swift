// libfido2 for the passkeys of SPEC §14: a registration's authenticator data read, and an
// assertion's signature, RP ID hash and flags checked, by libfido2 (over OpenSSL), never
// by hand. In Internals/ with every file that imports a C module (Scripts/layers.sh); no C
// type leaves this file.
internal import CFido2

/// WebAuthn's two server-side checks through libfido2, for ES256 (COSE algorithm -7, ECDSA
/// P-256 with SHA-256) credentials.
enum FIDO2 {
    /// `fido_init`, once per process before any other call.
    private static let initialized: Bool = {
        fido_init(0)
        return true
    }()

    /// The COSE algorithm credfile accepts: ES256.
    static let es256: Int64 = -7

    /// What libfido2 read from a registration's authenticator data.
    struct AttestedCredential: Sendable {
        /// The credential id (1 to 1,023 bytes).
        let id: [UInt8]
        /// The public key's X and Y (32 bytes each).
        let publicKey: [UInt8]
        /// The authenticator data's flags byte.
        let flags: UInt8
        /// The signature counter at registration.
        let counter: UInt32
    }

    /// The attested credential of a registration's raw authenticator data, read by
    /// libfido2 with `none` attestation for `rpID`, or nil when libfido2 refuses it (not
    /// ES256, malformed, no attested credential data).
    ///
    /// libfido2's `fido_cred_verify` checks a signature that `none` attestation does not
    /// have; the RP ID hash and the flags are checked by ``WebAuthn`` on the raw bytes it
    /// gives back (``authenticatorData(of:)``).
    ///
    /// The corresponding C functions are `fido_cred_set_authdata_raw` and `fido_cred_pubkey_ptr`.
    static func attestedCredential(authenticatorData: [UInt8], clientDataHash: [UInt8], rpID: String)
        -> AttestedCredential?
    {
        guard initialized, !authenticatorData.isEmpty, clientDataHash.count == 32,
            cborIsSafeToLoad(authenticatorData, after: attestedCBORStart(authenticatorData))
        else { return nil }
        var credential = fido_cred_new()
        guard let cred = credential else { return nil }
        defer { fido_cred_free(&credential) }
        guard fido_cred_set_type(cred, COSE_ES256) == FIDO_OK, fido_cred_set_fmt(cred, "none") == FIDO_OK,
            fido_cred_set_rp(cred, rpID, nil) == FIDO_OK,
            clientDataHash.withUnsafeBufferPointer({
                fido_cred_set_clientdata_hash(cred, $0.baseAddress, $0.count)
            }) == FIDO_OK,
            authenticatorData.withUnsafeBufferPointer({
                fido_cred_set_authdata_raw(cred, $0.baseAddress, $0.count)
            }) == FIDO_OK
        else { return nil }
        guard let id = fido_cred_id_ptr(cred), fido_cred_id_len(cred) > 0,
            let key = fido_cred_pubkey_ptr(cred), fido_cred_pubkey_len(cred) == 64
        else { return nil }
        return AttestedCredential(
            id: Array(UnsafeBufferPointer(start: id, count: fido_cred_id_len(cred))),
            publicKey: Array(UnsafeBufferPointer(start: key, count: 64)),
            flags: fido_cred_flags(cred), counter: fido_cred_sigcount(cred))
    }

    /// libfido2 reads the CBOR of authenticator data (the COSE key, the extensions) with
    /// libcbor's `cbor_load`, which allocates a container's declared size before reading
    /// it: a 9-byte array head declaring 2^56 items made it ask for exabytes (FuzzPasskeys
    /// found it in CI, through `fido_cred_set_authdata_raw`). So the bytes from `start` on
    /// must declare no more items than they have bytes (``CBOR/declaresAtMostItsLength(_:)``)
    /// before libfido2 sees them; authenticator data too short to hold CBOR passes (libfido2
    /// refuses it itself).
    private static func cborIsSafeToLoad(_ authenticatorData: [UInt8], after start: Int) -> Bool {
        start >= authenticatorData.count || CBOR.declaresAtMostItsLength(authenticatorData[start...])
    }

    /// Where the CBOR of a registration's authenticator data begins: after the RP ID hash,
    /// flags and counter (37 bytes), the AAGUID (16), the id's length (2) and the id.
    private static func attestedCBORStart(_ authenticatorData: [UInt8]) -> Int {
        guard authenticatorData.count >= 55 else { return authenticatorData.count }
        return 55 + (Int(authenticatorData[53]) << 8 | Int(authenticatorData[54]))
    }

    /// What a good assertion's authenticator data says.
    struct Assertion: Sendable {
        /// The flags byte (UP 0x01, UV 0x04).
        let flags: UInt8
        /// The signature counter.
        let counter: UInt32
    }

    /// Checks an assertion for the ES256 key `publicKey` (X and Y, 64 bytes): the
    /// signature over `authenticatorData` and `clientDataHash`, the RP ID hash of `rpID`,
    /// user presence, and user verification when `userVerification` is true. Nil when
    /// any fails.
    ///
    /// The corresponding C function is `fido_assert_verify`.
    static func verifyAssertion(
        authenticatorData: [UInt8], clientDataHash: [UInt8], signature: [UInt8], rpID: String,
        publicKey: [UInt8], userVerification: Bool
    ) -> Assertion? {
        // An assertion's CBOR (its extensions) starts after the 37-byte header.
        guard initialized, !authenticatorData.isEmpty, !signature.isEmpty, clientDataHash.count == 32,
            publicKey.count == 64, cborIsSafeToLoad(authenticatorData, after: 37)
        else { return nil }
        var key = es256_pk_new()
        guard let pk = key else { return nil }
        defer { es256_pk_free(&key) }
        guard publicKey.withUnsafeBytes({ es256_pk_from_ptr(pk, $0.baseAddress, $0.count) }) == FIDO_OK else {
            return nil
        }
        var assertion = fido_assert_new()
        guard let assert = assertion else { return nil }
        defer { fido_assert_free(&assertion) }
        guard fido_assert_set_count(assert, 1) == FIDO_OK, fido_assert_set_rp(assert, rpID) == FIDO_OK,
            clientDataHash.withUnsafeBufferPointer({
                fido_assert_set_clientdata_hash(assert, $0.baseAddress, $0.count)
            }) == FIDO_OK,
            authenticatorData.withUnsafeBufferPointer({
                fido_assert_set_authdata_raw(assert, 0, $0.baseAddress, $0.count)
            }) == FIDO_OK,
            signature.withUnsafeBufferPointer({ fido_assert_set_sig(assert, 0, $0.baseAddress, $0.count) })
                == FIDO_OK,
            fido_assert_set_up(assert, FIDO_OPT_TRUE) == FIDO_OK,
            fido_assert_set_uv(assert, userVerification ? FIDO_OPT_TRUE : FIDO_OPT_OMIT) == FIDO_OK
        else { return nil }
        guard fido_assert_verify(assert, 0, COSE_ES256, UnsafeRawPointer(pk)) == FIDO_OK else { return nil }
        return Assertion(flags: fido_assert_flags(assert, 0), counter: fido_assert_sigcount(assert, 0))
    }
}
