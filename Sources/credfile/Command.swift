import CredFile

/// The subcommands of `credfile`, with their arguments and the options only they take.
enum Command: String, CaseIterable {
    case add, verify, passwd, delete, `import`, list, check, upgrade, hash, login, register, calibrate
    case pam, checkpassword, helper, export

    /// The positional arguments, by name.
    var arguments: [String] {
        switch self {
        case .add, .verify, .passwd, .delete: ["FILE", "USER"]
        case .import, .list, .check, .upgrade, .login, .register, .pam, .helper, .export: ["FILE"]
        case .checkpassword: ["FILE", "PROG"]  // then PROG's own arguments
        case .hash, .calibrate: []
        }
    }

    /// The command-specific options it accepts (the common ones are accepted everywhere).
    var options: Set<String> {
        switch self {
        case .add, .passwd: ["--plaintext", "--backup"]
        case .import: ["--plaintext", "--backup", "--jobs"]
        case .delete, .register: ["--backup"]
        case .verify, .login: ["--upgrade", "--backup"]
        case .upgrade: ["--dry-run", "--backup", "--jobs"]
        case .calibrate: ["--target-ms"]
        case .list, .check, .hash, .checkpassword: []
        case .pam: ["--upgrade"]
        case .helper: ["--protocol", "--jobs"]
        case .export: ["--to", "--base-dn", "--skip-unexportable"]
        }
    }

    /// Runs the command; errors are turned into exit statuses by the caller.
    func run(_ c: CommandContext) throws -> ExitStatus {
        switch self {
        case .add: try c.add()
        case .verify: try c.verify()
        case .passwd: try c.passwd()
        case .delete: try c.delete()
        case .import: try c.importUsers()
        case .list: try c.list()
        case .check: try c.check()
        case .upgrade: try c.upgrade()
        case .hash: try c.hash()
        case .login: try c.login()
        case .register: try c.register()
        case .calibrate: try c.calibrate()
        case .pam: try c.pam()
        case .checkpassword: c.checkpassword()
        case .helper: try c.helper()
        case .export: try c.export()
        }
    }
}

/// What every command needs: the parsed options, the terminal, the message catalog.
struct CommandContext {
    let invocation: Invocation
    let terminal: Terminal
    let messages: Messages

    var file: String { invocation.positionals[0] }
    var user: String { invocation.positionals[1] }
    var storage: CredentialStore.Storage { invocation.plaintext ? .plaintext : .hashed }

    /// The store with the policy and backup setting the options ask for.
    func store() throws -> CredentialStore {
        CredentialStore(path: file, policy: try invocation.policy(), keepsBackup: invocation.backup)
    }

    /// The policy, warning on stderr when its rounds are below the minimum (for
    /// commands that write hashes).
    func writingPolicy() throws -> HashPolicy {
        let policy = try invocation.policy()
        if policy.isBelowMinimum && !invocation.plaintext {
            terminal.writeError("credfile: \(messages.weakIterations(policy.rounds, minimum: policy.minimumRounds))\n")
        }
        return policy
    }

    /// A password from a no-echo prompt on a terminal (asked twice when `new`), or
    /// one line of standard input.
    func readPassword(new: Bool, prompt: String? = nil) throws -> Password {
        guard terminal.inputIsTerminal else {
            guard let line = terminal.readLine() else { throw CredFileError.usage(messages.noPassword) }
            return Password(utf8: line)
        }
        let first = try terminal.readSecret(prompt ?? (new ? messages.newPasswordPrompt : messages.passwordPrompt))
        let password = Password(utf8: first)
        if new {
            let again = Password(utf8: try terminal.readSecret(messages.repeatPasswordPrompt))
            guard again.bytes == password.bytes else { throw CredFileError.usage(messages.passwordsDiffer) }
        }
        return password
    }

    func say(_ line: String) { terminal.write(line + "\n") }
}
