// The FuzzSecret target's check: the registry of secret syntaxes (SPEC §2, §3.2).

import CredFile

extension FuzzChecks {
    /// One secret (the input up to its first CR or LF) behind a fixed username:
    /// classification never traps and is a pure function of the bytes; a peer prefix is
    /// never plaintext; credfile's own format formats back to the same bytes; a verified
    /// hash is described by scheme and cost, never by the secret; and the hash string
    /// itself never verifies as its own password (no pass-the-hash), checked for hashes
    /// cheap enough to verify here (estimated at most 100,000 PBKDF2-SHA256 rounds: a
    /// well-formed bcrypt of cost 31 or an argon2 of 1 GiB would hang or exhaust the fuzzer).
    public static func secret(_ input: [UInt8]) throws(FuzzFailure) {
        let secret = Array(input.prefix { $0 != 0x0A && $0 != 0x0D })
        let line = Array("u,".utf8) + secret
        func classify() -> StoredSecret? { CredentialFile(bytes: line).firstEntry(named: "u")?.entry?.secret }
        let first = classify()
        let second = classify()
        try expect(first?.storageDescription == second?.storageDescription, "classification is not a pure function")
        guard let stored = first else { return }  // the line is not an entry of "u" (e.g. not UTF-8)
        let reference = Reference.classifySecret(secret)
        if (reference != .plaintext && reference != .locked(.peer)) || secret.first == UInt8(ascii: "$") {
            if case .plaintext = stored { throw FuzzFailure(description: "a secret with hash syntax is plaintext") }
        }
        switch stored {
        case .pbkdf2(let hash):
            try expect(Array(hash.string.utf8) == secret, "credfile's own format does not format back to the secret")
        case .peer(let peer):
            let hash = peer.hash
            try expect(!hash.scheme.isEmpty && !hash.description.isEmpty, "a peer hash without a scheme")
            try expect(hash.estimatedWork.isFinite && hash.estimatedWork >= 0, "estimated work out of range")
            if let cost = hash.cost {
                try expect(cost >= 0 && cost <= Int(UInt32.max), "cost \(cost) outside the formats' ranges")
            }
            try expect(hash.estimatedMemory >= 0, "estimated memory below zero")
            // The description names the scheme, which the secret starts with too: what it must
            // never hold is the secret's material, e.g. the end of its salt or checksum.
            if secret.count >= 16 {
                let tail = String(decoding: secret.suffix(8), as: UTF8.self)
                try expect(!hash.description.contains(tail), "the description quotes the secret")
            }
            if hash.estimatedWork <= 100_000 {
                let granted = (try? hash.verify(SecretBytes(secret))) ?? false
                try expect(!granted, "the hash string verifies as its own password")
            }
        case .locked(let hash):
            try expect(secret.first == UInt8(ascii: "!"), "a locked secret that does not start with !")
            switch hash {
            case .pbkdf2, .peer: break
            default: throw FuzzFailure(description: "locked before a hash credfile does not verify")
            }
        case .plaintext, .unsupportedHash, .malformed:
            break
        }
    }
}
