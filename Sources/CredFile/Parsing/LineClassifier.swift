/// Classifies the bytes of one line (without its ending) by the rules of
/// ``FileSyntax`` (the line) and ``SecretSyntax`` (the secret), SPEC §2.
enum LineClassifier {
    static func classify(_ line: ArraySlice<UInt8>) -> LineKind {
        if FileSyntax.isBlank(line) { return .blank }
        if FileSyntax.isComment(line) { return .comment }
        let username = FileSyntax.nameField(of: line)
        let secretBytes = username.map { line[($0.endIndex + 1)...] } ?? line[line.endIndex...]
        func entry(_ secret: StoredSecret, _ malformation: MalformedReason?) -> LineKind {
            .entry(
                Entry(
                    username: username ?? line[line.startIndex..<line.startIndex], secretBytes: secretBytes,
                    secret: secret, malformation: malformation))
        }
        func malformed(_ reason: MalformedReason) -> LineKind { entry(.malformed(reason: reason.description), reason) }
        if let reason = FileSyntax.lineProblem(line) { return malformed(reason) }
        guard let username else { return malformed(.noComma) }
        if username.isEmpty { return malformed(.emptyUsername) }
        if secretBytes.isEmpty { return malformed(.emptySecret) }
        let secret = SecretSyntax.classify(secretBytes)
        if case .malformed(let reason) = secret { return entry(secret, .malformedHash(reason)) }
        return entry(secret, nil)
    }
}

extension Entry {
    /// The bytes the name is compared by (NFC; see ``FileSyntax/nameKey(_:)``).
    var usernameKey: [UInt8] { FileSyntax.nameKey(username) }
}
