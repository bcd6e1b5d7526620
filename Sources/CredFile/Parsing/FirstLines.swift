/// Which entry lines repeat the name of an earlier line, and which line that is
/// (SPEC §2: the first line of a name decides; later ones are shadowed). `check` reports
/// the shadowed lines; `list` and the effective entries skip them.
///
/// Built in one batch, for speed on large files and safety on hostile ones:
///
/// 1. each named line's key (``FileSyntax/nameKey(_:)``) is hashed with a key drawn for
///    this index from the system's CSPRNG (SipHash through the standard library's
///    `Hasher`), so whoever writes the file cannot make names collide (``Tagger``; a
///    pass over the lines with other work, like `check`'s, makes these words itself);
/// 2. the lines are sorted by the top 32 bits of their hash, stably: scattered by the
///    top byte into 256 buckets, each bucket then radix-sorted in the cache (passes over
///    sequential memory, no probe chains; ``sortByHash(_:scratch:marking:resolve:)``);
/// 3. within each run of equal hashes, in line order, each name is compared with the
///    distinct names seen before it in that run. Steps 2 and 3 run on several buckets
///    at once (equal hashes share a bucket).
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
    /// The lines (0-based) whose name an earlier line has, in line order.
    private(set) var repeated: [Int] = []
    /// Names compared byte for byte in step 3.
    private(set) var comparisons = 0

    /// The keyed hash of one index: each line's name becomes a word `hash << 32 | line`.
    struct Tagger: Sendable {
        /// The key goes in once; each name's hasher starts as a copy of this one.
        private let seeded: Hasher
        private let testHash: (@Sendable (UnsafeRawBufferPointer) -> UInt32)?

        /// A key drawn from the system's CSPRNG (getrandom(2)); `testHash` replaces
        /// the keyed hash (tests make every name collide with it).
        init(testHash: (@Sendable (UnsafeRawBufferPointer) -> UInt32)? = nil) {
            var random = SystemRandomNumberGenerator()
            var seeded = Hasher()
            seeded.combine(random.next() as UInt64)
            seeded.combine(random.next() as UInt64)
            self.seeded = seeded
            self.testHash = testHash
        }

        /// The word of line `index`, whose name key is `key` (its bytes in `file`, or
        /// normalized).
        func word(_ key: Key, line index: Int, in file: UnsafeRawBufferPointer) -> UInt64 {
            switch key {
            case .inFile(let range): word(UnsafeRawBufferPointer(rebasing: file[range]), line: index)
            case .normalized(let bytes): bytes.withUnsafeBytes { word($0, line: index) }
            }
        }

        private func word(_ name: UnsafeRawBufferPointer, line index: Int) -> UInt64 {
            let hash: UInt32
            if let testHash {
                hash = testHash(name)
            } else {
                var hasher = seeded
                if name.count <= 16 {
                    // A short name (most are) as its length and two words, zero-padded:
                    // the same input for the same name, different for different ones, and
                    // `combine(_: UInt64)` is inlined where `combine(bytes:)` is a call.
                    var words: (UInt64, UInt64) = (0, 0)
                    withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: name) }
                    hasher.combine(UInt64(name.count))
                    hasher.combine(words.0)
                    hasher.combine(words.1)
                } else {
                    hasher.combine(bytes: name)
                }
                hash = UInt32(truncatingIfNeeded: UInt64(bitPattern: Int64(hasher.finalize())) >> 32)
            }
            return UInt64(hash) << 32 | UInt64(index)
        }
    }

    /// Where a pass over the lines puts the words of its piece: its own part of one array
    /// (the pieces' threads allocate nothing).
    struct WordSink {
        fileprivate let base: UnsafeMutablePointer<UInt64>
        fileprivate let start: Int
        fileprivate var end: Int

        /// Adds the next word of the piece (at most one per line of the piece).
        mutating func add(_ word: UInt64) {
            base[end] = word
            end += 1
        }
    }

    /// Runs `body` on pieces of the lines `0..<count` at once; each adds the words of
    /// its named lines, in line order, to its sink. Gives every word in line order, and
    /// the pieces' results in order.
    static func gatherWords<T>(count: Int, _ body: (Range<Int>, inout WordSink) -> T) -> (words: [UInt64], results: [T])
    {
        var results: [T] = []
        // Room for one word at least, so the buffer has an address even for no lines.
        let words = [UInt64](unsafeUninitializedCapacity: max(count, 1)) { words, initialized in
            initialized = 0
            guard let base = words.baseAddress else { return }
            let pieces = Parallel.map(count) { range -> (sink: WordSink, result: T) in
                Syscall.prefault(UnsafeMutableBufferPointer(rebasing: words[range]))
                var sink = WordSink(base: base, start: range.lowerBound, end: range.lowerBound)
                let result = body(range, &sink)
                return (sink, result)
            }
            var end = 0
            for (sink, _) in pieces {
                // UInt64 is trivial: moving the words down is a memmove (the parts may overlap).
                if sink.start != end {
                    UnsafeMutableRawPointer(base + end).copyMemory(
                        from: base + sink.start, byteCount: (sink.end - sink.start) * MemoryLayout<UInt64>.stride)
                }
                end += sink.end - sink.start
            }
            initialized = end
            results = pieces.map(\.result)
        }
        return (words, results)
    }

    /// Indexes the names of `count` lines; `key(i)` gives line `i`'s (0-based) name key,
    /// or nil when it holds no name. `key` is asked again for lines whose hashes meet.
    /// `testHash` replaces the keyed hash (tests make every name collide with it).
    init(
        count: Int, file: UnsafeRawBufferPointer, testHash: (@Sendable (UnsafeRawBufferPointer) -> UInt32)? = nil,
        key: (Int) -> Key?
    ) {
        let tagger = Tagger(testHash: testHash)
        let words = Self.gatherWords(count: count) { range, sink in
            for index in range {
                if let name = key(index) { sink.add(tagger.word(name, line: index, in: file)) }
            }
        }.words
        self.init(count: count, words: words, file: file, key: key)
    }

    /// Indexes `count` lines from `words`: one `Tagger` word per named line, in line
    /// order (a pass over the lines that has other work to do makes them itself).
    /// `key(i)` gives line `i`'s name key; it is asked only for lines whose hashes meet.
    init(count: Int, words: consuming [UInt64], file: UnsafeRawBufferPointer, key: (Int) -> Key?) {
        // Filled in pieces at once: the fresh pages' faults cost more than the writes.
        first = [Int](unsafeUninitializedCapacity: count) { first, initialized in
            _ = Parallel.map(count, minimum: 1 << 18) { range in
                let piece = UnsafeMutableBufferPointer(rebasing: first[range])
                Syscall.prefault(piece)
                piece.initialize(repeating: -1)
            }
            initialized = count
        }
        guard count <= Int(UInt32.max) else {
            // More lines than a 32-bit index (a file that would not fit in memory
            // anyway): a dictionary, whose hash the standard library seeds per process.
            var seen: [[UInt8]: Int] = [:]
            for index in 0..<count {
                guard let name = key(index) else { continue }
                let bytes = name.bytes(in: file)
                if let earlier = seen[bytes] {
                    first[index] = earlier
                    repeated.append(index)
                } else {
                    first[index] = 0
                    seen[bytes] = index + 1
                }
            }
            return
        }
        func withKey<R>(_ key: Key, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            switch key {
            case .inFile(let range): body(UnsafeRawBufferPointer(rebasing: file[range]))
            case .normalized(let bytes): bytes.withUnsafeBytes(body)
            }
        }
        var named = words
        var scratch = [UInt64](unsafeUninitializedCapacity: named.count) { _, initialized in
            initialized = named.count
        }
        // Steps 2 and 3 in pieces at once, each on its own buckets and its own lines.
        let found = first.withUnsafeMutableBufferPointer { first in
            named.withUnsafeMutableBufferPointer { named in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    Self.sortByHash(named, scratch: scratch, marking: first) {
                        runs -> (repeated: [Int], compared: Int) in
                        // Runs of equal hashes: almost all of length 1 (a million random
                        // names share a 32-bit hash ~100 times), so the comparisons
                        // below are a handful.
                        var distinct: [(key: Key, line: Int)] = []
                        var repeated: [Int] = []
                        var compared = 0
                        var start = runs.lowerBound
                        while start < runs.upperBound {
                            let hash = named[start] >> 32
                            var end = start + 1
                            while end < runs.upperBound, named[end] >> 32 == hash { end += 1 }
                            if end - start > 1 {
                                distinct.removeAll(keepingCapacity: true)
                                for member in named[start..<end] {
                                    let index = Int(member & 0xFFFF_FFFF)
                                    // `key` gave a name for this line when its word was made.
                                    guard let name = key(index) else { continue }
                                    let earlier = withKey(name) { bytes in
                                        distinct.first { seen in
                                            compared += 1
                                            return withKey(seen.key) { $0.elementsEqual(bytes) }
                                        }
                                    }
                                    if let earlier {
                                        first[index] = earlier.line
                                        repeated.append(index)
                                    } else {
                                        distinct.append((name, index + 1))
                                    }
                                }
                            }
                            start = end
                        }
                        return (repeated, compared)
                    }
                }
            }
        }
        comparisons = found.reduce(0) { $0 + $1.compared }
        repeated = found.flatMap(\.repeated).sorted()
    }

    /// The number of the first line with line `number`'s name, when an earlier line has it.
    func earlierLine(of number: Int) -> Int? {
        let line = first[number - 1]
        return line > 0 ? line : nil
    }

    /// Whether line `number` holds the first entry of its name (an effective entry).
    func isFirst(_ number: Int) -> Bool { first[number - 1] == 0 }

    /// Sorts `words` (one per named line, in line order) by their top 32 bits, the hash,
    /// keeping line order among equal hashes, marks each one's line in `first` as named,
    /// and runs `resolve` on pieces of the sorted words that no run of equal hashes
    /// crosses, at once; gives their results in order. `scratch` is as long as `words`.
    ///
    /// One pass scatters the words by the hash's top 8 bits into 256 buckets — each piece
    /// of the words counts its own and writes to its own places, so line order holds —
    /// and then each bucket, small enough to stay in the cache, is sorted by the other 24
    /// bits in three stable passes of 8, in pieces at once. (Four passes of 8 bits over the
    /// whole array cost a quarter of `check`'s time on one core.)
    private static func sortByHash<T>(
        _ words: UnsafeMutableBufferPointer<UInt64>, scratch: UnsafeMutableBufferPointer<UInt64>,
        marking first: UnsafeMutableBufferPointer<Int>, resolve: (Range<Int>) -> T
    ) -> [T] {
        let digits = 256
        // Each piece's count of each top byte (marking its lines on the way, and faulting
        // in its part of the fresh scratch for the scatter).
        let counted = Parallel.map(words.count) { range -> (range: Range<Int>, counts: [Int]) in
            Syscall.prefault(UnsafeMutableBufferPointer(rebasing: scratch[range]))
            var counts = [Int](repeating: 0, count: digits)
            for word in words[range] {
                counts[Int(word >> 56)] &+= 1
                first[Int(word & 0xFFFF_FFFF)] = 0
            }
            return (range, counts)
        }
        // Where each piece's words of each bucket go: buckets in order, pieces in order.
        var bucketStarts = [Int](repeating: 0, count: digits + 1)
        var places = counted.map { _ in [Int](repeating: 0, count: digits) }
        var total = 0
        for digit in 0..<digits {
            bucketStarts[digit] = total
            for piece in counted.indices {
                places[piece][digit] = total
                total += counted[piece].counts[digit]
            }
        }
        bucketStarts[digits] = total
        _ = Parallel.map(counted.count, minimum: 1) { pieces -> Void in
            for piece in pieces {
                var next = places[piece]
                for word in words[counted[piece].range] {
                    let digit = Int(word >> 56)
                    scratch[next[digit]] = word
                    next[digit] &+= 1
                }
            }
        }
        // Each bucket: scratch → words → scratch → words, by bits 32–39, 40–47, 48–55.
        return Parallel.map(digits, minimum: 1) { buckets -> T in
            var counts = [Int](repeating: 0, count: digits)
            for bucket in buckets {
                let range = bucketStarts[bucket]..<bucketStarts[bucket + 1]
                var (source, target) = (scratch, words)
                for shift in [UInt64(32), 40, 48] {
                    counts.withUnsafeMutableBufferPointer { counts in
                        counts.update(repeating: 0)
                        for word in source[range] { counts[Int(word >> shift & 0xFF)] &+= 1 }
                        var place = range.lowerBound
                        for digit in 0..<digits {
                            let n = counts[digit]
                            counts[digit] = place
                            place &+= n
                        }
                        for word in source[range] {
                            let digit = Int(word >> shift & 0xFF)
                            target[counts[digit]] = word
                            counts[digit] &+= 1
                        }
                    }
                    swap(&source, &target)
                }
            }
            // Equal hashes share their top byte: no run crosses from one bucket to the next.
            return resolve(bucketStarts[buckets.lowerBound]..<bucketStarts[buckets.upperBound])
        }
    }
}
