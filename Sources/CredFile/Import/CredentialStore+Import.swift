extension CredentialStore {
    /// Adds or updates the users of an import (``ImportReader/read(_:format:)``) in one
    /// rewrite under the lock, all or nothing, each secret stored byte for byte (SPEC §5,
    /// like `chpasswd -e`). Hashes are not judged by ``passwordPolicy``: they are not
    /// passwords chosen now.
    /// - Returns: how many users were added and how many updated.
    /// - Throws: ``CredFileError/Code/usage`` naming the input line of a bad user or secret,
    ///   ``CredFileError/Code/malformedFile`` when a user's entry in the file is malformed,
    ///   or an I/O or lock error; nothing is written then.
    public func importHashes(_ users: [ImportedUser]) throws -> (added: Int, updated: Int) {
        var seen: [[UInt8]: Int] = [:]
        for user in users {
            func fail(_ message: String) -> CredFileError { CredFileError.usage("line \(user.line): \(message)") }
            do {
                try Username.validate(user.username)
            } catch let error as CredFileError {
                throw fail(error.message)
            }
            if let first = seen.updateValue(user.line, forKey: Unicode.nfcBytes(of: user.username)) {
                throw fail("the same user as line \(first)")
            }
            // A secret is a hash credfile verifies within this store's cost limits, or a
            // checked plaintext (Dovecot's {PLAIN}): never an account that cannot log in.
            let bytes = Array(user.secret.utf8)
            if SecretSyntax.hasHashSyntax(bytes) {
                if let why = ImportReader.refusal(ofHash: bytes) { throw fail(why) }
                if let hash = SecretSyntax.classify(bytes[...]).knownHash,
                    case .tooCostly(let why) = policy.costVerdict(of: hash)
                {
                    throw fail(why.description)
                }
            } else {
                do {
                    try PasswordRules.validate(Password(utf8: bytes), plaintext: true)
                } catch let error as CredFileError {
                    throw fail(error.message)
                }
            }
        }
        return try storeSecrets(users.map { ($0.username, $0.secret) })
    }
}
