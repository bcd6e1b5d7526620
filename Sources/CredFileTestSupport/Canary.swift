import Testing

/// The tests' password canaries: every password a test types contains ``marker``, and
/// ``option`` and ``word`` are typed where a password might be given by mistake, so "no
/// password ever appears in any output" is a substring search for each of ``all``.
public enum Canary {
    /// Part of every password the file-level tests use (16 characters: every password
    /// made of it is long enough for SPEC §8).
    public static let marker = "Sekr3t-Qv8x-Wm2k"
    /// An unknown option shaped like a password, typed where a usage error must not echo it.
    public static let option = "--p4ssw0rd-XYZ"
    /// A word shaped like a password, typed as an argument where none is expected.
    public static let word = "hunter2-XYZ"
    /// What no output may ever contain.
    public static let all = [marker, "p4ssw0rd-XYZ", word]

    /// A password that is easy to find if it ever leaks. The tag's characters are split by
    /// dots, so a tag that is also the username (`nuevo`) is not contained in the password
    /// (SPEC §8 refuses a new password holding the username).
    public static func password(_ tag: some CustomStringConvertible) -> String {
        "\(marker)-" + tag.description.map(String.init).joined(separator: ".")
    }

    /// What in `output` is a canary, or a hash string (`$pbkdf2`) of one; nil when nothing.
    public static func leak(in output: String) -> String? {
        (all + ["$pbkdf2"]).first { output.contains($0) }
    }

    /// Records an issue when `output` holds a canary or a PBKDF2 hash string.
    public static func expectNoLeak(
        _ output: String, of what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let leaked = leak(in: output)
        #expect(leaked == nil, "\(leaked ?? "") leaked in the output of \(what)", sourceLocation: sourceLocation)
    }
}
