extension CredentialStore {
    /// Registers a user with an invitation (SPEC §12's `invite` mode): the code is checked
    /// first, so that a wrong, used, expired or revoked code (or one bound to another name)
    /// gets one answer whatever the name; then the name and password as
    /// `register(username:password:storage:)` checks them, and under the file's lock the
    /// code is used (once: a second registration with it is refused) and the line appended
    /// by the same one atomic rewrite. A registration that fails after the code was used
    /// gives it back.
    /// - Parameters:
    ///   - username: the new name (SPEC §2).
    ///   - password: the new password (SPEC §8, ``passwordPolicy``).
    ///   - invitation: the code as the person typed it (``InvitationCode/init(parsing:)``).
    ///   - registrations: the state database that holds the invitations.
    ///   - storage: hashed (the default) or the legacy plaintext form.
    ///   - now: seconds since 1970 (default: the clock).
    /// - Throws: ``CredFileError/Code/invitationRefused`` for any code that cannot be used
    ///   by that name now; ``CredFileError/Code/usage`` for an invalid name or password;
    ///   ``CredFileError/Code/userExists`` (the code is kept for another try); an I/O,
    ///   lock or state database error. Nothing is written then.
    @available(*, noasync, message: "it blocks its thread; in async code use it from a thread of your own")
    public func register(
        username: String, password: Password, invitation: InvitationCode, registrations: Registrations,
        storage: SecretForm = .hashed, now: Int64? = nil
    ) throws {
        let now = now ?? Registrations.clock()
        guard try registrations.accepts(invitation, username: username, now: now) else {
            throw Self.invitationRefused
        }
        var redeemed: Int64?
        do {
            try register(username: username, password: password, storage: storage) {
                guard let id = try registrations.redeem(invitation, username: username, now: now) else {
                    throw Self.invitationRefused
                }
                redeemed = id
            }
        } catch {
            if let redeemed { try? registrations.unredeem(id: redeemed) }
            throw error
        }
    }

    private static let invitationRefused = CredFileError(
        .invitationRefused, "the invitation code is wrong, used, expired or revoked")
}
