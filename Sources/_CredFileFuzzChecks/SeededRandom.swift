/// SplitMix64 (Steele, Lea & Flood, 2014): a tiny, fast generator whose whole state is
/// one `UInt64`, so a property test or a fuzz check seeded with a constant replays the
/// same choices on every run and every machine. Not for secrets.
///
/// The one seeded generator of the tests and the fuzz checks (it lives here, below
/// `CredFileTestSupport`, because the `Fuzz/` package builds this module and nothing else).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that always produces the same sequence for the same `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &self) }
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// One element of a non-empty collection.
    public mutating func pick<C: Collection>(_ c: C) -> C.Element {
        c[c.index(c.startIndex, offsetBy: Int.random(in: 0..<c.count, using: &self))]
    }
}
