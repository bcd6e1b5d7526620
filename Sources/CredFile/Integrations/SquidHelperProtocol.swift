/// Squid's basic-auth helper protocol (`auth_param basic program …`, SPEC §7): one request
/// a line, answered by one line.
///
///     request = [channel-ID SP] user SP password      (each field URL-escaped, %XX)
///     answer  = [channel-ID SP] ("OK" / "ERR" / "BH message=\"…\"") LF
///
/// With `auth_param basic … concurrency=N` (N > 0) Squid puts a channel ID (decimal) in
/// front of each request and matches answers by it, so they may come out of order.
/// Fields are URL-escaped by Squid, so a request has exactly two fields, or three when
/// the first is a channel ID; that count tells the two forms apart. (Squid's
/// `key_extras`, which appends more fields, is not supported: such a line is answered `BH`.)
public enum SquidHelperProtocol {
    /// The longest request line read, without its LF (Squid's helpers use 8 KiB buffers;
    /// two 4,096-byte fields escaped as %XX fit).
    public static let maximumLineLength = 32_768
    /// ``maximumLineLength``: a byte length, not a count of lines.
    @available(*, deprecated, renamed: "maximumLineLength")
    public static var maximumLineCount: Int { maximumLineLength }
    /// The longest channel ID accepted, in digits.
    static let maximumChannelDigits = 20

    /// One request: a login to check.
    public struct Request: Sendable, CustomStringConvertible {
        /// The channel ID to repeat in the answer (digits), nil without concurrency.
        public let channel: String?
        /// The login, unescaped (raw bytes; browsers send UTF-8 or Latin-1).
        public let username: [UInt8]
        /// The password, unescaped.
        public let password: SecretBytes

        /// `Request(channel: …, redacted)`: the password is never printed.
        public var description: String { "Request(channel: \(channel ?? "none"), redacted)" }
    }

    /// What a line is: a request, or a line the helper cannot read (answered `BH`).
    public enum Line: Sendable {
        /// A login to check.
        case request(Request)
        /// A line that is not a request; `channel` is repeated in the `BH` answer when the
        /// line started with one. `reason` never quotes the line.
        case unreadable(channel: String?, reason: String)
    }

    /// The three answers.
    public enum Answer: Sendable, Equatable {
        /// The login is good.
        case ok
        /// The login is not good (the same for an unknown user and a wrong password).
        case err
        /// "Broken helper": the request could not be handled (bad line, unreadable file).
        case bh(message: String)

        /// The answer line, with its LF, after `channel` when there is one.
        public func line(channel: String?) -> [UInt8] {
            var text = channel.map { $0 + " " } ?? ""
            switch self {
            case .ok: text += "OK"
            case .err: text += "ERR"
            case .bh(let message): text += "BH message=\"" + SquidHelperProtocol.quoted(message) + "\""
            }
            return Array((text + "\n").utf8)
        }
    }

    /// Parses one line, without its LF (a CR before it is dropped). The line holds a
    /// password: the one copy made of it here is zeroed before this returns (the
    /// request's password is in zeroed-on-release storage).
    public static func parse(_ line: some Collection<UInt8>) -> Line {
        var copy = Array(line)
        defer { copy.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        return parse(bytes: copy[...])
    }

    /// ``parse(_:)`` of the bytes of a line.
    private static func parse(bytes: ArraySlice<UInt8>) -> Line {
        var line = bytes
        if line.last == 0x0D { line = line.dropLast() }
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
        let firstIsChannel =
            fields.count > 2 && !fields[0].isEmpty && fields[0].count <= maximumChannelDigits
            && fields[0].allSatisfy { (0x30...0x39).contains($0) }
        let channel = firstIsChannel ? String(decoding: fields[0], as: UTF8.self) : nil
        guard line.count <= maximumLineLength else {
            return .unreadable(channel: channel, reason: "request line longer than \(maximumLineLength) bytes")
        }
        let login = firstIsChannel ? fields.dropFirst() : fields[...]
        guard login.count == 2 else {
            return .unreadable(
                channel: channel,
                reason: fields.count > 2 && !firstIsChannel
                    ? "the channel ID is not a number" : "expected 'user password' (URL-escaped)")
        }
        guard let username = unescape(login[login.startIndex]) else {
            return .unreadable(channel: channel, reason: "bad %-escape in the user name")
        }
        guard var password = unescape(login[login.startIndex + 1]) else {
            return .unreadable(channel: channel, reason: "bad %-escape in the password")
        }
        defer { password.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        return .request(Request(channel: channel, username: username, password: SecretBytes(password)))
    }

    /// RFC 1738 unescaping as Squid's `rfc1738_unescape`: `%XX` is the byte 0xXX;
    /// anything else stands for itself. A `%` without two hex digits is an error (nil).
    static func unescape(_ field: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(field.count)
        var index = field.startIndex
        while index < field.endIndex {
            let byte = field[index]
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                index += 1
                continue
            }
            guard let high = hexValue(field[safe: index + 1]), let low = hexValue(field[safe: index + 2])
            else { return nil }
            out.append(high << 4 | low)
            index += 3
        }
        return out
    }

    private static func hexValue(_ byte: UInt8?) -> UInt8? {
        switch byte {
        case .some(let b) where (0x30...0x39).contains(b): b - 0x30
        case .some(let b) where (0x41...0x46).contains(b): b - 0x41 + 10
        case .some(let b) where (0x61...0x66).contains(b): b - 0x61 + 10
        default: nil
        }
    }

    /// A message for a `message="…"` value: `"` and `\` escaped, controls dropped.
    static func quoted(_ message: String) -> String {
        var out = ""
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\"", "\\": out += "\\" + String(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension ArraySlice where Element == UInt8 {
    fileprivate subscript(safe index: Int) -> UInt8? {
        indices.contains(index) ? self[index] : nil
    }
}
