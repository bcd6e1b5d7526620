/// Which entry lines repeat the name of an earlier line, and which line that is
/// (SPEC §2: the first line of a name decides; later ones are shadowed). `check` reports
/// the shadowed lines; `list` and the effective entries skip them.
///
/// Built in one batch, for speed on large files and safety on hostile ones:
///
/// 1. each named line's key (``FileSyntax/nameKey(_:)``) is hashed with a key drawn for
///    this index from the system's CSPRNG (SipHash through the standard library's
///    `Hasher`), so whoever writes the file cannot make names collide;
/// 2. the lines are sorted by the top 32 bits of their hash with a stable radix sort
///    (passes over sequential memory, no probe chains);
/// 3. within each run of equal hashes, in line order, each name is compared with the
///    distinct names seen before it in that run.
///
/// A hash table probed per line was random memory access for every name (a cache miss
/// each on a million names); and with a fixed hash, 100,000 crafted names made it
/// 100–200 times slower than random ones. Here crafted names cost what random ones do:
/// ``comparisons`` counts the work of step 3 for the tests.
struct FirstLines {
    /// Where a line's name key is: in the file (an ASCII name is its own key), or a
    /// normalized copy.
    enum Key {
        case inFile(Range<Int>)
        case normalized([UInt8])

        /// The key's bytes, copied out of `file` when they are in it.
        func bytes(in file: UnsafeRawBufferPointer) -> [UInt8] {
            switch self {
            case .inFile(let range): Array(file[range])
            case .normalized(let bytes): bytes
            }
        }
    }

    /// Per line (index = number − 1): −1 for a line without a name, 0 for the first
    /// line of its name, else the number of the first line with that name.
    private var first: [Int]
    /// Names compared byte for byte in step 3.
    private(set) var comparisons = 0

    /// Indexes the names of `count` lines; `key(i)` gives line `i`'s (0-based) name key,
    /// or nil when it holds no name. `key` is asked again for lines whose hashes meet.
    /// `testHash` replaces the keyed hash (tests make every name collide with it).
    init(
        count: Int, file: UnsafeRawBufferPointer, testHash: ((UnsafeRawBufferPointer) -> UInt32)? = nil,
        key: (Int) -> Key?
    ) {
        first = Array(repeating: -1, count: count)
        var random = SystemRandomNumberGenerator()  // getrandom(2)
        let seed: (UInt64, UInt64) = (random.next(), random.next())
        func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
            if let testHash { return testHash(bytes) }
            var hasher = Hasher()
            hasher.combine(seed.0)
            hasher.combine(seed.1)
            hasher.combine(bytes: bytes)
            return UInt32(truncatingIfNeeded: UInt64(bitPattern: Int64(hasher.finalize())) >> 32)
        }
        func withKey<R>(_ key: Key, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            switch key {
            case .inFile(let range): body(UnsafeRawBufferPointer(rebasing: file[range]))
            case .normalized(let bytes): bytes.withUnsafeBytes(body)
            }
        }

        guard count <= Int(UInt32.max) else {
            // More lines than a 32-bit index (a file that would not fit in memory
            // anyway): a dictionary, whose hash the standard library seeds per process.
            var seen: [[UInt8]: Int] = [:]
            for index in 0..<count {
                guard let name = key(index) else { continue }
                let bytes = withKey(name) { Array($0) }
                first[index] = seen[bytes] ?? 0
                if seen[bytes] == nil { seen[bytes] = index + 1 }
            }
            return
        }
        // hash << 32 | index, one word per named line, sorted by hash and then index.
        // The lines are hashed in pieces at once; each piece writes its words into its
        // own part of one array and marks its own lines (the pieces' threads allocate
        // nothing), and the parts are then closed up in order.
        var named = [UInt64](unsafeUninitializedCapacity: count) { words, initialized in
            let filled = first.withUnsafeMutableBufferPointer { first in
                Parallel.map(count) { range -> (start: Int, count: Int) in
                    var slot = range.lowerBound
                    for index in range {
                        guard let name = key(index) else { continue }
                        first[index] = 0
                        words[slot] = UInt64(withKey(name, hash)) << 32 | UInt64(index)
                        slot += 1
                    }
                    return (range.lowerBound, slot - range.lowerBound)
                }
            }
            var end = 0
            for part in filled {
                // UInt64 is trivial: moving the words down is a memmove (the parts may overlap).
                if part.start != end, let base = words.baseAddress {
                    UnsafeMutableRawPointer(base + end).copyMemory(
                        from: base + part.start, byteCount: part.count * MemoryLayout<UInt64>.stride)
                }
                end += part.count
            }
            initialized = end
        }
        Self.radixSort(&named)

        // Runs of equal hashes: almost all of length 1 (a million random names share a
        // 32-bit hash ~100 times), so the comparisons below are a handful.
        var distinct: [(key: Key, line: Int)] = []
        var compared = 0
        defer { comparisons = compared }
        var start = 0
        while start < named.count {
            let hash = named[start] >> 32
            var end = start + 1
            while end < named.count, named[end] >> 32 == hash { end += 1 }
            if end - start > 1 {
                distinct.removeAll(keepingCapacity: true)
                for member in named[start..<end] {
                    let index = Int(member & 0xFFFF_FFFF)
                    // `key` gave a name for this line in the first pass.
                    guard let name = key(index) else { continue }
                    let earlier = withKey(name) { bytes in
                        distinct.first { seen in
                            compared += 1
                            return withKey(seen.key) { $0.elementsEqual(bytes) }
                        }
                    }
                    if let earlier {
                        first[index] = earlier.line
                    } else {
                        distinct.append((name, index + 1))
                    }
                }
            }
            start = end
        }
    }

    /// The number of the first line with line `number`'s name, when an earlier line has it.
    func earlierLine(of number: Int) -> Int? {
        let line = first[number - 1]
        return line > 0 ? line : nil
    }

    /// Whether line `number` holds the first entry of its name (an effective entry).
    func isFirst(_ number: Int) -> Bool { first[number - 1] == 0 }

    /// Sorts `words` by their top 32 bits (the hash) and then the low 32 (the line):
    /// an LSD radix sort of the top 33 bits in three passes of 11 (2,048 buckets fit in
    /// the L2 cache; 65,536 did not). The lines are already in order, and each pass is
    /// stable, so lines of one hash stay in file order.
    private static func radixSort(_ words: inout [UInt64]) {
        var target = words
        var counts = [Int](repeating: 0, count: 1 << 11)
        for shift in [UInt64(32), 43, 54] {
            for i in counts.indices { counts[i] = 0 }
            for word in words { counts[Int(word >> shift & 0x7FF)] += 1 }
            var total = 0
            for i in counts.indices {
                let n = counts[i]
                counts[i] = total
                total += n
            }
            for word in words {
                let digit = Int(word >> shift & 0x7FF)
                target[counts[digit]] = word
                counts[digit] += 1
            }
            swap(&words, &target)
        }
    }
}
