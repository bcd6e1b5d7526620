import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension CommandContext {
    /// `credfile pam FILE`: the login check for Linux-PAM's `pam_exec.so expose_authtok`
    /// (SPEC §7). The user is `$PAM_USER`; the password is standard input to end of
    /// input (at most 4,096 bytes after one trailing NUL — Linux-PAM ≤ 1.3 — and one
    /// trailing LF or CRLF are removed). Exit 0 granted, 1 denied with nothing printed,
    /// 2 misuse, 5 I/O. `--upgrade` rehashes a plaintext or weak entry on a good login.
    func pam() throws -> ExitStatus {
        // Standard input first, whatever else is wrong: exiting before pam_exec has
        // written the password could hand the caller a SIGPIPE. (On a terminal, a person
        // is trying it out: say what is missing before waiting for end of input.)
        if terminal.inputIsTerminal { _ = try pamUser() }
        // 4,096 bytes, a CRLF and a NUL.
        var bytes = try BoundedReader.standardInput.readToEOF(
            limit: PasswordRules.maximumCount + 3,
            tooLong: CredFileError.usage("pam: the password is longer than \(PasswordRules.maximumCount) bytes"))
        defer { BoundedInput.zero(&bytes) }
        let user = try pamUser()
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0 { end -= 1 }
        if end > 0, bytes[end - 1] == 0x0A {
            end -= 1
            if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        }
        guard end <= PasswordRules.maximumCount else {
            throw CredFileError.usage("pam: the password is longer than \(PasswordRules.maximumCount) bytes")
        }
        var store = try loginStore(service: "pam")
        if invocation.upgrade { store.policy = try invocation.policy() }
        let result = try store.verify(
            usernameBytes: user.utf8, password: Password(utf8: bytes[..<end]), upgradeOnSuccess: invocation.upgrade,
            client: clientAddress(environmentValue("PAM_RHOST")))
        guard result.granted else { return .failure }  // nothing printed: pam_exec would show it
        if let error = result.upgradeError {
            terminal.writeError("credfile: \(messages.upgradeFailed(error.description))\n")
        }
        return .success
    }

    /// `$PAM_USER`, after checking that pam_exec runs this for the auth stack.
    private func pamUser() throws -> String {
        guard environmentValue("PAM_TYPE") == Array("auth".utf8) else {
            throw CredFileError.usage(
                "pam: PAM_TYPE is not 'auth'; use it as 'auth required pam_exec.so expose_authtok quiet …'")
        }
        guard let rawUser = environmentValue("PAM_USER"), !rawUser.isEmpty else {
            throw CredFileError.usage("pam: PAM_USER is not set")
        }
        guard let user = String(validating: rawUser, as: UTF8.self) else {
            throw CredFileError.usage("pam: PAM_USER is not valid UTF-8")
        }
        return user
    }

    /// A client address from the caller's environment (`PAM_RHOST`, `TCPREMOTEIP`), for
    /// the guard's `rhost=`: nil when unset or empty; bytes that are not UTF-8 are shown
    /// as the log escapes them.
    func clientAddress(_ bytes: [UInt8]?) -> String? {
        guard let bytes, !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The raw bytes of an environment variable of this process (nil when unset). Read
    /// with `getenv`, not through `String`, so bytes that are not UTF-8 are seen as such.
    func environmentValue(_ name: String) -> [UInt8]? {
        guard let value = getenv(name) else { return nil }
        return Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: strlen(value)))
    }
}
