import Testing

@testable import CredFile

// #11 item 4: `check`'s duplicate table used a fixed, unseeded hash, so names crafted to
// share a slot made it quadratic (100,000 names: 100–200 times slower than random ones).
// The names below are crafted against that old hash (kept here only to craft them); the
// index (`FirstLines`) now keys its hash per run and sorts by it, and crafted names cost
// what random ones do.
@Suite("Hash flooding in check's duplicate table")
struct FloodTests {
    static let c1: UInt64 = 0xFF51_AFD7_ED55_8CCD
    static let c2: UInt64 = 0xC4CE_B9FE_1A85_EC53

    /// The old fixed hash of 16-byte keys (two blocks, then MurmurHash3's fmix64).
    static func oldHash(_ key: [UInt8]) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(key.count)
        for block in 0..<2 {
            let x = key.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: block * 8, as: UInt64.self) }
            h = (h ^ x) &* c1
            h = h << 31 | h >> 33
        }
        h ^= h >> 33
        h &*= c1
        h ^= h >> 33
        h &*= c2
        h ^= h >> 33
        return h
    }

    /// The multiplicative inverse of an odd number modulo 2^64 (Newton's iteration).
    static func inverse(_ c: UInt64) -> UInt64 {
        var x = c
        for _ in 0..<6 { x &*= 2 &- c &* x }
        return x
    }

    /// Names whose old hash is `i << 32`: all in slot 0 of any table up to 2^32 slots.
    static func craftedNames(_ count: Int) -> [[UInt8]] {
        let first = Array("floodnam".utf8)
        var h1: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ 16
        h1 = (h1 ^ first.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }) &* c1
        h1 = h1 << 31 | h1 >> 33
        return (1...count).map { i in
            // Undo fmix64, then the second block's rotate and multiply.
            var h = UInt64(i) << 32
            h ^= h >> 33
            h &*= inverse(c2)
            h ^= h >> 33
            h &*= inverse(c1)
            h ^= h >> 33
            let rotated = h >> 31 | h << 33
            let x2 = (rotated &* inverse(c1)) ^ h1
            return first + withUnsafeBytes(of: x2.littleEndian) { Array($0) }
        }
    }

    /// Slots probed by a linear-probing table of `keys` under `hash` (the old table's shape).
    static func simulatedProbes(_ keys: [[UInt8]], hash: ([UInt8]) -> UInt64) -> Int {
        var size = 16
        while size < keys.count * 2 { size <<= 1 }
        var slots = [Bool](repeating: false, count: size)
        var probes = 0
        for key in keys {
            var slot = Int(truncatingIfNeeded: hash(key)) & (size - 1)
            while slots[slot] {
                probes += 1
                slot = (slot + 1) & (size - 1)
            }
            slots[slot] = true
        }
        return probes
    }

    /// The names compared byte for byte when `FirstLines` indexes `keys` (all distinct).
    static func comparisons(_ keys: [[UInt8]]) -> Int {
        let index = FirstLines(count: keys.count, file: UnsafeRawBufferPointer(start: nil, count: 0)) {
            .normalized(keys[$0])
        }
        for number in 1...keys.count { #expect(index.earlierLine(of: number) == nil) }
        return index.comparisons
    }

    @Test("names crafted against the old hash probe like random names")
    func floodIsGone() {
        let count = 20_000
        let crafted = Self.craftedNames(count)
        #expect(Set(crafted).count == count)
        #expect(crafted.allSatisfy { Self.oldHash($0) & 0xFFFF_FFFF == 0 }, "the names collide under the old hash")
        var random = SystemRandomNumberGenerator()
        let randoms = (0..<count).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) } }

        // Under the old hash: quadratic (shown on a tenth of the names, to stay quick).
        let oldCrafted = Self.simulatedProbes(Array(crafted.prefix(count / 10)), hash: Self.oldHash)
        let oldRandom = Self.simulatedProbes(Array(randoms.prefix(count / 10)), hash: Self.oldHash)
        #expect(oldCrafted > 100 * max(oldRandom, 1))

        // The index as it is: keyed per run, so crafted names meet no more than random
        // ones (a 32-bit hash shared by two of 20,000 random names: ~0.05 pairs expected).
        let newCrafted = Self.comparisons(crafted)
        let newRandom = Self.comparisons(randoms)
        print(
            "flood: old hash \(oldCrafted) vs \(oldRandom) probes for \(count / 10) crafted vs random names; keyed index \(newCrafted) vs \(newRandom) comparisons for \(count)"
        )
        #expect(
            newCrafted <= max(2 * newRandom, 20),
            "crafted names cost \(newCrafted) comparisons, random ones \(newRandom)")
    }

    @Test("the index finds every duplicate, of names in the file and of normalized copies")
    func duplicatesFound() {
        let file = Array("alice,x\nbob,y\n".utf8)
        let extra = ["alice"] + (0..<1000).map { "user\($0)" } + ["user7", "bob"]
        let keys: [FirstLines.Key] = [.inFile(0..<5), .inFile(8..<11)] + extra.map { .normalized(Array($0.utf8)) }
        let index = file.withUnsafeBytes { buffer in
            FirstLines(count: keys.count + 1, file: buffer) { $0 < keys.count ? keys[$0] : nil }
        }
        #expect(index.earlierLine(of: 1) == nil && index.isFirst(1))
        #expect(index.earlierLine(of: 2) == nil)
        #expect(index.earlierLine(of: 3) == 1, "a normalized copy of a name in the file")
        #expect((4..<1004).allSatisfy { index.earlierLine(of: $0) == nil && index.isFirst($0) })
        #expect(index.earlierLine(of: 1004) == 11, "user7 first at line 11")
        #expect(index.earlierLine(of: 1005) == 2)
        #expect(!index.isFirst(1006) && index.earlierLine(of: 1006) == nil, "a line without a name")
    }

    @Test("with every name in one hash run, duplicates are still exact (a collision is not a duplicate)")
    func collisionsAreCompared() {
        // Many duplicates of few names, in random order, all of one hash, against a dictionary.
        var generator = SystemRandomNumberGenerator()
        let names = (0..<5000).map { _ in "n\(Int.random(in: 0..<300, using: &generator))" }
        let index = FirstLines(
            count: names.count, file: UnsafeRawBufferPointer(start: nil, count: 0), testHash: { _ in 7 }
        ) {
            .normalized(Array(names[$0].utf8))
        }
        #expect(index.comparisons > 0)
        var first: [String: Int] = [:]
        for (i, name) in names.enumerated() {
            #expect(index.earlierLine(of: i + 1) == first[name])
            if first[name] == nil { first[name] = i + 1 }
        }
    }
}
