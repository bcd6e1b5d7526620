import CredFile
internal import COpenSSL

// A software WebAuthn authenticator for the passkey tests of both test targets (SPEC §14):
// an EC P-256 key made and used by OpenSSL, the authenticator data, `none` attestation
// object and COSE key built here (with the tiny CBOR encoder below, for test fixtures only:
// credfile itself reads CBOR through libcbor), and a browser's clientDataJSON. It names
// CredFile's public API only (this target is built without testability in release), and
// it is the one place outside Sources/CredFile/Internals/ that calls libcrypto: signing,
// which credfile never does.

/// CBOR for fixtures (RFC 8949's definite forms only).
public enum TestCBOR {
    /// A data item.
    public indirect enum Item: Sendable {
        /// Major type 0.
        case unsigned(UInt64)
        /// Major type 1 (`n` is negative).
        case negative(Int64)
        /// Major type 2.
        case bytes([UInt8])
        /// Major type 3.
        case text(String)
        /// Major type 5, its pairs in this order.
        case map([(Item, Item)])
    }

    /// The head of an item of `major` type whose argument is `value`.
    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        switch value {
        case 0..<24: [major << 5 | UInt8(value)]
        case 24..<256: [major << 5 | 24, UInt8(value)]
        case 256..<65536: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
        default: [major << 5 | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }

    /// The encoding of `item`.
    public static func encode(_ item: Item) -> [UInt8] {
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
public final class SoftwareAuthenticator {
    private let key: OpaquePointer
    /// The credential ID.
    public let id: [UInt8]
    /// The signature counter the next assertion reports (after growing by one, unless 0).
    public var counter: UInt32
    /// X and Y of the public key.
    private let publicKey: [UInt8]

    /// A new P-256 key whose counter starts at `counter`, with credential ID `id` (32
    /// random bytes if nil).
    public init(counter: UInt32 = 0, id: [UInt8]? = nil) throws {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_keygen(context, &made) == 1, let made
        else { throw HarnessError("EC key generation failed") }
        key = made
        var encoded = [UInt8](repeating: 0, count: 65)
        var count = 0
        guard EVP_PKEY_get_octet_string_param(made, "encoded-pub-key", &encoded, 65, &count) == 1, count == 65 else {
            throw HarnessError("no public key")
        }
        publicKey = Array(encoded[1...])
        self.counter = counter
        self.id = id ?? (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    deinit { EVP_PKEY_free(key) }

    /// The ES256 COSE_Key of the public key.
    public var coseKey: [UInt8] {
        TestCBOR.encode(
            .map([
                (.unsigned(1), .unsigned(2)), (.unsigned(3), .negative(-7)), (.negative(-1), .unsigned(1)),
                (.negative(-2), .bytes(Array(publicKey[..<32]))), (.negative(-3), .bytes(Array(publicKey[32...]))),
            ]))
    }

    /// DER ECDSA-SHA-256 over `message`.
    private func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 80)
        var count = signature.count
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, &signature, &count, message, message.count) == 1
        else { return [] }
        return Array(signature[..<count])
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var count: UInt32 = 0
        guard EVP_Digest(bytes, bytes.count, &digest, &count, EVP_sha256(), nil) == 1, count == 32 else { return [] }
        return digest
    }

    private static func clientDataJSON(type: String, challenge: [UInt8], origin: String) -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Passkeys.base64URL(challenge))","origin":"\#(origin)","crossOrigin":false}"#
                .utf8)
    }

    /// A registration: (clientDataJSON, attestationObject), with authenticator data of
    /// `flags` (0x45: user present, verified, attested credential data), attestation
    /// format `fmt` and the COSE key `coseKey` (this key's if nil).
    public func register(
        challenge: [UInt8], origin: String = "https://example.com", rpID: String = "example.com",
        flags: UInt8 = 0x45, fmt: String = "none", coseKey: [UInt8]? = nil
    ) -> (clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        let json = Self.clientDataJSON(type: "webauthn.create", challenge: challenge, origin: origin)
        let authData =
            Self.sha256(Array(rpID.utf8)) + [flags] + Self.bigEndian(counter) + [UInt8](repeating: 0, count: 16)
            + [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id + (coseKey ?? self.coseKey)
        let object = TestCBOR.encode(
            .map([(.text("fmt"), .text(fmt)), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]))
        return (json, object)
    }

    /// An assertion: (clientDataJSON, authenticatorData, signature), with authenticator data
    /// of `flags` (0x05: user present and verified); the counter grows by one first unless
    /// it is 0 (an authenticator without a counter).
    public func assert(
        challenge: [UInt8], origin: String = "https://example.com", rpID: String = "example.com", flags: UInt8 = 0x05
    ) -> (clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
        if counter != 0 { counter += 1 }
        let json = Self.clientDataJSON(type: "webauthn.get", challenge: challenge, origin: origin)
        let authData = Self.sha256(Array(rpID.utf8)) + [flags] + Self.bigEndian(counter)
        let signature = sign(authData + Self.sha256(json))
        return (json, authData, signature)
    }

    private static func bigEndian(_ n: UInt32) -> [UInt8] {
        [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
    }
}
