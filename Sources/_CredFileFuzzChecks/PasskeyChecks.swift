import CredFile

extension FuzzChecks {
    /// FuzzPasskeys: what SPEC §14's passkeys read around libfido2 and libcbor. First byte
    /// modulo 3:
    /// * 0: the rest is a `clientDataJSON` — `ClientData(parsing:)` never traps; what it
    ///   accepts is UTF-8 of at most 4,096 bytes, one object (`{` … `}` inside white
    ///   space), read the same twice, and no longer accepted with a byte after it that is
    ///   not white space.
    /// * 1: an attestation object for RP ID `example.com` — `Passkeys.attestedCredential`
    ///   never traps (libcbor, libfido2); what it accepts says `none`, holds the SHA-256
    ///   of `example.com`, the credential id (1 to 1,023 bytes) and the COSE key as
    ///   bytes of the input, and that key decodes to an ES256 key.
    /// * 2: a COSE key — `Passkeys.es256PublicKey(coseKey:)` never traps; what it accepts
    ///   gives 64 bytes whose halves (X and Y) are bytes of the input.
    public static func passkeys(_ input: [UInt8]) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let rest = Array(input.dropFirst())
        switch selector % 3 {
        case 0:
            guard let data = ClientData(parsing: rest) else { return }
            let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
            let trimmed = rest.drop { space.contains($0) }.reversed().drop { space.contains($0) }.reversed()
            try expect(rest.count <= ClientData.maximumCount, "clientData: accepted past its limit")
            try expect(String(validating: rest, as: UTF8.self) != nil, "clientData: accepted bytes that are not UTF-8")
            try expect(
                trimmed.first == UInt8(ascii: "{") && trimmed.last == UInt8(ascii: "}"), "clientData: not one object")
            try expect(ClientData(parsing: rest) == data, "clientData: two readings differ")
            if rest.count < ClientData.maximumCount {
                try expect(ClientData(parsing: rest + [UInt8(ascii: "x")]) == nil, "clientData: trailing byte accepted")
            }
        case 1:
            guard let credential = Passkeys.attestedCredential(attestationObject: rest, rpID: "example.com") else {
                return
            }
            try expect((1...1023).contains(credential.id.count), "attestation: the id's length")
            try expect(contains(rest, Array("none".utf8)), "attestation: accepted without fmt none")
            try expect(contains(rest, exampleRPIDHash), "attestation: accepted without the RP ID hash")
            try expect(contains(rest, credential.id), "attestation: the id is not the input's")
            try expect(contains(rest, credential.coseKey), "attestation: the key is not the input's")
            try expect(
                Passkeys.es256PublicKey(coseKey: credential.coseKey)?.count == 64, "attestation: not an ES256 key")
        default:
            guard let key = Passkeys.es256PublicKey(coseKey: rest) else { return }
            try expect(key.count == 64, "COSE: the key is not 64 bytes")
            try expect(contains(rest, Array(key.prefix(32))), "COSE: X is not the input's")
            try expect(contains(rest, Array(key.suffix(32))), "COSE: Y is not the input's")
        }
    }

    /// SHA-256 of `example.com`.
    private static let exampleRPIDHash: [UInt8] = [
        0xa3, 0x79, 0xa6, 0xf6, 0xee, 0xaf, 0xb9, 0xa5, 0x5e, 0x37, 0x8c, 0x11, 0x80, 0x34, 0xe2, 0x75,
        0x1e, 0x68, 0x2f, 0xab, 0x9f, 0x2d, 0x30, 0xab, 0x13, 0xd2, 0x12, 0x55, 0x86, 0xce, 0x19, 0x47,
    ]

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
