import CredFile

extension CommandContext {
    /// The passkeys of FILE's users (SPEC §14), from the options and the configuration
    /// file; with `webauthn-origin`, ready for the portal's ceremonies.
    func passkeys() throws -> Passkeys {
        guard let origin = invocation.webauthnOrigin else {
            return Passkeys(credentialFile: file, passkeyFile: invocation.passkeyFile, state: invocation.state)
        }
        return try Passkeys(
            credentialFile: file, passkeyFile: invocation.passkeyFile, state: invocation.state, origin: origin,
            rpID: invocation.webauthnRPID)
    }

    /// `credfile passkeys FILE [USER] [--remove ID] [--json]` (SPEC §14): lists the passkeys,
    /// or removes one. With `--remove` the last argument is the ID.
    func passkeysCommand() throws -> ExitStatus {
        let passkeys = try passkeys()
        let positionals = invocation.positionals
        if invocation.remove {
            guard positionals.count >= 2, let id = positionals.last else {
                throw CredFileError.usage("passkeys --remove needs the passkey's ID")
            }
            let user = positionals.count == 3 ? Array(positionals[1].utf8) : nil
            guard try passkeys.remove(id: id, usernameBytes: user) else {
                throw CredFileError(.userNotFound, "no passkey has the id \(Escaped.name(id))")
            }
            say("passkey removed")
            return .success
        }
        guard positionals.count <= 2 else { throw CredFileError.usage("passkeys takes FILE [USER], or --remove ID") }
        let user = positionals.count == 2 ? Array(positionals[1].utf8) : nil
        let credentials = try passkeys.credentials(usernameBytes: user)
        if invocation.json {
            let items = credentials.map { credential in
                JSON.object([
                    ("user", JSON.string(String(decoding: credential.user, as: UTF8.self))),
                    ("id", JSON.string(credential.id)), ("name", JSON.string(credential.name)),
                    ("counter", String(credential.counter)),
                    ("created", JSON.string(Self.rfc3339(Double(credential.created)))),
                    (
                        "last_used",
                        credential.lastUsed == 0 ? "null" : JSON.string(Self.rfc3339(Double(credential.lastUsed)))
                    ),
                ])
            }
            say("[" + items.joined(separator: ",") + "]")
            return .success
        }
        for credential in credentials {
            say(
                [
                    Escaped.name(credential.user), credential.id, Escaped.name(credential.name),
                    Self.rfc3339(Double(credential.created)),
                    credential.lastUsed == 0 ? "-" : Self.rfc3339(Double(credential.lastUsed)),
                ].joined(separator: "\t"))
        }
        return .success
    }
}
