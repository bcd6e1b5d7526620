#if canImport(Glibc)
import Glibc
#endif

extension LineScanner {
    /// The content of the first entry line of `key` (NFC bytes) in the file at `path`,
    /// from a scan that stops at it (``scanWholeLines(inFileAt:pieceSize:_:)``). Nil when
    /// the name has no entry.
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or unreadable.
    static func firstEntryContent(named key: [UInt8], inFileAt path: String, pieceSize: Int) throws -> [UInt8]? {
        var found: [UInt8]?
        try scanWholeLines(inFileAt: path, pieceSize: pieceSize) { lines in
            found = firstEntry(named: key, in: lines, from: 0, number: 1).map { Array(lines[$0.content]) }
            return found == nil
        }
        return found
    }

    /// What a login needs of the file at `path`, from one pass over all of it: the content
    /// of the first entry line of `key` (NFC bytes), and the census of every entry within
    /// `policy`'s cost limits (``LoginPlan``). The pass never stops early, and every line's name is compared with
    /// the key, found or not, so finding a name on the first line takes as long as
    /// finding none. (Not `memmem` for the key, as ``firstEntry(named:in:)`` does: its
    /// cost follows how much of `LF name ,` the file's lines share, ±7 % of a login on a
    /// 100 MB file between names of one shape; a comparison per line costs about the same
    /// for every name.)
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or unreadable.
    static func loginLookUp(named key: [UInt8], inFileAt path: String, within policy: HashPolicy, pieceSize: Int)
        throws -> (content: [UInt8]?, census: CostCensus)
    {
        var found: [UInt8]?
        var census = CostCensus(within: policy)
        try scanWholeLines(inFileAt: path, pieceSize: pieceSize) { lines in
            census.addEntries(inLines: lines) { name, content in
                // Compared on every line, found or not: a name found early must not finish sooner.
                if FileSyntax.field(name, names: key), found == nil { found = Array(lines[content]) }
            }
            return true
        }
        return (found, census)
    }

    /// Calls `body` with runs of whole lines of the file at `path` (the first run starts
    /// after a BOM), in order, until it returns false: a scan of the file in pieces of
    /// `pieceSize` bytes through one buffer (tests use tiny ones). A 100 MB file read
    /// whole costs its size in fresh pages, which a VM fills at ~1 GB/s; the scan reuses
    /// 128 KiB, which stays in the L2 cache (measured here: 100 MB through 128 KiB in
    /// 16 ms, through 1 MiB in 63). A line cut by a piece's end is carried into the next
    /// run; only the file's first line may start with a BOM.
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or unreadable.
    private static func scanWholeLines(
        inFileAt path: String, pieceSize: Int, _ body: (UnsafeRawBufferPointer) -> Bool
    ) throws {
        var partial: [UInt8] = []  // the start of a line that continues in the next piece
        var atFileStart = true  // only the file's first line may start with a BOM
        var going = true
        /// Hands whole lines to `body`; the first one starts the buffer.
        func hand(_ lines: UnsafeRawBufferPointer) {
            defer { atFileStart = false }
            let first = atFileStart ? FileSyntax.firstLineStart(lines) : 0
            going = body(UnsafeRawBufferPointer(rebasing: lines[first...]))
        }
        let scanned: Void? = try FileReader.scan(path, chunkSize: pieceSize) { piece in
            var start = 0
            if !partial.isEmpty || atFileStart {
                guard let lf = Bytes.index(of: FileSyntax.lf, in: piece, from: 0, to: piece.count) else {
                    partial.append(contentsOf: piece)
                    return true
                }
                partial.append(contentsOf: piece[...lf])
                partial.withUnsafeBytes { hand($0) }
                partial.removeAll(keepingCapacity: true)
                start = lf + 1
            }
            // The whole lines of the piece, in place; the unfinished last one is kept.
            if going, let lastLF = piece[start...].lastIndex(of: FileSyntax.lf) {
                hand(UnsafeRawBufferPointer(rebasing: piece[start...lastLF]))
                start = lastLF + 1
            }
            partial.append(contentsOf: piece[start...])
            return going
        }
        guard scanned != nil else {
            throw CredFileError.missingFile(path)
        }
        if going, !partial.isEmpty { partial.withUnsafeBytes { hand($0) } }
    }
}
