import CredFile

extension FuzzChecks {
    /// FuzzLoginRequests: the parsers of the outside callers' wire formats (SPEC §7).
    /// The first byte chooses: even → the rest is what a checkpassword caller wrote on
    /// fd 3; odd → the rest is what Squid wrote to a helper, LF-separated request lines.
    public static func loginRequests(_ input: [UInt8]) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let rest = Array(input.dropFirst())
        if selector % 2 == 0 {
            try checkpasswordFraming(rest)
        } else {
            for line in rest.split(separator: 0x0A, omittingEmptySubsequences: false) {
                try squidLine(Array(line))
            }
        }
    }

    /// fd 3: accepted exactly when it is at most 512 bytes, starts with a non-empty login
    /// and a NUL, and has a second NUL; then login and password are the bytes before
    /// those NULs. A refusal is a usage error (exit 2) whose message quotes nothing.
    static func checkpasswordFraming(_ bytes: [UInt8]) throws(FuzzFailure) {
        let first = bytes.firstIndex(of: 0)
        let second = first.flatMap { bytes[($0 + 1)...].firstIndex(of: 0) }
        let shouldAccept = bytes.count <= CheckpasswordRequest.maximumCount && (first ?? 0) > 0 && second != nil
        let parsed: Result<CheckpasswordRequest, CredFileError>
        do throws(CredFileError) { parsed = .success(try CheckpasswordRequest(parsing: bytes)) } catch {
            parsed = .failure(error)
        }
        switch parsed {
        case .success(let request):
            try expect(shouldAccept, "accepted a request that breaks the framing (\(bytes.count) bytes)")
            guard let first, let second else { return }
            try expect(request.username == Array(bytes[..<first]), "the login is not the bytes before the first NUL")
            let password = request.password.withUnsafeBytes { Array($0) }
            try expect(password == Array(bytes[(first + 1)..<second]), "the password is not the bytes between the NULs")
            try expect("\(request)" == "CheckpasswordRequest(redacted)", "the description shows more than 'redacted'")
        case .failure(let error):
            try expect(!shouldAccept, "refused a well-framed request: \(error.message)")
            try expect(error.code == .usage, "a framing error is \(error.code), not usage")
            try expect(error.message.hasPrefix("the request on fd 3"), "unexpected message: \(error.message)")
        }
    }

    /// A Squid line: never traps; a line longer than the limit (without a CR before its
    /// end) is unreadable and one within it is judged by its fields; a request's fields
    /// survive escaping every byte as %XX and parsing again, as long as the escaped line
    /// still fits the limit (three bytes a byte: a request of more than a third of it
    /// does not), and past the limit the escaped line is unreadable for its length;
    /// without any `%`, fields are the bytes as written; every answer is one line ending
    /// in LF, starting with the channel ID when there is one.
    static func squidLine(_ line: [UInt8]) throws(FuzzFailure) {
        let limit = SquidHelperProtocol.maximumLineLength
        let length = line.last == 0x0D ? line.count - 1 : line.count
        switch SquidHelperProtocol.parse(line) {
        case .unreadable(let channel, let reason):
            if length > limit {
                try expect(reason.contains("longer than"), "a line over the limit is refused for another reason")
            }
            try checkAnswerLines(channel: channel, reason: reason)
        case .request(let request):
            try expect(length <= limit, "a request of \(length) bytes, over the \(limit)-byte limit, was read")
            let password = request.password.withUnsafeBytes { Array($0) }
            var escaped: [UInt8] = request.channel.map { Array($0.utf8) + [0x20] } ?? []
            escaped += percentEscaped(request.username) + [0x20] + percentEscaped(password)
            switch SquidHelperProtocol.parse(escaped) {
            case .request(let again):
                try expect(
                    escaped.count <= limit, "an escaped request of \(escaped.count) bytes, over the limit, was read")
                try expect(again.channel == request.channel, "the channel changed after escaping")
                try expect(again.username == request.username, "the user changed after escaping")
                try expect(
                    again.password.withUnsafeBytes { Array($0) } == password, "the password changed after escaping")
            case .unreadable(let channel, let reason):
                try expect(escaped.count > limit, "a fully escaped request of \(escaped.count) bytes does not parse")
                try expect(
                    reason.contains("longer than") && channel == request.channel,
                    "an escaped request over the limit is refused for another reason, or loses its channel")
            }
            var body = line[...]
            if body.last == 0x0D { body = body.dropLast() }
            if !body.contains(UInt8(ascii: "%")) {
                let fields = body.split(separator: 0x20, omittingEmptySubsequences: false)
                try expect(
                    Array(fields[fields.count - 2]) == request.username && Array(fields[fields.count - 1]) == password,
                    "unescaped fields are not the bytes as written")
            }
            try checkAnswerLines(channel: request.channel, reason: "x")
        }
    }

    private static func checkAnswerLines(channel: String?, reason: String) throws(FuzzFailure) {
        for answer in [SquidHelperProtocol.Answer.ok, .err, .bh(message: reason)] {
            let bytes = answer.line(channel: channel)
            try expect(
                bytes.last == 0x0A && bytes.filter { $0 == 0x0A || $0 == 0x0D }.count == 1,
                "an answer is not exactly one line")
            if let channel {
                try expect(bytes.starts(with: Array((channel + " ").utf8)), "the answer does not repeat the channel")
            }
        }
    }

    private static func percentEscaped(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        return bytes.flatMap { [UInt8(ascii: "%"), hex[Int($0 >> 4)], hex[Int($0 & 15)]] }
    }
}
