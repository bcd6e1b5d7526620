import CredFileTestSupport
import Testing

@testable import CredFile

#if canImport(Glibc)
import Glibc
#endif

// The fast paths `check` takes on a million lines, each held to the plain code it
// stands in for: word-at-a-time base64 and line-feed counts, the one-pass hash reader,
// and the mapped read.

@Suite("Fast paths agree with the plain code")
struct FastPathTests {
    @Test("the word-at-a-time alphabet scan finds what the table finds, for every byte at every place")
    func alphabetScan() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./".utf8)
        var values = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { values[Int(c)] = Int8(i) }
        var random = SeededRandom(seed: 0xBA5E_64)
        for length in 0..<26 {
            for _ in 0..<8 {
                let text = (0..<length).map { _ in alphabet[Int(random.next() % 64)] }
                for position in -1..<length {
                    for byte in 0...255 {
                        if position < 0, byte > 0 { break }  // the clean text, once
                        var probe = text
                        if position >= 0 { probe[position] = UInt8(byte) }
                        for from in [0, min(1, length), min(9, length)] {
                            let fast = probe.withUnsafeBytes { AdaptedBase64.alphabetEnd(of: $0, from: from) }
                            let plain = probe.withUnsafeBytes { text in
                                values.withUnsafeBufferPointer {
                                    Base64Core.alphabetEnd(of: text, from: from, values: $0)
                                }
                            }
                            #expect(fast == plain, "length \(length), byte \(byte) at \(position), from \(from)")
                            if fast != plain { return }
                        }
                    }
                }
            }
        }
    }

    @Test("the word-at-a-time line-feed count agrees with a byte loop, at every length and alignment")
    func lineFeedCount() {
        var random = SeededRandom(seed: 0x1F_C0DE)
        for length in Array(0..<80) + [2039, 2040, 2041, 4096, 9000] {
            for _ in 0..<40 {
                // Mostly text, with line feeds and now and then a byte ≥ 0x80 or 0x0A's neighbours.
                let bytes: [UInt8] = (0..<(length + 8)).map { _ in
                    switch random.next() % 40 {
                    case 0..<5: 0x0A
                    case 5: random.next() % 4 == 0 ? 0x80 | UInt8(random.next() % 128) : 0x0B
                    case 6: 0x8A
                    default: UInt8(0x20 + random.next() % 95)
                    }
                }
                for offset in [0, 1, 3, 7] {
                    let piece = bytes[offset..<(offset + length)]
                    let plain: Int? = piece.contains { $0 >= 0x80 } ? nil : piece.filter { $0 == 0x0A }.count
                    let fast = bytes.withUnsafeBytes {
                        Bytes.lineFeedsIfASCII(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + length)]))
                    }
                    #expect(fast == plain, "length \(length) at offset \(offset)")
                    if fast != plain { return }
                }
            }
        }
    }

    @Test("the near search finds the first needle a plain search finds, at every length and start")
    func nearSearch() {
        var random = SeededRandom(seed: 0xC0_77A)
        for length in 0..<48 {
            for _ in 0..<60 {
                // Commas, and the bytes a borrow could confuse with one (0x2D, its +1 0x2D…).
                let bytes: [UInt8] = (0..<length).map { _ in
                    switch random.next() % 12 {
                    case 0: UInt8(ascii: ",")
                    case 1: 0x2D
                    case 2: 0x00
                    case 3: 0xAC
                    default: UInt8(0x20 + random.next() % 95)
                    }
                }
                for from in 0...min(length, 3) {
                    let plain = bytes[from...].firstIndex(of: UInt8(ascii: ","))
                    let near = bytes.withUnsafeBytes {
                        Bytes.index(ofNear: UInt8(ascii: ","), in: $0, from: from, to: length)
                    }
                    #expect(near == plain, "length \(length), from \(from): \(bytes)")
                    if near != plain { return }
                }
            }
        }
    }

    @Test("the word-at-a-time printable test, with and without a refused byte, agrees with a byte loop")
    func printableScan() {
        var random = SeededRandom(seed: 0x9_8173)
        for length in 0..<40 {
            for _ in 0..<200 {
                // Printable text with now and then one byte at an edge of the range, or `$`.
                var bytes: [UInt8] = (0..<length).map { _ in UInt8(0x20 + random.next() % 95) }
                if length > 0, random.next() % 2 == 0 {
                    let edges: [UInt8] = [0x00, 0x1F, 0x20, 0x24, 0x7E, 0x7F, 0x80, 0xFF, 0x09, 0x23, 0x25]
                    bytes[Int(random.next() % UInt64(length))] = edges[Int(random.next() % UInt64(edges.count))]
                }
                let printable = bytes.allSatisfy { (0x20...0x7E).contains($0) }
                let withoutDollar = printable && !bytes.contains(0x24)
                bytes.withUnsafeBytes { buffer in
                    #expect(Bytes.isPrintableASCII(buffer) == printable, "\(bytes)")
                    #expect(Bytes.isPrintableASCII(buffer, without: 0x24) == withoutDollar, "\(bytes)")
                }
            }
        }
    }

    @Test("hasPrefix by words agrees with starts(with:) for prefixes of 0 to 17 bytes")
    func prefixCompare() {
        let prefixes: [StaticString] = [
            "", "$", "$pbkdf2", "$pbkdf2-", "$pbkdf2-s", "$pbkdf2-sha", "$pbkdf2-sha256$", "$pbkdf2-sha256$1",
            "$pbkdf2-sha256$12",
        ]
        let text = Array("$pbkdf2-sha256$1200000$salt".utf8)
        var random = SeededRandom(seed: 0x9_12EF)
        for prefix in prefixes {
            let bytes = (0..<prefix.utf8CodeUnitCount).map { prefix.utf8Start[$0] }
            for length in 0...text.count {
                for _ in 0..<20 {
                    var probe = Array(text[..<length])
                    if length > 0, random.next() % 2 == 0 { probe[Int(random.next() % UInt64(length))] ^= 0x01 }
                    let expected = probe.starts(with: bytes)
                    #expect(probe.withUnsafeBytes { Bytes.hasPrefix($0, prefix) } == expected, "\(prefix) \(probe)")
                }
            }
        }
    }

    @Test("the one-pass hash reader accepts exactly what the step-by-step reader accepts")
    func oneHashReader() throws {
        let valid = [
            "$pbkdf2-sha256$1200000$c2FsdHNhbHRzYWx0$4uW0wA3gCEfnUbWZqMX8EHqOH8.tW3t84nqPANJRvR8",
            "$pbkdf2-sha256$1$$4uW0wA3gCEfnUbWZqMX8EHqOH8.tW3t84nqPANJRvR8",
            "$pbkdf2-sha512$25000$LyWE0HrP2RsjZCxlDGFMKQ$1vC5Ohk2mCS9b6akqsEfgeb4l74SF8XjH.SljXf3dMLHdlY1GK9ojcCKts6/asR4aPqBmk74nCDddU3tvSCJvw",
            "$pbkdf2-sha256$50000000$AAAA$4uW0wA3gCEfnUbWZqMX8EHqOH8.tW3t84nqPANJRvR8",
        ]
        // Each byte of each hash replaced by bytes that matter to the format, and cut,
        // and doubled: the readers must give the same answer every time.
        let replacements = Array("$0123456789./AZaz-+=_ \u{7F}".utf8) + [0x00, 0x80, 0xFF]
        var agreed = (accepted: 0, refused: 0)
        for hash in valid {
            let bytes = Array(hash.utf8)
            var probes: [[UInt8]] = [bytes]
            for position in bytes.indices {
                for byte in replacements where byte != bytes[position] {
                    var probe = bytes
                    probe[position] = byte
                    probes.append(probe)
                }
                probes.append(Array(bytes[..<position]))
                var doubled = bytes
                doubled.insert(bytes[position], at: position)
                probes.append(doubled)
            }
            for probe in probes {
                let fast = probe.withUnsafeBytes { PasswordHash.wellFormed($0) }
                let plain = probe.withUnsafeBytes { text in
                    Result { () throws(PasswordHash.ParseError) in try PasswordHash.validateStepByStep(text) }
                }
                let shown = String(decoding: probe, as: UTF8.self)
                switch plain {
                case .success(let answer):
                    #expect(
                        fast?.header == answer.header && fast?.salt == answer.salt && fast?.checksum == answer.checksum,
                        "\(shown)")
                    agreed.accepted += 1
                case .failure:
                    #expect(fast == nil, "\(shown)")
                    agreed.refused += 1
                }
            }
        }
        // Both kinds were tried, many times.
        #expect(agreed.accepted > 100 && agreed.refused > 1_000)
    }

    @Test(
        "a mapped file that shrinks while it is read is read again when nothing was handed on yet; one that shrinks or grows after is an I/O error; never a crash"
    )
    func mappedFileChanges() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path + "/changing.txt"
            let size = FileReader.mappingMinimum * 2
            for change in ["shrink", "grow"] {
                for handedOn in [false, true] {
                    try writeBytes(path, [UInt8](repeating: UInt8(ascii: "a"), count: size))
                    var sizesSeen: [Int] = []
                    let context = Comment(rawValue: "\(change), \(handedOn ? "after" : "before") handing on")
                    do {
                        let last = try FileReader.withGuardedBytes(path) { buffer, truncatedSoFar -> UInt8? in
                            sizesSeen.append(buffer.count)
                            if sizesSeen.count == 1 {
                                // Another program changes the file in place while it is mapped.
                                if change == "shrink" {
                                    #expect(truncate(path, 10) == 0)
                                } else {
                                    let fd = open(path, O_WRONLY | O_APPEND)
                                    #expect(write(fd, "bb", 2) == 2)
                                    close(fd)
                                }
                            }
                            // After the shrink, a page past the new end: SIGBUS without the guard.
                            let last = buffer.last
                            if !handedOn, truncatedSoFar() { throw FileReader.ReadAgain() }
                            return last
                        }
                        #expect(change == "shrink" && !handedOn, context)
                        #expect(sizesSeen == [size, 10], context)
                        #expect(last == UInt8(ascii: "a"), context)
                    } catch let error as CredFileError {
                        #expect(change == "grow" || handedOn, "\(context): \(error)")
                        #expect(error.code == .io && error.message.contains("truncated or resized in place"), context)
                    }
                }
            }
        }
    }
}
