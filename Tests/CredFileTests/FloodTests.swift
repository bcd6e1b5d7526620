import Testing

@testable import CredFile

// #11 item 4: `check`'s duplicate table used a fixed, unseeded hash, so names crafted to
// share a slot made it quadratic (100,000 names: 100–200 times slower than random ones).
// The names below are crafted against that old hash (kept here only to craft them); the
// table now keys its hash per run, and the probe counts of crafted and random names agree.
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

    static func probes(_ keys: [[UInt8]]) -> Int {
        let table = FirstLineTable(capacity: keys.count)
        for (line, key) in keys.enumerated() {
            let earlier = key.withUnsafeBytes { table.insert($0, fileOffset: nil, line: line + 1, file: UnsafeRawBufferPointer(start: nil, count: 0)) }
            #expect(earlier == nil)
        }
        return table.probes
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

        // The table as it is: keyed per run.
        let newCrafted = Self.probes(crafted)
        let newRandom = Self.probes(randoms)
        let ratio = Double(newCrafted) / Double(max(newRandom, 1))
        print("flood: old hash \(oldCrafted) vs \(oldRandom) probes for \(count / 10) crafted vs random names; keyed table \(newCrafted) vs \(newRandom) for \(count) (ratio \(ratio))")
        #expect(ratio < 2, "crafted names probe \(ratio) times as much as random ones")
    }

    @Test("the table still finds every duplicate, of names in the file and of normalized copies")
    func duplicatesFound() {
        let file = Array("alice,x\nbob,y\n".utf8)
        let table = FirstLineTable(capacity: 2)
        file.withUnsafeBytes { buffer in
            #expect(table.insert(UnsafeRawBufferPointer(rebasing: buffer[0..<5]), fileOffset: 0, line: 1, file: buffer) == nil)
            #expect(table.insert(UnsafeRawBufferPointer(rebasing: buffer[8..<11]), fileOffset: 8, line: 2, file: buffer) == nil)
            let copy = Array("alice".utf8)
            #expect(copy.withUnsafeBytes { table.insert($0, fileOffset: nil, line: 3, file: buffer) } == 1)
            for n in 0..<1000 {
                let name = Array("user\(n)".utf8)
                #expect(name.withUnsafeBytes { table.insert($0, fileOffset: nil, line: 4 + n, file: buffer) } == nil)
            }
            #expect(Array("user7".utf8).withUnsafeBytes { table.insert($0, fileOffset: nil, line: 9999, file: buffer) } == 11)
        }
    }
}
