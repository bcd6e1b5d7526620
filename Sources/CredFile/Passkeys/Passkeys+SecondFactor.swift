// A passkey as the second factor after a password (SPEC §14): the guard's layer knows no
// passkey, so the passkeys' folder tells it who has one and proves the answer.

extension SecondFactor {
    /// Counts a passkey in `passkeys` as a second factor of the separate step
    /// (``passkeyHolder``): a user who has one gets
    /// ``CredentialStore/Verification/awaitsCode`` after a right password.
    public mutating func counting(_ passkeys: Passkeys) {
        passkeyHolder = { try !passkeys.credentials(usernameBytes: $0).isEmpty }
    }
}

extension CredentialStore {
    /// Checks the passkey answer of `usernameBytes`, whose password was right a moment ago
    /// (``Verification/awaitsCode``), through the store's guard as
    /// `verifyCode(usernameBytes:code:client:)` does: an assertion for a challenge of
    /// ``Passkeys/Purpose/secondFactor`` given for that name, by a credential of that name
    /// (user presence enough), is granted and resets the name's failures; any other is a
    /// failure of §9 (`reason=wrong-code`), throttled and locked out like a wrong password.
    /// - Parameters:
    ///   - usernameBytes: the name whose password was right.
    ///   - passkeys: the passkeys of the portal.
    ///   - credentialID: the assertion's credential.
    ///   - clientDataJSON: its client data.
    ///   - authenticatorData: its authenticator data.
    ///   - signature: its signature.
    ///   - client: the client's address (an IP), for the log's `rhost=`; nil when unknown.
    /// - Returns: the answer; ``Verification/denial`` is `wrongCode` for every denial but
    ///   the guard's own (`throttled`, `locked-out`).
    /// - Throws: what ``Passkeys/signIn(purpose:credentialID:clientDataJSON:authenticatorData:signature:time:)``
    ///   throws; ``CredFileError/Code/guardDatabase`` when the state database cannot be used.
    @available(*, noasync, message: "it blocks its thread; in async code run it on a thread of its own")
    public func verifyPasskey(
        usernameBytes: some Collection<UInt8>, passkeys: Passkeys, credentialID: [UInt8], clientDataJSON: [UInt8],
        authenticatorData: [UInt8], signature: [UInt8], client: String?
    ) throws -> Verification {
        try verifySecondFactor(usernameBytes: Array(usernameBytes), client: client) {
            let outcome = try passkeys.signIn(
                purpose: .secondFactor, credentialID: credentialID, clientDataJSON: clientDataJSON,
                authenticatorData: authenticatorData, signature: signature)
            guard case .accepted(let user) = outcome else { return nil }
            return user
        }
    }
}
