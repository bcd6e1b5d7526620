/// `--group NAME` of `pam`, `checkpassword` and `helper` (SPEC §13): a login is good only
/// for a member of the group. Set as ``CredentialStore/requiredGroup``; a good password of
/// a non-member is denied as every other denial, and logged `reason=not-in-group`
/// (``LoginDenial/notInGroup``). Made from a group file by
/// ``init(groups:group:)``.
public struct GroupRequirement: Sendable {
    /// The group a user must be in.
    public let group: String
    /// Whether a user (the name as sent, UTF-8) is a member now.
    public let admits: @Sendable (String) -> Bool

    /// The requirement that `admits` holds for the user.
    /// - Parameters:
    ///   - group: the group's name (for messages).
    ///   - admits: whether a user is a member now.
    public init(group: String, admits: @escaping @Sendable (String) -> Bool) {
        self.group = group
        self.admits = admits
    }
}
