import CredFile

/// Whose share of `serve`'s queue and connections a request takes (SPEC §10: a flood of
/// bad logins never stops the good ones): the client's IPv4 address, or its IPv6 /64 (a
/// host is usually given a whole /64, so one attacker could otherwise be 2^64 clients);
/// every client of a unix socket without a forwarded address is one key.
struct ClientKey: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4, an IPv4-mapped IPv6 address counting as its IPv4), 8 (an IPv6 /64), or none.
    let bytes: [UInt8]

    init(_ address: IPAddress?) {
        guard let address else {
            bytes = []
            return
        }
        if address.isIPv4 {
            bytes = address.bytes
        } else if address.bytes[..<10].allSatisfy({ $0 == 0 }), address.bytes[10] == 0xFF, address.bytes[11] == 0xFF {
            bytes = Array(address.bytes[12...])
        } else {
            bytes = Array(address.bytes[..<8])
        }
    }

    var description: String {
        switch bytes.count {
        case 4: IPAddress(bytes: bytes)?.description ?? "?"
        case 8: (IPAddress(bytes: bytes + [UInt8](repeating: 0, count: 8))?.description ?? "?") + "/64"
        default: "the unix socket"
        }
    }
}

/// A bounded queue that is fair between keys (clients): items wait in one FIFO per key
/// and leave round-robin, one key at a time, so a client with one item waits behind at
/// most one item of each other client, however many the others queued. When the queue
/// is full, a newcomer whose key holds at least two fewer items than the longest queue
/// takes the place of that queue's newest item (longest-queue drop): a flood from one key
/// fills the queue only while nobody else wants it, and each of k keys keeps about
/// `capacity / k` places (a newcomer is refused only when no key holds two more than it).
struct FairQueue<Key: Hashable, Item> {
    /// What ``enqueue(_:from:)`` did.
    enum Admission {
        /// Queued.
        case queued
        /// Queued in the place of `evicted`, the newest item of the longest queue (which
        /// the caller must now answer as refused).
        case queuedEvicting(evicted: Item)
        /// Not queued: the queue is full and no key holds two items more than this one.
        case refused
    }

    /// The most items waiting at once.
    let capacity: Int
    private var queues: [Key: [Item]] = [:]
    /// The keys that have items, in the order they are served next.
    private var turns: [Key] = []
    /// Items waiting.
    private(set) var count = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a queue needs a place")
        self.capacity = capacity
    }

    /// Items `key` has waiting.
    func count(of key: Key) -> Int { queues[key]?.count ?? 0 }

    /// Queues `item` for `key`, taking the place of the longest queue's newest item when full.
    mutating func enqueue(_ item: Item, from key: Key) -> Admission {
        var evicted: Item?
        if count >= capacity {
            let own = count(of: key)
            // The longest queue (the earliest in turn order among equals: a stable choice).
            // Only when that evens the shares (a swap between equals would only churn).
            guard let longest = turns.max(by: { count(of: $0) < count(of: $1) }), count(of: longest) > own + 1 else {
                return .refused
            }
            evicted = queues[longest]?.popLast()
            count -= 1
            if queues[longest]?.isEmpty == true {
                queues[longest] = nil
                turns.removeAll { $0 == longest }
            }
        }
        if queues[key] == nil {
            queues[key] = [item]
            turns.append(key)
        } else {
            queues[key]?.append(item)
        }
        count += 1
        return evicted.map { .queuedEvicting(evicted: $0) } ?? .queued
    }

    /// The next item: the oldest of the key whose turn it is; that key goes to the back.
    mutating func dequeue() -> Item? {
        guard !turns.isEmpty else { return nil }
        let key = turns.removeFirst()
        guard var items = queues[key], !items.isEmpty else { return nil }
        let item = items.removeFirst()
        count -= 1
        if items.isEmpty {
            queues[key] = nil
        } else {
            queues[key] = items
            turns.append(key)
        }
        return item
    }

    /// Takes every item out (oldest first per key, keys in turn order).
    mutating func removeAll() -> [Item] {
        var all: [Item] = []
        while let item = dequeue() { all.append(item) }
        return all
    }
}

extension FairQueue: Sendable where Key: Sendable, Item: Sendable {}
extension FairQueue.Admission: Sendable where Key: Sendable, Item: Sendable {}
