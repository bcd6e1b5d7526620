import Foundation
import Testing

/// One block of a vector file: `KEY = value` lines, ended by a blank line.
///
/// Values are kept as written. ``bytes(_:)`` reads a value in double quotes as its
/// ASCII/UTF-8 bytes (as RFC 7914 quotes its inputs) and any other value as hex.
public struct VectorBlock: Sendable, CustomTestStringConvertible {
    /// The file's name, e.g. `passlib-hashes.txt`.
    public let file: String
    /// The 1-based line of the block's first key.
    public let line: Int
    /// Keys and values in file order.
    public let fields: [(key: String, value: String)]

    /// A block read from `file` at `line` (or made by a test).
    public init(file: String, line: Int, fields: [(key: String, value: String)]) {
        self.file = file
        self.line = line
        self.fields = fields
    }

    /// The value of `key`, as written.
    public subscript(key: String) -> String? { fields.first { $0.key == key }?.value }

    /// The value of `key`, as written; throws when the block has no such key.
    public func string(_ key: String) throws -> String {
        guard let value = self[key] else { throw VectorFileError("\(file):\(line): no key \(key)") }
        return value
    }

    /// The value of `key` as a decimal number.
    public func int(_ key: String) throws -> Int {
        guard let value = Int(try string(key)) else {
            throw VectorFileError("\(file):\(line): \(key) is not a decimal number")
        }
        return value
    }

    /// The value of `key` as bytes: quoted text, or else hex.
    public func bytes(_ key: String) throws -> [UInt8] {
        let value = try string(key)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            return Array(value.utf8.dropFirst().dropLast())
        }
        guard let bytes = VectorFile.hexBytes(value) else {
            throw VectorFileError("\(file):\(line): \(key) is not hex")
        }
        return bytes
    }

    /// `FILE:LINE` of the vector, as the test's name.
    public var testDescription: String { "\(file):\(line)" }
}

/// A vector file that is missing, malformed or asked for a key it lacks.
public struct VectorFileError: Error, CustomStringConvertible {
    /// `FILE:LINE: what is wrong`.
    public let description: String
    /// An error described by `description`.
    public init(_ description: String) { self.description = description }
}

/// Reads the `KEY = value` files in `Tests/CredFileTests/Vectors/`: the one loader of the
/// tests' vector files (RFC 7914 and Wycheproof PBKDF2, passlib's hashes, …).
///
/// Grammar: lines starting with `#` are comments; a blank line ends a block; every other
/// line is `KEY = value` (split at the first ` = `); a key appears at most once a block.
public enum VectorFile {
    /// `Tests/CredFileTests/Vectors` of this checkout.
    public static let directory = BuiltProduct.packageRoot.appendingPathComponent("Tests/CredFileTests/Vectors")

    /// The blocks of `Vectors/<name>`; throws when the file is missing, malformed or empty.
    public static func load(_ name: String) throws -> [VectorBlock] {
        let url = directory.appendingPathComponent(name)
        let data = try Data(contentsOf: url)
        guard let text = String(data: data, encoding: .utf8) else {
            throw VectorFileError("\(name) is not UTF-8")
        }
        var blocks: [VectorBlock] = []
        var fields: [(key: String, value: String)] = []
        var start = 0
        func endBlock() {
            if !fields.isEmpty { blocks.append(VectorBlock(file: name, line: start, fields: fields)) }
            fields = []
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("#") { continue }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                endBlock()
                continue
            }
            guard let separator = line.range(of: " = ") else {
                throw VectorFileError("\(name):\(index + 1): expected KEY = value")
            }
            let key = String(line[..<separator.lowerBound])
            guard !fields.contains(where: { $0.key == key }) else {
                throw VectorFileError("\(name):\(index + 1): \(key) twice in one block")
            }
            if fields.isEmpty { start = index + 1 }
            fields.append((key, String(line[separator.upperBound...])))
        }
        endBlock()
        guard !blocks.isEmpty else { throw VectorFileError("\(name) holds no vectors") }
        return blocks
    }

    /// Lower- or upper-case hex without separators, or nil.
    public static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Lower-case hex of `bytes`.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
