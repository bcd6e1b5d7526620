import CredFileTestSupport
import Testing

@Suite("Vector file reader")
struct VectorFileTests {
    @Test func readsEveryFileWithTheExpectedNumberOfBlocks() throws {
        // An empty argument list would make a parameterized test pass with no cases.
        #expect(try VectorFile.load("rfc6070-pbkdf2-sha1.txt").count == 6)
        #expect(try VectorFile.load("rfc7914-pbkdf2-sha256.txt").count == 2)
        #expect(try VectorFile.load("wycheproof-pbkdf2-sha256.txt").count == 10)
        #expect(try VectorFile.load("pbkdf2-sha512.txt").count == 14)
        #expect(try VectorFile.load("passlib-hashes.txt").count == 37)
    }

    @Test func quotedValuesAreTextAndOthersHex() throws {
        let block = VectorBlock(
            file: "t", line: 1, fields: [("P", "\"passwd\""), ("S", "73616c74"), ("X", "7g"), ("c", "80000")])
        #expect(try block.bytes("P") == Array("passwd".utf8))
        #expect(try block.bytes("S") == Array("salt".utf8))
        #expect(throws: VectorFileError.self) { try block.bytes("X") }
        #expect(throws: VectorFileError.self) { try block.bytes("missing") }
        #expect(try block.int("c") == 80000)
        #expect(VectorFile.hexBytes("abc") == nil)
        #expect(VectorFile.hex([0x00, 0xab, 0xff]) == "00abff")
    }
}
