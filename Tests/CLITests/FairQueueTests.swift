import CredFileTestSupport
import Testing

@testable import CredFile
@testable import credfile

/// `serve`'s queue of logins, fair between client addresses (SPEC §10: a flood of bad
/// logins never stops the good ones; issue #33 item 3): round-robin turns, longest-queue
/// drop when full, and the client keys (an IPv6 /64 is one client).
@Suite struct FairQueueTests {
    /// Admissions as text, for comparisons: "queued", "evicted X", "refused".
    static func admit(_ queue: inout FairQueue<String, String>, _ item: String, _ key: String) -> String {
        switch queue.enqueue(item, from: key) {
        case .queued: "queued"
        case .queuedEvicting(let evicted): "evicted \(evicted)"
        case .refused: "refused"
        }
    }

    @Test("turns go round the clients: one login from b waits behind at most one of a's, however many a queued")
    func roundRobin() {
        var queue = FairQueue<String, String>(capacity: 10)
        for index in 1...5 { #expect(Self.admit(&queue, "a\(index)", "a") == "queued") }
        #expect(Self.admit(&queue, "b1", "b") == "queued")
        #expect(Self.admit(&queue, "c1", "c") == "queued")
        var order: [String] = []
        while let item = queue.dequeue() { order.append(item) }
        #expect(order == ["a1", "b1", "c1", "a2", "a3", "a4", "a5"])
        #expect(queue.count == 0 && queue.dequeue() == nil)
    }

    @Test("a flood from one client fills an idle queue, then gives its newest places to the other clients")
    func longestQueueDrop() {
        var queue = FairQueue<String, String>(capacity: 4)
        for index in 1...4 { #expect(Self.admit(&queue, "a\(index)", "a") == "queued") }
        #expect(Self.admit(&queue, "a5", "a") == "refused", "the longest queue grew past a full queue")
        #expect(Self.admit(&queue, "b1", "b") == "evicted a4")
        #expect(Self.admit(&queue, "c1", "c") == "evicted a3")
        #expect(Self.admit(&queue, "b2", "b") == "refused", "b took a place from a queue only one longer")
        #expect(queue.count(of: "a") == 2 && queue.count(of: "b") == 1 && queue.count(of: "c") == 1)
        #expect(Self.admit(&queue, "d1", "d") == "evicted a2")
        #expect(Self.admit(&queue, "e1", "e") == "refused", "every client holds one: the shares are even")
        #expect(Self.admit(&queue, "a6", "a") == "refused", "a swap between equal shares")
        #expect(queue.dequeue() == "a1" && Self.admit(&queue, "e2", "e") == "queued")
        #expect(queue.count == 4 && queue.count(of: "a") == 0)
    }

    @Test(
        "seeded: the queue never holds more than its capacity, loses nothing, and refuses only when the shares are even"
    )
    func seededInvariants() {
        for seed in UInt64(1)...200 {
            var generator = SeededRandom(seed: seed)
            let capacity = Int(generator.next() % 8) + 1
            var queue = FairQueue<Int, Int>(capacity: capacity)
            var waiting = Set<Int>()
            for item in 0..<300 {
                if generator.next() % 3 == 0 {
                    if let out = queue.dequeue() { #expect(waiting.remove(out) != nil, "seed \(seed)") }
                    continue
                }
                // Key 0 floods; keys 1…5 come now and then.
                let key = generator.next() % 2 == 0 ? 0 : Int(generator.next() % 5) + 1
                let own = queue.count(of: key)
                let longest = (0...5).map { queue.count(of: $0) }.max() ?? 0
                switch queue.enqueue(item, from: key) {
                case .queued: waiting.insert(item)
                case .queuedEvicting(let evicted):
                    waiting.insert(item)
                    #expect(waiting.remove(evicted) != nil, "seed \(seed)")
                case .refused:
                    #expect(
                        queue.count == capacity && longest <= own + 1,
                        "seed \(seed): refused while a client held two more")
                }
                #expect(queue.count <= capacity && queue.count == waiting.count, "seed \(seed)")
            }
            let rest = queue.removeAll()
            #expect(Set(rest) == waiting && rest.count == waiting.count, "seed \(seed)")
        }
    }

    @Test(
        "the client key: an IPv4 address, an IPv4-mapped one as its IPv4, an IPv6 /64, the unix socket's clients as one"
    )
    func clientKeys() {
        func key(_ text: String?) -> ClientKey { ClientKey(text.flatMap { IPAddress(parsing: Array($0.utf8)) }) }
        #expect(key("203.0.113.9") == key("::ffff:203.0.113.9"))
        #expect(key("203.0.113.9") != key("203.0.113.10"))
        #expect(key("2001:db8:1:2::1") == key("2001:db8:1:2:ffff::7"), "one /64 is one client")
        #expect(key("2001:db8:1:2::1") != key("2001:db8:1:3::1"))
        #expect(key(nil) == key(nil) && key(nil) != key("0.0.0.0"))
        #expect(key("2001:db8:1:2::1").description == "2001:db8:1:2::/64")
        #expect(key("203.0.113.9").description == "203.0.113.9")
    }
}
