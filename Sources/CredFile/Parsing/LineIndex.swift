import Synchronization

/// A file's line starts, computed once, on first use, by whichever thread asks first
/// (``CredentialFile`` is a value shared across threads).
final class LineIndex: Sendable {
    private let starts = Mutex<[Int]?>(nil)

    /// The line starts of `bytes` (the file this index belongs to).
    func starts(of bytes: FileBytes) -> [Int] {
        starts.withLock { built in
            if let built { return built }
            let computed = bytes.withUnsafeBytes { Self.lineStarts(of: $0) }
            built = computed
            return computed
        }
    }

    /// Where each line's content starts: after the BOM, then after each LF. The bytes
    /// are cut into pieces searched at once, twice: each piece counts its line starts,
    /// then writes them into its part of the one array (the pieces' threads allocate
    /// nothing, so no thread's heap keeps a piece's memory).
    ///
    /// The bytes may be a mapping of a file that another program changes meanwhile (a
    /// truncation turns pages into zeros), so the second search may find other starts
    /// than the first counted: it writes at most the counted ones, and pads a piece that
    /// found fewer with its end. The starts are then always ascending (not strictly) and
    /// within the bytes, whatever the bytes did, so every range made from them is valid.
    static func lineStarts(of buffer: UnsafeRawBufferPointer) -> [Int] {
        let first = FileSyntax.firstLineStart(buffer)
        /// Calls `body` with each line start in `piece` of the bytes, in order.
        func forEachStart(in piece: Range<Int>, _ body: (Int) -> Void) {
            if piece.lowerBound == 0, first < buffer.count { body(first) }
            // An LF just before the piece starts a line at its first byte.
            var from = piece.lowerBound == 0 ? first : piece.lowerBound - 1
            while let lf = Bytes.index(of: FileSyntax.lf, in: buffer, from: from, to: buffer.count),
                lf + 1 < piece.upperBound, lf + 1 < buffer.count
            {
                body(lf + 1)
                from = lf + 1
            }
        }
        let counts = Parallel.map(buffer.count, minimum: 1 << 22) { piece -> (Range<Int>, Int) in
            var count = 0
            forEachStart(in: piece) { _ in count += 1 }
            return (piece, count)
        }
        let pieces = counts.map(\.0)
        let total = counts.reduce(0) { $0 + $1.1 }
        return [Int](unsafeUninitializedCapacity: total) { starts, initialized in
            var offsets: [Int] = []  // where each piece's starts go
            var sum = 0
            for (_, count) in counts {
                offsets.append(sum)
                sum += count
            }
            _ = Parallel.map(pieces.count, minimum: 1) { indices -> Void in
                for index in indices {
                    var slot = offsets[index]
                    let end = slot + counts[index].1
                    Syscall.prefault(UnsafeMutableBufferPointer(rebasing: starts[slot..<end]))
                    forEachStart(in: pieces[index]) {
                        guard slot < end else { return }  // more than counted: the bytes changed
                        starts[slot] = $0
                        slot += 1
                    }
                    // Fewer than counted (the bytes changed): the piece's end, which no
                    // start before it passes and none of the next piece's precedes.
                    while slot < end {
                        starts[slot] = pieces[index].upperBound
                        slot += 1
                    }
                }
            }
            initialized = total
        }
    }
}
