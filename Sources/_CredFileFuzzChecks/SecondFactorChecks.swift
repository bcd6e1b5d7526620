import CredFile

extension FuzzChecks {
    /// FuzzSecondFactor: what SPEC §14 parses. First byte even: the rest is a users file
    /// (liboath's format) — `SecondFactor.usersFileLines` never traps and agrees with a
    /// naive reading (lines at LF, a CR before it dropped, fields at spaces and tabs, blank
    /// and `#` lines skipped, 4 to 7 fields, type `HOTP/T30` or `HOTP/T30/6` in any case, a
    /// UTF-8 user, PIN `-`, an even count of 2 to 256 hex digits, no user twice): the same
    /// users on the same lines, or a `malformedFile` error naming the first bad line as
    /// `u.oath:N:`. Odd: the rest is what a caller sent with `otp-append` —
    /// `appendedCode` splits off exactly the last 6 bytes when they are digits and
    /// something comes before them, and a message never quotes the input.
    public static func secondFactor(_ input: [UInt8]) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let rest = Array(input.dropFirst())
        if selector % 2 == 1 {
            let (count, code) = SecondFactor.appendedCode(rest)
            let digit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
            let splits = rest.count > 6 && rest.suffix(6).allSatisfy(digit)
            try expect(code == (splits ? Array(rest.suffix(6)) : nil), "otp-append: the code split differs")
            try expect(count == (splits ? rest.count - 6 : rest.count), "otp-append: the password length differs")
            return
        }
        let naive = naiveUsersFile(rest)
        do {
            let lines = try SecondFactor.usersFileLines(parsing: rest, path: "u.oath")
            guard case .success(let expected) = naive else {
                throw FuzzFailure(description: "users file: accepted, but a naive reading refuses a line")
            }
            try expect(lines.map(\.line) == expected.map(\.0), "users file: the line numbers differ")
            try expect(lines.map(\.user) == expected.map(\.1), "users file: the users differ")
        } catch let error as CredFileError {
            guard case .failure(let line) = naive else {
                throw FuzzFailure(description: "users file: refused (\(error.message)), but a naive reading accepts it")
            }
            try expect(error.code == .malformedFile, "users file: not a malformedFile error")
            try expect(error.message.hasPrefix("u.oath:\(line): "), "users file: the error names another line")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure(description: "users file: an unexpected error")
        }
    }

    private enum NaiveUsersFile { case success([(Int, [UInt8])]), failure(Int) }

    private static func naiveUsersFile(_ bytes: [UInt8]) -> NaiveUsersFile {
        var lines: [[UInt8]] = [[]]
        for byte in bytes {
            if byte == 0x0A { lines.append([]) } else { lines[lines.count - 1].append(byte) }
        }
        if lines.last == [] { lines.removeLast() }
        var users: [(Int, [UInt8])] = []
        for (index, raw) in lines.enumerated() {
            var line = raw
            if line.last == 0x0D { line.removeLast() }
            var fields: [[UInt8]] = []
            var field: [UInt8] = []
            for byte in line + [0x20] {
                if byte == 0x20 || byte == 0x09 {
                    if !field.isEmpty { fields.append(field) }
                    field = []
                } else {
                    field.append(byte)
                }
            }
            guard let type = fields.first, type.first != UInt8(ascii: "#") else { continue }
            let upper = type.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            let hex = { (b: UInt8) in (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66) }
            guard (4...7).contains(fields.count),
                upper == Array("HOTP/T30".utf8) || upper == Array("HOTP/T30/6".utf8),
                String(validating: fields[1], as: UTF8.self) != nil, fields[2] == [UInt8(ascii: "-")],
                fields[3].count % 2 == 0, (2...256).contains(fields[3].count), fields[3].allSatisfy(hex),
                !users.contains(where: { $0.1 == fields[1] })
            else { return .failure(index + 1) }
            users.append((index + 1, fields[1]))
        }
        return .success(users)
    }
}
