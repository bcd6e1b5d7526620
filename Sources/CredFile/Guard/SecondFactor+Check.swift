#if canImport(Glibc)
import Glibc
#endif

/// What `credfile check` says of the secrets file (SPEC §14): a file its group or others
/// may read or write, a line for a user the credential file lacks, a bad line by number.
extension SecondFactor {
    /// One problem of ``otpFile``.
    public struct FileProblem: Sendable, Equatable {
        /// What is wrong.
        public enum Detail: Sendable, Equatable {
            /// Its group or others may read or write the file (`mode`: the permission bits):
            /// whoever reads a secret makes its codes (error).
            case accessibleToOthers(mode: UInt32)
            /// A line for `user`, whom the credential file lacks (warning: it lets no one in,
            /// and a user of that name added later would have a second factor already).
            case unknownUser([UInt8])
            /// The line cannot be read (error): `reason`, as the parser says it. Every
            /// login of a user with a second factor fails while the file has one.
            case malformedLine(reason: String)
        }

        /// The 1-based line; 0 for the whole file.
        public let line: Int
        /// Error or warning.
        public let severity: Finding.Severity
        /// What is wrong.
        public let detail: Detail

        /// A sentence in English, without any secret.
        public var message: String {
            switch detail {
            case .accessibleToOthers(let mode):
                "the secrets file can be read or written by its group or others (mode 0\(String(mode, radix: 8))); "
                    + "whoever reads a secret makes its codes: chmod 600"
            case .unknownUser(let user):
                "a secret for user \(Escaped.quotedName(user)), whom the credential file lacks"
            case .malformedLine(let reason): reason
            }
        }
    }

    /// The problems of ``otpFile``, in line order after the file's own; none when it does
    /// not exist.
    /// - Parameter isUser: whether the credential file has an entry of that name.
    /// - Throws: ``CredFileError/Code/io`` when the file cannot be read; what `isUser` throws.
    public func fileProblems(isUser: ([UInt8]) throws -> Bool) throws -> [FileProblem] {
        guard let info = try Syscall.lstat(otpFile) else { return [] }
        var problems: [FileProblem] = []
        let mode = UInt32(info.st_mode) & 0o7777
        if mode & 0o077 != 0 {
            problems.append(FileProblem(line: 0, severity: .error, detail: .accessibleToOthers(mode: mode)))
        }
        let parsed: OTPFile?
        do {
            parsed = try secrets()
        } catch let error as CredFileError where error.code == .malformedFile {
            // "PATH:LINE: reason", as the parser names the first bad line.
            let place = Escaped.path(otpFile) + ":"
            let rest = error.message.hasPrefix(place) ? error.message.dropFirst(place.count) : Substring(error.message)
            let number = Int(rest.prefix { $0 != ":" }) ?? 0
            let reason = number > 0 ? String(rest.drop { $0 != ":" }.dropFirst().drop { $0 == " " }) : error.message
            problems.append(FileProblem(line: number, severity: .error, detail: .malformedLine(reason: reason)))
            return problems
        }
        for entry in parsed?.entries ?? [] where try !isUser(entry.user) {
            problems.append(FileProblem(line: entry.line, severity: .warning, detail: .unknownUser(entry.user)))
        }
        return problems
    }
}
