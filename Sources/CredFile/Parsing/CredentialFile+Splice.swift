extension CredentialFile {
    /// Hands the bytes of ``render(applying:)`` to `sink` in order, without building the
    /// new file in memory: stretches of the file as read (``Splice/Piece/original(_:)``,
    /// which the writer copies from the file itself) between the changed lines, and the
    /// changed lines' new bytes. Changing one user of a 100 MB file then costs the copy
    /// and the write, not a copy in memory (and its page faults), and an upgrade batch
    /// holds the file once, not twice. Runs of small new pieces (a batch of replaced
    /// lines) are gathered in one reused 64 KiB buffer, so the sink sees few calls.
    ///
    /// The caller has checked the changes against this file (``check(_:)``); an offset
    /// that is no line start here is skipped, never spliced into the middle of a line.
    ///
    /// This is the one statement of how changes apply: every other line byte for byte;
    /// appended entries after the last line, which gains an ending if it had none; and a
    /// BOM in front when, without one, the new file would start with U+FEFF's bytes.
    func writeRendered<E: Error>(
        applying changes: Changes, to sink: (Splice.Piece) throws(E) -> Void
    ) throws(E) {
        let chunk = 1 << 16
        var buffer: [UInt8] = []
        /// How many bytes of the file and its changes were handed on (a BOM put in front
        /// aside), and the last of them.
        var emitted = 0
        var last: UInt8 = 0
        func flush() throws(E) {
            if !buffer.isEmpty { try sink(.new(buffer[...])) }
            buffer.removeAll(keepingCapacity: true)
        }
        func put(_ bytes: ArraySlice<UInt8>) throws(E) {
            guard let final = bytes.last else { return }
            (emitted, last) = (emitted + bytes.count, final)
            if buffer.count + bytes.count > chunk { try flush() }
            if bytes.count >= chunk { return try sink(.new(bytes)) }
            if buffer.capacity < chunk { buffer.reserveCapacity(chunk) }
            buffer.append(contentsOf: bytes)
        }
        func put(_ range: Range<Int>) throws(E) {
            guard !range.isEmpty else { return }
            if range.count < chunk {  // a stretch between two changed lines: gathered
                return try source.withUnsafeBytes { (file) throws(E) in
                    try put(ArraySlice(UnsafeRawBufferPointer(rebasing: file[range])))
                }
            }
            (emitted, last) = (emitted + range.count, source[range.upperBound - 1])
            try flush()
            try sink(.original(range))
        }

        let first = hasBOM ? Self.bom.count : 0
        if !hasBOM, startsWithBOM(applying: changes) {
            // U+FEFF at the start of a line that is not the file's first is part of that
            // line (a name `\u{FEFF}admin` is not `admin`). When the changes bring such a
            // line to the very start (the lines before it removed, or an append to an
            // empty file), a BOM goes in front, so the parser skips that one and the line
            // keeps its meaning.
            try put(Self.bom[...])
            emitted = 0
        }
        var cursor = 0  // bytes before it are handed on
        for start in changes.edited.keys.sorted() where isLineStart(start) {
            let (content, ending) = source.withUnsafeBytes { FileSyntax.line(at: start, in: $0) }
            try put(cursor..<content.lowerBound)
            if case .replace(let newContent)? = changes.edited[start]?.action {
                try put(newContent[...])
                try put(ending.bytes[...])
            }
            cursor = content.upperBound + ending.bytes.count
        }
        try put(cursor..<source.count)
        if !changes.appended.isEmpty, emitted > first, last != FileSyntax.lf {
            // The one change made to an existing line: it gains an ending. A CR at its
            // end is content (a control byte: the line is malformed); an LF alone would
            // turn that CR into a CRLF ending and the malformed line into a valid one.
            try put(last == 0x0D ? [0x0D, 0x0A] : [0x0A])
        }
        for line in changes.appended {
            try put(line[...])
            try put([FileSyntax.lf])
        }
        try flush()
    }

    /// Whether the new file would start with U+FEFF's bytes, for a file without a BOM:
    /// its first kept line does (only removals at the top can bring such a line there),
    /// or no line is kept and the first appended one does.
    private func startsWithBOM(applying changes: Changes) -> Bool {
        var start = 0
        while start < source.count, case .remove? = changes.edited[start]?.action {
            let (content, ending) = source.withUnsafeBytes { FileSyntax.line(at: start, in: $0) }
            start = content.upperBound + ending.bytes.count  // the next line's start
        }
        guard start < source.count else { return changes.appended.first?.starts(with: Self.bom) ?? false }
        if case .replace(let newContent)? = changes.edited[start]?.action { return newContent.starts(with: Self.bom) }
        return source.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[start...]).starts(with: Self.bom) }
    }
}
