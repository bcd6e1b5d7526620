/// Why a login was denied, as the log's `reason=` names it (SPEC §9). The caller of a
/// login check never sees it: every denial gets the same answer.
public enum LoginDenial: String, Sendable, CaseIterable {
    /// The name's entry holds another password.
    case wrongPassword = "wrong-password"
    /// No entry has the name.
    case unknownUser = "unknown-user"
    /// The entry is locked (`!` before its hash, SPEC §2).
    case locked
    /// The attempt came before the name's delay was over (not counted).
    case throttled
    /// The name is locked out after too many failures (not counted).
    case lockedOut = "locked-out"
    /// The entry is malformed.
    case malformed
    /// The entry holds a hash of a scheme credfile does not verify.
    case unsupported
    /// The password was right but the one-time code was wrong, missing or used (SPEC §14).
    case wrongCode = "wrong-code"
    /// The user has a second factor and the caller can send one secret only, without
    /// `otp-append` (SPEC §14).
    case secondFactorRequired = "second-factor-required"
    /// The password was right but the user is not in the group the caller requires
    /// (`--group`, ``CredentialStore/requiredGroup``; SPEC §13).
    case notInGroup = "not-in-group"
}
