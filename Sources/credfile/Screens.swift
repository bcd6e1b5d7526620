import CredFile

/// The seed app's two screens, in the terminal: login and register. They answer as
/// the SwiftUI app did, in English or the app's Spanish.
extension CommandContext {
    func login() throws -> ExitStatus {
        say(messages.loginTitle)
        let username = try readUsername()
        var store = try loginStore(service: "login")
        if invocation.upgrade { store.policy = try writingPolicy() }
        let password = try askCode(
            &store, user: username, password: try readPassword(new: false, prompt: messages.passwordPrompt),
            prompt: messages.codePrompt)
        let result = try store.verify(
            username: username, password: password, upgradeOnSuccess: invocation.upgrade, client: nil)
        guard result.granted else {
            say(messages.wrongCredentials)
            return .failure
        }
        say(messages.accessGranted)
        return .success
    }

    func register() throws -> ExitStatus {
        say(messages.registerTitle)
        let username = try readUsername()
        var password = try readPassword(new: true, prompt: messages.passwordPrompt)
        guard !username.isEmpty, password.bytes.count > 0 else {
            say(messages.fieldsEmpty)
            return .usage
        }
        let store = try passwordStore()
        // A refused password is asked for again, as a form would, a bounded number of times.
        var attempts = 1
        while let violation = try store.passwordPolicy.violation(of: password, username: username, path: store.path) {
            say(messages.passwordRefused(violation))
            guard attempts < Self.registerAttempts else { return .usage }
            attempts += 1
            password = try readPassword(new: true, prompt: messages.passwordPrompt)
        }
        do {
            try store.register(username: username, password: password, storage: .hashed)
        } catch let error as CredFileError where error.code == .userExists {
            say(messages.userExists)
            return .userConflict
        }
        say(messages.userRegistered)
        return .success
    }

    /// How many passwords the register screen asks for before it gives up.
    static let registerAttempts = 3

    /// A username typed on the screen (echoed), or one line of standard input; one that
    /// is not valid UTF-8 is refused (exit 2), never repaired into another name.
    private func readUsername() throws -> String {
        terminal.showPrompt(messages.usernamePrompt)
        let line = try terminal.readLine() ?? []
        guard let name = String(validating: line, as: UTF8.self) else {
            throw CredFileError.usage("username is not valid UTF-8")
        }
        return name
    }
}
