/// The checks of WebAuthn Level 2 §7.1 (registration) and §7.2 (assertion) that a
/// relying party makes, for `none` attestation and ES256 keys: the authenticator data and
/// signature through libfido2 (``FIDO2``), the attestation object and COSE key through
/// libcbor (``CBOR``), `clientDataJSON` through ``ClientData``, hashes and comparisons
/// through OpenSSL. Pure: no file, no state; ``Passkeys`` keeps the challenges and
/// credentials.
enum WebAuthn {
    /// Authenticator data flags (WebAuthn §6.1).
    static let userPresent: UInt8 = 0x01
    /// User verified (a PIN, a fingerprint, the device's lock).
    static let userVerified: UInt8 = 0x04
    /// Attested credential data included.
    static let attestedData: UInt8 = 0x40
    /// Extension data included.
    static let extensionData: UInt8 = 0x80
    /// The most bytes of a credential id (WebAuthn §5.8.3).
    static let maximumIDCount = 1023

    /// A credential a registration produced.
    struct NewCredential: Sendable, Equatable {
        /// The credential id.
        let id: [UInt8]
        /// The COSE_Key as the authenticator wrote it (an ES256 key, RFC 9053 §2.1).
        let coseKey: [UInt8]
        /// The signature counter at registration.
        let counter: UInt32
        /// The flags byte.
        let flags: UInt8
    }

    /// The first part of both ceremonies: `clientDataJSON` of `type`, for `origin`, not in
    /// a cross-origin frame; nil otherwise.
    static func clientData(_ json: [UInt8], type: String, origin: String) -> ClientData? {
        guard let data = ClientData(parsing: json), data.type == type, data.origin == origin, !data.crossOrigin
        else { return nil }
        return data
    }

    /// Checks a registration whose `clientDataJSON` was already accepted: the attestation
    /// object holds `fmt: "none"`, an empty `attStmt` and authenticator data with the RP
    /// ID hash of `rpID`, user presence, and an ES256 credential that libfido2 and libcbor
    /// read alike.
    /// - Returns: the new credential, or nil when any check fails.
    static func registration(clientDataJSON: [UInt8], attestationObject: [UInt8], rpID: String) -> NewCredential? {
        guard let object = CBOR.value(of: attestationObject), object.hasUniqueKeys,
            case .map(let pairs) = object, pairs.count == 3,
            object.value(for: .text(Array("fmt".utf8))) == .text(Array("none".utf8)),
            object.value(for: .text(Array("attStmt".utf8))) == .map([]),
            case .bytes(let authData)? = object.value(for: .text(Array("authData".utf8)))
        else { return nil }
        guard authData.count >= 37 + 16 + 2, hasRPIDHash(authData, rpID: rpID) else { return nil }
        let flags = authData[32]
        guard flags & userPresent != 0, flags & attestedData != 0 else { return nil }
        let clientDataHash = clientDataJSON.withUnsafeBytes { OpenSSL.sha256($0) }
        guard
            let attested = FIDO2.attestedCredential(
                authenticatorData: authData, clientDataHash: clientDataHash, rpID: rpID),
            attested.id.count <= maximumIDCount
        else { return nil }
        // The COSE key follows the id; libcbor says where it ends. Extensions may follow
        // it only when the ED flag says so.
        let idCount = Int(authData[53]) << 8 | Int(authData[54])
        let keyStart = 55 + idCount
        guard idCount == attested.id.count, authData[55..<keyStart].elementsEqual(attested.id),
            keyStart < authData.count,
            let (key, keyCount) = CBOR.first(of: authData[keyStart...])
        else { return nil }
        let keyEnd = keyStart + keyCount
        if flags & extensionData == 0 {
            guard keyEnd == authData.count else { return nil }
        } else {
            guard case .map? = CBOR.value(of: authData[keyEnd...]) else { return nil }
        }
        guard publicKey(of: key) == attested.publicKey else { return nil }
        return NewCredential(
            id: attested.id, coseKey: Array(authData[keyStart..<keyEnd]), counter: attested.counter, flags: flags)
    }

    /// The X and Y of an ES256 COSE_Key (kty 2 EC2, alg -7, crv 1 P-256, x and y of 32
    /// bytes each), or nil for any other key or a key with a repeated label.
    static func publicKey(of key: CBOR.Value) -> [UInt8]? {
        guard key.hasUniqueKeys, key.value(for: .unsigned(1))?.integer == 2,
            key.value(for: .unsigned(3))?.integer == FIDO2.es256, key.value(for: .negative(0))?.integer == 1,
            case .bytes(let x)? = key.value(for: .negative(1)), x.count == 32,
            case .bytes(let y)? = key.value(for: .negative(2)), y.count == 32
        else { return nil }
        return x + y
    }

    /// The X and Y of a stored COSE_Key's bytes, or nil.
    static func publicKey(coseKey: [UInt8]) -> [UInt8]? {
        CBOR.value(of: coseKey).flatMap(publicKey(of:))
    }

    /// Whether `authData` begins with the SHA-256 of `rpID` (compared in constant time).
    static func hasRPIDHash(_ authData: [UInt8], rpID: String) -> Bool {
        guard authData.count >= 32 else { return false }
        let expected = Array(rpID.utf8).withUnsafeBytes { OpenSSL.sha256($0) }
        return expected.withUnsafeBytes { e in
            authData.withUnsafeBytes { OpenSSL.constantTimeEqual(e, .init(rebasing: $0[..<32])) }
        }
    }

    /// Checks an assertion whose `clientDataJSON` was already accepted against a stored
    /// key: libfido2 checks the signature, the RP ID hash, user presence and, when
    /// `userVerification`, user verification.
    /// - Returns: the signature counter, or nil when a check fails.
    static func assertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], rpID: String, coseKey: [UInt8],
        userVerification: Bool
    ) -> UInt32? {
        guard let key = publicKey(coseKey: coseKey) else { return nil }
        let clientDataHash = clientDataJSON.withUnsafeBytes { OpenSSL.sha256($0) }
        return FIDO2.verifyAssertion(
            authenticatorData: authenticatorData, clientDataHash: clientDataHash, signature: signature, rpID: rpID,
            publicKey: key, userVerification: userVerification)?.counter
    }
}
