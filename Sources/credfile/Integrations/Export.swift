import CredFile

extension CommandContext {
    /// `credfile export FILE --to ldif [--base-dn DN] [--skip-unexportable]`: an LDIF entry
    /// per user for OpenLDAP (SPEC §5, ``LDIFExport``). When an entry cannot be exported
    /// (no directory verifies its hash, or its DN is another's to LDAP), each is reported
    /// with its line and nothing is printed (exit 4), unless `--skip-unexportable` (then
    /// each is a warning and left out). `--json` prints the same as
    /// one JSON object. Reads FILE without a lock.
    func export() throws -> ExitStatus {
        guard let format = invocation.exportFormat else { throw CredFileError.usage("export needs --to ldif") }
        guard format == "ldif" else { throw CredFileError.usage("export: --to takes ldif") }
        let exporter = try LDIFExport(baseDN: invocation.baseDN ?? LDIFExport.defaultBaseDN)
        let store = try store()
        let (records, unexportable) = exporter.export(try store.read(), policy: store.policy)
        let shownFile = Escaped.path(file)
        for entry in unexportable {
            let who = entry.username.map { "user '\(Escaped.name(Array($0.utf8)))'" } ?? "entry"
            let prefix = invocation.skipUnexportable ? "warning: skipped" : "error: cannot export"
            terminal.writeError("credfile: \(shownFile):\(entry.line): \(prefix) \(who): \(entry.reason)\n")
        }
        if !unexportable.isEmpty && !invocation.skipUnexportable {
            throw CredFileError(
                .malformedFile,
                "\(unexportable.count) entr\(unexportable.count == 1 ? "y" : "ies") cannot be exported; nothing printed (--skip-unexportable leaves them out)"
            )
        }
        if invocation.json {
            let entries = records.map {
                JSON.object([
                    ("line", "\($0.line)"), ("user", JSON.string($0.username)), ("dn", JSON.string($0.dn)),
                    ("userPassword", JSON.string($0.userPassword)),
                ])
            }
            let skipped = unexportable.map {
                JSON.object([
                    ("line", "\($0.line)"), ("user", $0.username.map(JSON.string) ?? "null"),
                    ("reason", JSON.string($0.reason)),
                ])
            }
            say(
                JSON.object([
                    ("baseDN", JSON.string(exporter.baseDN)), ("entries", "[" + entries.joined(separator: ",") + "]"),
                    ("skipped", "[" + skipped.joined(separator: ",") + "]"),
                ]))
        } else {
            terminal.write(records.map(\.ldif).joined())
        }
        return .success
    }
}
