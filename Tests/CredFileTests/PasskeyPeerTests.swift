import CredFileTestSupport
import Testing

@testable import CredFile

// SPEC §14's passkeys against an independent client: Yubico's python-fido2 (PyPI `fido2`,
// in the peers' venv) builds the clientDataJSON, authenticator data, COSE key and
// `none` attestation object with its own CBOR encoder, and `cryptography` signs; credfile
// must accept that registration and assertion, and refuse the assertion replayed.

/// The peer: prints the registration's clientDataJSON and attestation object, then the
/// assertion's clientDataJSON, authenticator data, signature and credential id, in hex.
private let peerScript = """
    import hashlib, os, sys
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from fido2.cose import ES256
    from fido2.webauthn import (AttestationObject, AttestedCredentialData, AuthenticatorData,
                                CollectedClientData)
    origin, rp_id, register_challenge, sign_in_challenge = sys.argv[1:5]
    key = ec.generate_private_key(ec.SECP256R1())
    credential_id = os.urandom(32)
    rp_hash = hashlib.sha256(rp_id.encode()).digest()
    created = CollectedClientData.create(CollectedClientData.TYPE.CREATE, bytes.fromhex(register_challenge), origin)
    attested = AttestedCredentialData.create(bytes(16), credential_id, ES256.from_cryptography_key(key.public_key()))
    registration = AuthenticatorData.create(rp_hash, 0x45, 1, attested)
    attestation = AttestationObject.create("none", registration, {})
    got = CollectedClientData.create(CollectedClientData.TYPE.GET, bytes.fromhex(sign_in_challenge), origin)
    assertion = AuthenticatorData.create(rp_hash, 0x05, 2)
    signature = key.sign(bytes(assertion) + got.hash, ec.ECDSA(hashes.SHA256()))
    for part in (bytes(created), bytes(attestation), bytes(got), bytes(assertion), signature, credential_id):
        print(part.hex())
    """

@Suite("Passkeys (SPEC §14) against python-fido2")
struct PasskeyPeerTests {
    @Test(
        "a registration and assertion built by python-fido2 are accepted; the assertion replayed is refused",
        .enabled(
            if: ExternalTool.runnable(ExternalTool.peerPython),
            Comment(rawValue: ExternalTool.skipNote(ExternalTool.peerPython))))
    func pythonFido2() throws {
        try withTemporaryDirectory { directory in
            let store = CredentialStore(path: directory.file("users"), policy: oneRound)
            try store.register(username: "alice", password: "correct horse battery")
            let passkeys = try Passkeys(
                credentialFile: store.path, origin: "https://login.example.com", rpID: "example.com")
            let user = Array("alice".utf8)
            let register = try passkeys.newChallenge(for: .registration, usernameBytes: user)
            let signIn = try passkeys.newChallenge(for: .signIn)
            func hex(_ bytes: [UInt8]) -> String {
                bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                    .joined()
            }
            let result = try ChildProcess.run(
                try ExternalTool.path(ExternalTool.peerPython),
                ["-c", peerScript, "https://login.example.com", "example.com", hex(register), hex(signIn)])
            #expect(result.shellStatus == 0, "\(result.stderr)")
            let parts = result.stdout.split(separator: "\n").map { line in
                stride(from: 0, to: line.count, by: 2).map { offset -> UInt8 in
                    let start = line.index(line.startIndex, offsetBy: offset)
                    return UInt8(line[start..<line.index(start, offsetBy: 2)], radix: 16) ?? 0
                }
            }
            try #require(parts.count == 6)
            #expect(
                try passkeys.register(
                    usernameBytes: user, name: "python-fido2", clientDataJSON: parts[0], attestationObject: parts[1])
                    == .accepted(user: user))
            let assertion = {
                try passkeys.signIn(
                    credentialID: parts[5], clientDataJSON: parts[2], authenticatorData: parts[3], signature: parts[4])
            }
            #expect(try assertion() == .accepted(user: user))
            #expect(try assertion() == .refused(.challenge))
            #expect(try passkeys.credentials(usernameBytes: user).first?.counter == 2)
        }
    }
}
