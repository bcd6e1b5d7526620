import COpenSSL

@testable import CredFile

// A software WebAuthn authenticator for the passkey tests (SPEC §14): an EC P-256 key made
// and used by OpenSSL, the authenticator data, `none` attestation object and COSE key
// built here (with the tiny CBOR encoder below, for test fixtures only: credfile itself
// reads CBOR through libcbor), and a browser's clientDataJSON.

/// CBOR for fixtures (RFC 8949's definite forms only).
enum TestCBOR {
    indirect enum Item {
        case unsigned(UInt64)
        case negative(Int64)
        case bytes([UInt8])
        case text(String)
        case map([(Item, Item)])
    }

    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        switch value {
        case 0..<24: [major << 5 | UInt8(value)]
        case 24..<256: [major << 5 | 24, UInt8(value)]
        case 256..<65536: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
        default: [major << 5 | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }

    static func encode(_ item: Item) -> [UInt8] {
        switch item {
        case .unsigned(let n): head(0, n)
        case .negative(let n): head(1, UInt64(-1 - n))
        case .bytes(let b): head(2, UInt64(b.count)) + b
        case .text(let t): head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .map(let pairs): head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.0) + encode($0.1) }
        }
    }
}

/// One credential of a software authenticator.
final class SoftwareAuthenticator {
    private let key: OpaquePointer
    let id: [UInt8]
    var counter: UInt32
    /// X and Y of the public key.
    let publicKey: [UInt8]

    init(counter: UInt32 = 0, id: [UInt8]? = nil) throws {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_keygen(context, &made) == 1, let made
        else { throw CredFileError(.crypto, "EC key generation failed") }
        key = made
        var encoded = [UInt8](repeating: 0, count: 65)
        var count = 0
        guard EVP_PKEY_get_octet_string_param(made, "encoded-pub-key", &encoded, 65, &count) == 1, count == 65 else {
            throw CredFileError(.crypto, "no public key")
        }
        publicKey = Array(encoded[1...])
        self.counter = counter
        self.id = try id ?? OpenSSL.randomBytes(count: 32)
    }

    deinit { EVP_PKEY_free(key) }

    /// The ES256 COSE_Key of the public key.
    var coseKey: [UInt8] {
        TestCBOR.encode(
            .map([
                (.unsigned(1), .unsigned(2)), (.unsigned(3), .negative(-7)), (.negative(-1), .unsigned(1)),
                (.negative(-2), .bytes(Array(publicKey[..<32]))), (.negative(-3), .bytes(Array(publicKey[32...]))),
            ]))
    }

    /// DER ECDSA-SHA-256 over `message`.
    func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 80)
        var count = signature.count
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, &signature, &count, message, message.count) == 1
        else { return [] }
        return Array(signature[..<count])
    }

    static func rpIDHash(_ rpID: String) -> [UInt8] { Array(rpID.utf8).withUnsafeBytes { OpenSSL.sha256($0) } }

    static func clientDataJSON(type: String, challenge: [UInt8], origin: String, extra: String = "") -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":false\#(extra)}"#
                .utf8)
    }

    /// A registration: (clientDataJSON, attestationObject).
    func register(
        challenge: [UInt8], origin: String = "https://example.com", rpID: String = "example.com",
        flags: UInt8 = 0x45, fmt: String = "none", coseKey: [UInt8]? = nil
    ) -> (clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        let json = Self.clientDataJSON(type: "webauthn.create", challenge: challenge, origin: origin)
        let authData =
            Self.rpIDHash(rpID) + [flags] + Self.bigEndian(counter) + [UInt8](repeating: 0, count: 16)
            + [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id + (coseKey ?? self.coseKey)
        let object = TestCBOR.encode(
            .map([(.text("fmt"), .text(fmt)), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]))
        return (json, object)
    }

    /// An assertion: (clientDataJSON, authenticatorData, signature); the counter grows by
    /// one first unless it is 0 (an authenticator without a counter).
    func assert(
        challenge: [UInt8], origin: String = "https://example.com", rpID: String = "example.com", flags: UInt8 = 0x05
    ) -> (clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
        if counter != 0 { counter += 1 }
        let json = Self.clientDataJSON(type: "webauthn.get", challenge: challenge, origin: origin)
        let authData = Self.rpIDHash(rpID) + [flags] + Self.bigEndian(counter)
        let signature = sign(authData + json.withUnsafeBytes { OpenSSL.sha256($0) })
        return (json, authData, signature)
    }

    static func bigEndian(_ n: UInt32) -> [UInt8] {
        [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
    }
}
