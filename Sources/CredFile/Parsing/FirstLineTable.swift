/// `check`'s duplicate table: username keys → the line of their first entry, open
/// addressing over 64-bit hashes.
///
/// The hash is keyed with a random key drawn for each table (SipHash through the
/// standard library's `Hasher`, plus the table's own key from the system's CSPRNG),
/// so names crafted to collide cannot turn a `check` into a quadratic probe storm:
/// whoever writes the file cannot know the key. (A fixed hash let 100,000 crafted names
/// take 100–200 times longer than random ones.)
///
/// Keys that are in the file are kept as offsets into it (no allocation per name);
/// normalized keys go to one side buffer. Each slot holds the hash's high 32 bits next
/// to the entry's index, so a probe visits the entries and the file (two cache misses)
/// only when the full hash probably matches.
final class FirstLineTable {
    private struct Stored {
        var offset: Int  // into the file, or, when negative, into `side` at -offset - 1
        var count: Int
        var line: Int
    }
    private var slots: UnsafeMutableBufferPointer<UInt64>  // 0: empty; else tag | index + 1
    private var entries: [Stored] = []
    private var side: [UInt8] = []
    /// The random key of this table's hash.
    private let key: (UInt64, UInt64)
    /// Slots visited by ``insert(_:fileOffset:line:file:)`` so far: tests compare it
    /// for crafted and random names, without timing anything.
    private(set) var probes = 0

    init(capacity: Int) {
        var random = SystemRandomNumberGenerator()  // getrandom(2)
        key = (random.next(), random.next())
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: 0)
        entries.reserveCapacity(capacity)
    }

    deinit { slots.deallocate() }

    /// Records `key` (found in `file` at `fileOffset`, or nil when it is a normalized
    /// copy) at `line`; returns the earlier line when the key was already there.
    func insert(_ key: UnsafeRawBufferPointer, fileOffset: Int?, line: Int, file: UnsafeRawBufferPointer) -> Int? {
        if entries.count * 2 >= slots.count { grow(file) }
        let hash = hash(key)
        let tag = UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != 0 {
            probes += 1
            if slots[slot] & 0xFFFF_FFFF_0000_0000 == tag {
                let entry = entries[Int(slots[slot] & 0xFFFF_FFFF) - 1]
                if entry.count == key.count, bytes(of: entry, file, { $0.elementsEqual(key) }) {
                    return entry.line
                }
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = tag | UInt64(entries.count + 1)
        if let fileOffset {
            entries.append(Stored(offset: fileOffset, count: key.count, line: line))
        } else {
            entries.append(Stored(offset: -side.count - 1, count: key.count, line: line))
            side.append(contentsOf: key)
        }
        return nil
    }

    private func bytes<R>(of entry: Stored, _ file: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if entry.count == 0 { return body(UnsafeRawBufferPointer(start: file.baseAddress, count: 0)) }
        if entry.offset >= 0 { return body(UnsafeRawBufferPointer(rebasing: file[entry.offset..<(entry.offset + entry.count)])) }
        let start = -entry.offset - 1
        return side.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + entry.count)])) }
    }

    private func grow(_ file: UnsafeRawBufferPointer) {
        slots.deallocate()
        slots = .allocate(capacity: slots.count * 2)
        slots.initialize(repeating: 0)
        let mask = slots.count - 1
        for (index, entry) in entries.enumerated() {
            let hash = bytes(of: entry, file) { self.hash($0) }
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000 | UInt64(index + 1)
        }
    }

    /// The keyed hash of `bytes` (SipHash-1-3 in `Hasher`, keyed by the process's
    /// random seed and this table's key).
    private func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }
}
