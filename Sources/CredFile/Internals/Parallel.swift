#if canImport(Glibc)
import Glibc
#endif

/// Splits one large pass over a file (reading it, hashing its names, judging its lines)
/// into contiguous pieces run at once on the machine's cores: `check` and `list` of a
/// million lines are passes over memory that one core cannot keep busy alone.
enum Parallel {
    /// How many pieces a large pass is split into: the cores online, at most 8.
    static let pieceCount = min(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1), 8)

    /// Tests split every pass into this many pieces whatever its size, so small files
    /// cross piece boundaries too (and compare with one piece).
    @TaskLocal static var testPieceCount: Int?

    /// The results of `body` on contiguous pieces of `0..<count`, in order, the pieces
    /// run at once. Fewer than `minimum` items per piece: one piece, on this thread.
    ///
    /// `body` reads shared state and writes only what belongs to its piece; each piece's
    /// result is written once, by its own thread, and read after all have finished.
    static func map<T>(_ count: Int, minimum: Int = 1 << 15, _ body: (Range<Int>) -> T) -> [T] {
        let pieces =
            testPieceCount.map { max(min($0, count), 1) } ?? max(min(pieceCount, count / max(minimum, 1)), 1)
        guard pieces > 1 else { return [body(0..<count)] }
        let results = UnsafeMutableBufferPointer<T?>.allocate(capacity: pieces)
        results.initialize(repeating: nil)
        defer {
            _ = results.deinitialize()
            results.deallocate()
        }
        withoutActuallyEscaping(body) { body in
            let shared = Unchecked((body, results))
            Threads.concurrentPerform(iterations: pieces) { piece in
                let (body, results) = shared.value
                results[piece] = body((count * piece / pieces)..<(count * (piece + 1) / pieces))
            }
        }
        // Every piece ran, so every result is there.
        return results.map { $0! }
    }

    /// A value handed to the pieces' threads, which the caller makes safe to share
    /// (reads of immutable state, writes to disjoint places).
    private struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
}
