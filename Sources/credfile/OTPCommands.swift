import CredFile

extension CommandContext {
    /// `credfile otp FILE USER --enroll|--remove` (SPEC §14): a TOTP second factor. The
    /// secret is printed once, inside the URI, before it is saved, and never again.
    func otp() throws -> ExitStatus {
        guard invocation.enroll != invocation.remove else {
            throw CredFileError.usage("otp needs --enroll or --remove (one of them)")
        }
        let secondFactor = try secondFactor()
        let name = Array(user.utf8)
        if invocation.remove {
            guard try secondFactor.remove(usernameBytes: name) else {
                throw CredFileError(.userNotFound, "\(Escaped.quotedName(name)) has no second factor")
            }
            say("second factor removed")
            return .success
        }
        guard try store().hasEntry(named: user) else { throw CredFileError(.userNotFound, messages.userNotFound) }
        let enrolment = try secondFactor.newEnrolment(usernameBytes: name, issuer: invocation.issuer)
        say(enrolment.uri)
        // On a terminal, the same URI as a QR code for the app's camera.
        if terminal.inputIsTerminal, let lines = TerminalQR.lines(enrolment.uri) {
            for line in lines { say(line) }
        }
        // Shown (flushed) before the code is read: whoever types it needs the URI first.
        terminal.showPrompt(terminal.inputIsTerminal ? "Code from the app: " : "")
        guard let line = try terminal.readLine(limit: 64), try secondFactor.enroll(enrolment, code: line) else {
            terminal.writeError("credfile: the code is wrong; nothing was saved\n")
            return .failure
        }
        say("second factor saved in \(Escaped.path(secondFactor.otpFile))")
        return .success
    }
}
