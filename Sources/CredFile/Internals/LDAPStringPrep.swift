// RFC 4518 through ICU (Sources/CCredFile/ldapprep.c), in Internals/ with every file that
// imports a C module.
internal import CCredFile

/// LDAP's string preparation for caseIgnoreMatch (RFC 4518), the matching rule of `uid`:
/// what a directory compares when it decides that two DNs are the same entry.
enum LDAPStringPrep {
    /// The form of `value` that caseIgnoreMatch compares: RFC 4518's map (ignorable
    /// characters removed, the space separators made SPACE, case folded), NFKC and
    /// prohibit steps (ICU's usprep, RFC 4518 profile), then its insignificant space
    /// handling (§2.6.1: no leading or trailing spaces, each inner run of spaces one
    /// space, an all-space value one space). Two values are equal to the directory
    /// exactly when their forms are. Nil when RFC 4518 prohibits a character of `value`
    /// (or ICU fails): no directory compares it. ICU is opened at the first call (not
    /// linked, issue #34 item 9); a system without it stops here with its soname and
    /// Debian package named, as a program linked to it would fail to start.
    static func caseIgnoreForm(of value: String) -> [UInt8]? {
        if let reason = credfile_ldap_prepare_unavailable() {
            fatalError("LDAP's string preparation (RFC 4518) needs ICU: \(String(cString: reason))")
        }
        let input = Array(value.utf8)
        var output = [UInt8](repeating: 0, count: 12 * input.count + 16)
        var written = 0
        let status = input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                credfile_ldap_prepare(source.baseAddress, source.count, target.baseAddress, target.count, &written)
            }
        }
        guard status == 1 else { return nil }
        let prepared = output.prefix(written).split(separator: 0x20, omittingEmptySubsequences: true)
        guard !prepared.isEmpty else { return [0x20] }
        return Array(prepared.joined(separator: [0x20]))
    }
}
