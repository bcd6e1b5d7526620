import CredFile

extension CommandContext {
    /// SPEC §14 for `verify` and the `login` screen: when `user` has a second factor and
    /// `otp-append` is off, the code is asked on a terminal (`prompt`, not echoed) or read as
    /// the next line of standard input, and the login goes on as one with the code appended
    /// (`store`'s second factor set so). Anything but 6 digits is no code: the login is then
    /// denied as one without a code (`second-factor-required`), never tried as part of the
    /// password. Otherwise `password` as it is.
    func askCode(_ store: inout CredentialStore, user: String, password: Password, prompt: String) throws
        -> Password
    {
        guard var factor = store.secondFactor, !factor.appended,
            try factor.isEnrolled(usernameBytes: Array(user.utf8))
        else { return password }
        let tooLong = CredFileError.usage("a code is 6 digits")
        let code =
            terminal.inputIsTerminal
            ? try terminal.readSecret(prompt, tooLong) : try terminal.readLine(limit: 64, tooLong: tooLong) ?? []
        guard code.count == SecondFactor.digits, code.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return password
        }
        factor.appended = true
        store.secondFactor = factor
        return password.bytes.withUnsafeBytes { bytes in
            var joined = Array(bytes) + code
            defer { for index in joined.indices { joined[index] = 0 } }
            return Password(utf8: joined)
        }
    }
}
