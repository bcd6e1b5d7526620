import Synchronization

/// The index of a one-password-a-line blocklist: a keyed 64-bit hash of each line's
/// folded form, sorted, made from one read of the file at the first lookup (by whichever
/// thread asks first) and kept for the life of the process. Two different passwords
/// share a hash with a chance of about one in 2^64 / lines (a password then counts as
/// listed: it fails closed); whoever writes the list cannot aim at that, since the key
/// is drawn at random per process.
final class PasswordIndex: Sendable {
    private let hashes = Mutex<[UInt64]?>(nil)
    /// The hash key, from the system's CSPRNG.
    private let key: (UInt64, UInt64) = {
        var random = SystemRandomNumberGenerator()
        return (random.next(), random.next())
    }()

    /// The keyed hash of `bytes` (a folded password or line).
    private func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(bytes: bytes)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// Whether `folded` (a lowercased password's UTF-8) is a line of the file at `path`;
    /// the first lookup reads the file (its reads are counted), the others read nothing.
    func lookUp(_ folded: [UInt8], in path: String) throws -> Blocklist.Lookup {
        let (sorted, reads) = try hashes.withLock { built throws -> ([UInt64], Int) in
            if let built { return (built, 0) }
            let file = try BlocklistFile(path: path)
            defer { file.close() }
            var made: [UInt64] = []
            let reads = try file.forEachFoldedLine { made.append(hash($0)) }
            made.sort()
            built = made
            return (made, reads)
        }
        let target = folded.withUnsafeBytes { hash($0) }
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < target { low = middle + 1 } else { high = middle }
        }
        return Blocklist.Lookup(isListed: low < sorted.count && sorted[low] == target, reads: reads)
    }
}
