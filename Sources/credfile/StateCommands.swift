import CredFile

/// The state database's command (SPEC §15): `state`.
extension CommandContext {
    /// `credfile state FILE [--init]`: where FILE's state database is; with `--init`, its
    /// tables created or brought to this credfile's schema (PostgreSQL or SQLite alike).
    /// Without `--init` nothing is created.
    func stateDatabase() throws -> ExitStatus {
        let location = try StateLocation(state: invocation.state, credentialFile: file)
        guard invocation.flag(.initialize) else {
            say(location.description)
            return .success
        }
        let (before, after) = try location.initialize()
        say("\(location.description)\tschema \(before) -> \(after)")
        return .success
    }
}
