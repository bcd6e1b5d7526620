import Synchronization
internal import CredFileBlocklist  // builtInBlocklistText, the generated data

/// The built-in list: one string literal, searched as it is for the first lookups of a
/// process and split into a set after that.
enum BuiltInList {
    /// Every entry (lowercase already), split from the literal (~12 ms) when first read:
    /// by the lookup after the first ``searchesBeforeSet``.
    static let words: Set<Substring> = Set(builtInBlocklistText.split(separator: "\n", omittingEmptySubsequences: true))

    /// Lookups made so far in this process.
    private static let lookups = Atomic<Int>(0)

    /// How many lookups search the literal (160 KB, ~20 µs each) before the set is built:
    /// `add` and `passwd` ask once or twice and never pay for the set; `import` and
    /// `check --passwords` ask thousands of times and do.
    static let searchesBeforeSet = 32

    /// Whether `word` (folded) is an entry.
    static func contains(_ word: String) -> Bool {
        guard lookups.add(1, ordering: .relaxed).oldValue < searchesBeforeSet else {
            return words.contains(Substring(word))
        }
        return searchLiteral(word)
    }

    /// Whether `word` is a line of the literal, by one `memmem` (no set built).
    static func searchLiteral(_ word: String) -> Bool {
        guard !word.isEmpty, !word.utf8.contains(FileSyntax.lf) else { return false }
        // The entry with its line ends, in the text with one LF added at each end.
        let needle = Array(("\n" + word + "\n").utf8)
        var text = "\n" + builtInBlocklistText + "\n"
        return text.withUTF8 { haystack in
            needle.withUnsafeBytes { Bytes.offset(of: $0, in: UnsafeRawBufferPointer(haystack)) != nil }
        }
    }
}
