/// An effective entry as `list` shows it: its name and how its secret is stored.
public struct ListedEntry: Sendable {
    /// The 1-based line number.
    public let line: Int
    /// The raw bytes of the name field (escape them with ``Escaped/name(_:)-(Collection<UInt8>)`` to print).
    public let username: ArraySlice<UInt8>
    /// How the secret is stored, without the secret.
    public let storage: StorageSummary
    /// The username as text when it is valid UTF-8.
    public var usernameText: String? { String(validating: username, as: UTF8.self) }
}

extension CredentialFile {
    /// Each effective entry with how its secret is stored under `policy`, in file order:
    /// what `list` shows. A hash in credfile's own format is validated, never decoded.
    public func listing(policy: HashPolicy) -> [ListedEntry] {
        var listed: [ListedEntry] = []
        forEachListedEntry(policy: policy) { listed.append($0) }
        return listed
    }

    /// Calls `body` with each entry of ``listing(policy:)`` in turn, without holding
    /// them all (a million-user file is listed in the memory of the file plus a block).
    public func forEachListedEntry(policy: HashPolicy, _ body: (ListedEntry) -> Void) {
        forEachListedBlock(policy: policy, empty: [(line: Int, name: Range<Int>, storage: StorageSummary)]()) {
            $0.append($1)
        } _: { block in
            for (line, name, storage) in block {
                body(ListedEntry(line: line, username: self.source.slice(name), storage: storage))
            }
        }
    }

    /// The listing as `list` prints it, `name<TAB>storage<LF>` per entry (the name as
    /// ``Escaped/appendName(_:to:)`` shows it, the storage as ``StorageSummary/description``),
    /// handed to `body` in blocks of bytes, in file order.
    public func forEachListingBlock(policy: HashPolicy, _ body: ([UInt8]) -> Void) {
        source.withUnsafeBytes { file in
            forEachListedBlock(policy: policy, empty: [UInt8]()) { out, entry in
                Escaped.appendName(UnsafeRawBufferPointer(rebasing: file[entry.name]), to: &out)
                out.append(UInt8(ascii: "\t"))
                entry.storage.append(to: &out)
                out.append(FileSyntax.lf)
            } _: {
                body($0)
            }
        }
    }

    /// The effective entries, in blocks of lines judged in pieces at once: each piece's
    /// entries (line number, name range, storage) are gathered by `gather` into a value
    /// that starts as `empty`, and `body` gets the values in file order.
    private func forEachListedBlock<Gathered>(
        policy: HashPolicy, empty: Gathered,
        _ gather: (inout Gathered, (line: Int, name: Range<Int>, storage: StorageSummary)) -> Void,
        _ body: (Gathered) -> Void
    ) {
        let firstLines = firstLines()
        withRawLines { file, starts in
            let blockSize = 1 << 16
            for blockStart in stride(from: 0, to: starts.count, by: blockSize) {
                let count = min(blockSize, starts.count - blockStart)
                let pieces = Parallel.map(count, minimum: 1 << 13) { piece -> Gathered in
                    var gathered = empty
                    for index in (blockStart + piece.lowerBound)..<(blockStart + piece.upperBound)
                    where firstLines.isFirst(index + 1) {
                        let content = Self.span(of: index, starts: starts, in: file).0
                        if let storage = storage(ofEntryAt: content, in: file, policy: policy) {
                            let comma = Bytes.index(
                                of: FileSyntax.comma, in: file, from: content.lowerBound, to: content.upperBound)
                            let name = content.lowerBound..<(comma ?? content.lowerBound)
                            gather(&gathered, (index + 1, name, storage))
                        }
                    }
                    return gathered
                }
                pieces.forEach(body)
            }
        }
    }

    /// How the secret of the entry line with content `range` is stored (nil: no entry).
    private func storage(ofEntryAt range: Range<Int>, in file: UnsafeRawBufferPointer, policy: HashPolicy)
        -> StorageSummary?
    {
        if let comma = Self.cleanEntryComma(UnsafeRawBufferPointer(rebasing: file[range])) {
            let secret = (range.lowerBound + comma + 1)..<range.upperBound
            if let quick = SecretSyntax.quickSummary(UnsafeRawBufferPointer(rebasing: file[secret])) {
                return quick.storage(under: policy)
            }
            return SecretSyntax.classify(self.source.slice(secret)).storage(under: policy)
        }
        if case .entry(let entry) = LineClassifier.classify(self.source.slice(range)) {
            return entry.secret.storage(under: policy)
        }
        return nil
    }
}
