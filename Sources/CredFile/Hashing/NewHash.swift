extension HashPolicy {
    /// A new hash of `password` under this policy, as the file stores it (SPEC §3.1):
    /// passlib's `$pbkdf2-sha256$…`/`$pbkdf2-sha512$…` at the policy's rounds, or
    /// argon2id's PHC string `$argon2id$v=19$m=…,t=…,p=…$salt$hash` at its parameters
    /// (libargon2; a 16-byte salt from `RAND_bytes`, a 32-byte hash), which passlib,
    /// argon2-cffi, Django (as `argon2$argon2id$…`), Dovecot (`{ARGON2ID}`) and OpenLDAP
    /// (`{ARGON2}`) verify.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL or libargon2 fails.
    public func hash(_ password: Password) throws -> String {
        guard algorithm == .argon2id else { return try PasswordHash(hashing: password, policy: self).string }
        return try Argon2Hash(hashing: password, parameters: argon2).phcString
    }
}

extension Argon2Hash {
    /// A new argon2id (v=19) hash of `password`'s NFC bytes with a fresh 16-byte salt
    /// from `RAND_bytes` and a 32-byte tag.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL or libargon2 fails.
    init(hashing password: Password, parameters: Argon2Parameters) throws {
        let salt = try OpenSSL.randomBytes(count: HashPolicy.saltCount)
        let tag = try Argon2Library.hash(
            .argon2id, version: 0x13, password: password.bytes, salt: salt, memoryKiB: UInt32(parameters.memoryKiB),
            iterations: UInt32(parameters.time), lanes: UInt32(parameters.lanes), count: HashPolicy.argon2TagCount)
        self.init(
            variant: .argon2id, version: 0x13, memoryKiB: parameters.memoryKiB, iterations: parameters.time,
            lanes: parameters.lanes, salt: salt, tag: tag.withUnsafeBytes { Array($0) })
    }

    /// A hash from its parts, its PHC string (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`,
    /// salt and hash in standard base64 without padding) written as the `argon2` CLI and
    /// argon2-cffi write it.
    init(
        variant: Argon2Library.Variant, version: UInt32, memoryKiB: Int, iterations: Int, lanes: Int, salt: [UInt8],
        tag: [UInt8]
    ) {
        let versionField = version == 0x10 ? "" : "v=\(version)$"
        let text =
            "$\(variant.rawValue)$\(versionField)m=\(memoryKiB),t=\(iterations),p=\(lanes)$"
            + Base64Core.standard(salt, padded: false) + "$" + Base64Core.standard(tag, padded: false)
        self.init(
            variant: variant, version: version, memoryKiB: memoryKiB, iterations: iterations, lanes: lanes, salt: salt,
            tag: tag, phc: Array(text.utf8), origin: "")
    }

    /// The PHC string, as the file stores it.
    var phcString: String { String(decoding: phc, as: UTF8.self) }
}
