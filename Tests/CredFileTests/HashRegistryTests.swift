import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import _CredFileFuzzChecks

/// The registry of hash families (``SecretSyntax/families``, issue #27): its order keeps
/// SPEC §3.2's "the syntax decides" where prefixes are shared, and every prefix a family
/// owns is known to the fuzz oracle, the fuzz dictionary and the lists that name hashes,
/// so that adding a family is one file and one line, and forgetting the rest fails here.
@Suite("Hash family registry")
struct HashRegistryTests {
    static let families = SecretSyntax.families

    /// Each pair of registered families whose prefixes overlap, in registry order.
    static func overlappingPairs() -> [(earlier: any HashFamily.Type, later: any HashFamily.Type, prefix: String)] {
        var pairs: [(any HashFamily.Type, any HashFamily.Type, String)] = []
        for (i, a) in families.enumerated() {
            for b in families[(i + 1)...] {
                for p in a.prefixes {
                    if let q = b.prefixes.first(where: { p.overlaps($0) }) { pairs.append((a, b, "\(p) / \(q)")) }
                }
            }
        }
        return pairs
    }

    @Test func familiesHaveNamesAndPrefixes() {
        #expect(Set(Self.families.map { $0.name }).count == Self.families.count, "two families of one name")
        for family in Self.families {
            #expect(!family.prefixes.isEmpty, "\(family.name) owns no prefix")
        }
    }

    /// The ordering rule: of two families whose prefixes overlap, the one that claims only
    /// its exact syntax (and yields the rest) comes first; the later one calls malformed
    /// what it does not parse. Two that both yield, or a yielding one second, would let a
    /// secret fall through unjudged or be judged by the wrong family.
    @Test func overlappingFamiliesPutTheExactSyntaxFirst() {
        let pairs = Self.overlappingPairs()
        // mosquitto's $7$ and $6$ before crypt(3)'s, LDAP's {PBKDF2} before Dovecot's {PBKDF2}$.
        #expect(pairs.count >= 3, "\(pairs.map(\.prefix))")
        for (earlier, later, prefix) in pairs {
            let (earlierYields, laterYields) = (earlier.yieldsSharedPrefix, later.yieldsSharedPrefix)
            #expect(earlierYields, "\(earlier.name) shares \(prefix) with \(later.name) but does not yield")
            #expect(!laterYields, "\(later.name) shares \(prefix) and yields too: who decides?")
        }
        // A family that yields must have someone after it to yield to.
        for (i, family) in Self.families.enumerated() where family.yieldsSharedPrefix {
            let prefixes = family.prefixes
            let heir = Self.families[(i + 1)...].contains { later in
                prefixes.contains { p in later.prefixes.contains(where: p.overlaps) }
            }
            #expect(heir, "\(family.name) yields to no later family")
        }
    }

    /// The rule in action on real hashes: for every vector, each family before the one
    /// that decides and owning a prefix of it answered `.notThisFamily` and is a yielding one.
    @Test func everyEarlierOwnerOfAVectorYielded() throws {
        let texts = PeerVector.all.map(\.hash) + PBKDF2PeerVector.all.map(\.hash)
        try #require(texts.count > 100)
        for text in texts {
            let secret = ArraySlice(Array(text.utf8))
            let decider = try #require(SecretSyntax.familyAnswer(secret), "\(text.prefix(12))… has no family")
            guard case .hash = decider.answer else {
                Issue.record("\(text.prefix(12))… is not a hash of \(decider.family.name)")
                continue
            }
            for family in Self.families {
                if ObjectIdentifier(family) == ObjectIdentifier(decider.family) { break }
                guard family.owns(secret) else { continue }
                let (yields, answer) = (family.yieldsSharedPrefix, kind(family.parse(secret)))
                #expect(yields, "\(family.name) owns \(text.prefix(12))… before \(decider.family.name)")
                #expect(answer == "not ours", "\(family.name) on \(text.prefix(12))…")
            }
        }
    }

    /// A family answers only about secrets with its prefixes (the registry asks it about
    /// no others); the hashes it accepts start with one, whatever the case of a scheme.
    @Test func aFamilyIsAskedOnlyAboutItsPrefixes() {
        let crypt = SecretSyntax.familyAnswer(ArraySlice("{crypt}$1$salt$".utf8))?.family.name
        #expect(crypt == LDAPCryptFamily.name)
        let none = SecretSyntax.familyAnswer(ArraySlice("x$2b$10$".utf8)).map { $0.family.name }
        #expect(none == nil)
        let werkzeug = SecretSyntax.familyAnswer(ArraySlice("pbkdf2:sha256".utf8)).map { $0.family.name }
        #expect(werkzeug == nil, "no $: a legacy password")
    }

