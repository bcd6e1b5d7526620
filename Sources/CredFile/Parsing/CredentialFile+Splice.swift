extension CredentialFile {
    /// Hands the bytes of ``render(applying:)`` to `sink` in order, as slices of
    /// ``bytes`` between the changed lines and the changed lines' new bytes, without
    /// building the new file in memory: changing one user of a 100 MB file then costs
    /// the read and the write, not a third copy (and its page faults), and an upgrade
    /// batch holds the file once, not twice. Runs of small pieces (a batch of replaced
    /// lines) are gathered in one reused 64 KiB buffer, so the sink sees few calls.
    ///
    /// The pieces always join to exactly `render(applying: changes)`: where that changes
    /// the very start of the file (appends after a missing final newline, a BOM put
    /// back in front), the one piece is that rendering.
    func writeRendered<E: Error>(
        applying changes: Changes, to sink: (ArraySlice<UInt8>) throws(E) -> Void
    ) throws(E) {
        let spliceable =
            changes.appended.isEmpty
            && (hasBOM || !startsWithBOM(afterRemoving: changes))
        guard spliceable else {
            try sink(render(applying: changes)[...])
            return
        }
        let chunk = 1 << 16
        var buffer: [UInt8] = []
        buffer.reserveCapacity(chunk)
        func put(_ piece: ArraySlice<UInt8>) throws(E) {
            if piece.count >= chunk {
                if !buffer.isEmpty { try sink(buffer[...]) }
                buffer.removeAll(keepingCapacity: true)
                try sink(piece)
                return
            }
            if buffer.count + piece.count > chunk {
                try sink(buffer[...])
                buffer.removeAll(keepingCapacity: true)
            }
            buffer.append(contentsOf: piece)
        }
        var cursor = 0  // bytes before it are handed on
        for start in changes.edited.keys.sorted() where isLineStart(start) {
            let (content, ending) = bytes.withUnsafeBytes { FileSyntax.line(at: start, in: $0) }
            try put(bytes[cursor..<content.lowerBound])
            if case .replace(let newContent) = changes.edited[start] {
                try put(newContent[...])
                try put(ending.bytes[...])
            }
            cursor = content.upperBound + ending.bytes.count
        }
        try put(bytes[cursor...])
        if !buffer.isEmpty { try sink(buffer[...]) }
    }

    /// Whether the lines the changes keep start with U+FEFF's bytes: then render() puts
    /// a BOM in front (the first kept line was not the first line). Only removals at the
    /// top can bring such a line there.
    private func startsWithBOM(afterRemoving changes: Changes) -> Bool {
        let first = hasBOM ? Self.bom.count : 0
        var start = first
        while start < bytes.count, case .remove? = changes.edited[start] {
            let (content, ending) = bytes.withUnsafeBytes { FileSyntax.line(at: start, in: $0) }
            start = content.upperBound + ending.bytes.count  // the next line's start
        }
        guard start > first else { return bytes.starts(with: Self.bom) }
        guard start < bytes.count else { return false }
        if case .replace(let newContent)? = changes.edited[start] { return newContent.starts(with: Self.bom) }
        return bytes[start...].starts(with: Self.bom)
    }
}
