/// The request of the qmail checkpassword interface, as Dovecot 2.3's
/// `passdb { driver = checkpassword }` and qmail's `checkpassword` callers write it on
/// file descriptor 3 (SPEC §7):
///
///     login NUL password NUL timestamp NUL [more data]
///
/// at most 512 bytes in all. Dovecot sends an empty timestamp (`user\0pass\0\0`); the
/// timestamp and anything after it are not used by credfile (no APOP), so only the
/// login and the password must be NUL-terminated.
package struct CheckpasswordRequest: Sendable, CustomStringConvertible {
    /// The most bytes a caller may write on fd 3 (`CHECKPASSWORD_MAX_REQUEST_LEN` in Dovecot).
    public static let maximumCount = 512

    /// The login, as sent (raw bytes; callers send UTF-8).
    public let username: [UInt8]
    /// The password, as sent.
    public let password: SecretBytes

    /// Parses the bytes read from fd 3 up to end of input.
    /// - Throws: ``CredFileError/Code/usage`` naming what is wrong with the framing (more
    ///   than 512 bytes, a missing NUL, an empty login); the message never quotes the bytes.
    public init(parsing bytes: some Collection<UInt8>) throws(CredFileError) {
        let bytes = Array(bytes)
        guard bytes.count <= Self.maximumCount else {
            throw CredFileError(.usage, "the request on fd 3 is longer than \(Self.maximumCount) bytes")
        }
        guard let end = bytes.firstIndex(of: 0) else {
            throw CredFileError(.usage, "the request on fd 3 has no NUL after the login")
        }
        guard let passwordEnd = bytes[(end + 1)...].firstIndex(of: 0) else {
            throw CredFileError(.usage, "the request on fd 3 has no NUL after the password")
        }
        guard end > 0 else { throw CredFileError(.usage, "the request on fd 3 has an empty login") }
        username = Array(bytes[..<end])
        password = SecretBytes(bytes[(end + 1)..<passwordEnd])
    }

    /// `CheckpasswordRequest(redacted)`: the password is never printed.
    public var description: String { "CheckpasswordRequest(redacted)" }
}