    // MARK: Every prefix known where it must be

    /// Every prefix a family owns is one the fuzz oracle treats as SPEC §3.2's (a
    /// secret with it is the family's hash or malformed), and every prefix the oracle
    /// lists is owned by a family: the oracle stays a second, independent reading, but
    /// the two cannot drift apart unnoticed.
    @Test func theFuzzOracleKnowsEveryPrefix() {
        func oracleCovers(_ prefix: HashPrefix) -> Bool {
            if prefix.ignoresCase {
                return Reference.peerSchemes.contains {
                    PeerText.hasPrefixIgnoringCase(ArraySlice(prefix.text.utf8), $0)
                }
            }
            return (Reference.ownPrefixes + Reference.peerPrefixes + Reference.werkzeugPrefixes).contains {
                prefix.text.utf8.starts(with: $0.utf8)
            }
        }
        for family in Self.families {
            for prefix in family.prefixes {
                #expect(oracleCovers(prefix), "the fuzz oracle does not know \(prefix) (\(family.name))")
            }
        }
        let registered = Self.families.flatMap { $0.prefixes }
        for text in Reference.ownPrefixes + Reference.peerPrefixes + Reference.werkzeugPrefixes {
            #expect(
                registered.contains { !$0.ignoresCase && $0.text.utf8.starts(with: text.utf8) },
                "no family owns \(text)")
        }
        for text in Reference.peerSchemes {
            #expect(
                registered.contains {
                    $0.ignoresCase && PeerText.hasPrefixIgnoringCase(ArraySlice($0.text.utf8), text)
                }, "no family owns \(text)")
        }
    }

    /// The fuzz dictionary's entries, unquoted (`name="value"` or `"value"` lines, with
    /// `\xHH` escapes).
    static func dictionaryEntries() throws -> [String] {
        let url = FuzzRegressionTests.fuzzDirectory.appendingPathComponent("credfile.dict")
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> String? in
            guard !line.hasPrefix("#"), let open = line.firstIndex(of: "\""), line.last == "\"" else { return nil }
            return String(line[line.index(after: open)..<line.index(before: line.endIndex)])
        }
    }

    /// Every prefix is a word of the fuzz dictionary (an entry starting with it), so the
    /// fuzzers reach each family's parser without guessing its prefix byte by byte.
    @Test func theFuzzDictionaryHoldsEveryPrefix() throws {
        let entries = try Self.dictionaryEntries()
        #expect(entries.count > 40)
        for family in Self.families {
            for prefix in family.prefixes {
                let found = entries.contains {
                    prefix.ignoresCase
                        ? PeerText.hasPrefixIgnoringCase(ArraySlice($0.utf8), prefix.text)
                        : $0.utf8.starts(with: prefix.text.utf8)
                }
                #expect(found, "Fuzz/credfile.dict has no \(prefix) (\(family.name))")
            }
        }
    }

    /// Every prefix is named by the lists that name hashes in findings and listings
    /// (``SecretSyntax/knownCryptIDs``, ``SecretSyntax/knownLDAPSchemes``,
    /// ``SecretSyntax/djangoHashers``, and Werkzeug's methods), so a secret of the family's
    /// syntax that another rule turns away is still named, not shown as `$?$`.
    @Test func theKnownIDListsNameEveryPrefix() {
        for family in Self.families {
            for prefix in family.prefixes {
                let text = prefix.text
                if prefix.ignoresCase {
                    let name = String(text.dropFirst().prefix { $0 != "}" }).uppercased()
                    #expect(SecretSyntax.knownLDAPSchemes.contains(name), "knownLDAPSchemes lacks \(name)")
                } else if text.hasPrefix("$") {
                    let id = String(text.dropFirst().prefix { $0 != "$" })
                    let ids = SecretSyntax.knownCryptIDs.filter { $0.hasPrefix(id) }
                    #expect(
                        text.hasSuffix("$") ? SecretSyntax.knownCryptIDs.contains(id) : !ids.isEmpty,
                        "knownCryptIDs lacks \(id)")
                } else if text.hasSuffix("$") {
                    #expect(SecretSyntax.djangoHashers.contains(String(text.dropLast())), "djangoHashers lacks \(text)")
                } else {
                    #expect(SecretSyntax.peerIdentifier(ArraySlice((text + "x$").utf8)) != nil, "\(text) is not named")
                }
            }
        }
    }
}
