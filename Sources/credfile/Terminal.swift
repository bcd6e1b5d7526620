import CCredFile
import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// Where the CLI reads and writes. `Terminal.standard` is the real process; tests build
/// their own to run commands in-process.
struct Terminal {
    /// The longest line of standard input that is not a password (an `import` line):
    /// SPEC §2's longest line.
    static let inputLineLimit = 65_536

    /// Reads one line from standard input, its ending removed; nil at end of input.
    /// Throws `tooLong`, without reading further, when the line is longer than `limit`
    /// bytes (without its ending).
    var readInputLine: (_ limit: Int, _ tooLong: CredFileError) throws -> [UInt8]?
    /// Reads one line from the terminal with echo off, after showing `prompt` there;
    /// throws `tooLong` past `PasswordRules.maximumCount` bytes.
    var readSecret: (_ prompt: String, _ tooLong: CredFileError) throws -> [UInt8]
    /// Shows `prompt` (for a username on the login screens).
    var showPrompt: (String) -> Void
    /// Whether standard input is a terminal (then passwords are prompted for).
    var inputIsTerminal: Bool
    /// Whether standard error is a terminal (then a progress bar is drawn).
    var errorIsTerminal: Bool
    /// Writes to standard output.
    var write: (String) -> Void
    /// Writes to standard error.
    var writeError: (String) -> Void
    /// Environment variables (for the locale).
    var environment: [String: String]
    /// Writes out what ``write`` buffered; throws ``CredFileError/Code/io`` when
    /// standard output could not take it (or an earlier part of it): a full disk, a
    /// closed terminal. Run once, by the CLI, after the command.
    var flushOutput: () throws -> Void = {}
    /// Whether the kernel runs this process secure-exec (`AT_SECURE`: a set-user-ID or
    /// set-group-ID copy run by someone else); then credfile refuses to run.
    var isSecureExec = false

    /// One line of standard input, its ending removed; nil at end of input.
    /// - Throws: `tooLong` when the line is longer than `limit` bytes.
    func readLine(
        limit: Int = Terminal.inputLineLimit,
        tooLong: CredFileError = .usage("a line of standard input is longer than \(Terminal.inputLineLimit) bytes")
    ) throws -> [UInt8]? {
        try readInputLine(limit, tooLong)
    }

    /// The process's own standard input, output, error and `/dev/tty`.
    static var standard: Terminal {
        let output = StandardOutput.shared
        return Terminal(
            readInputLine: { try BoundedReader.standardInput.readLine(limit: $0, tooLong: $1) },
            readSecret: {
                output.flush(); return try NoEchoPrompt.read(prompt: $0, tooLong: $1)
            },
            showPrompt: {
                output.write($0); output.flush()
            },
            inputIsTerminal: isatty(0) == 1,
            errorIsTerminal: isatty(2) == 1,
            write: { output.write($0) },
            writeError: {
                output.flush(); _ = writeAll(2, Array($0.utf8))
            },
            environment: processEnvironment(),
            flushOutput: { try output.finish() },
            isSecureExec: credfile_is_secure_exec() != 0)
    }

    /// Standard output, buffered: `check` on a large file prints many lines. The first
    /// failed write is kept (and nothing more is written): the command's output is
    /// incomplete, which ``finish()`` reports, so `credfile list > /dev/full` cannot
    /// exit 0.
    final class StandardOutput {
        nonisolated(unsafe) static let shared = StandardOutput()
        private var buffer: [UInt8] = []
        /// The errno of the first write that failed.
        private var failure: Int32?

        func write(_ text: String) {
            guard failure == nil else { return }
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { flush() }
        }

        func flush() {
            if failure == nil { failure = Terminal.writeAll(1, buffer) }
            buffer.removeAll(keepingCapacity: true)
        }

        /// Flushes; throws ``CredFileError/Code/io`` when any write to standard output failed.
        func finish() throws {
            flush()
            if let failure {
                throw CredFileError(
                    .io, "cannot write to standard output: write: \(String(cString: strerror(failure)))")
            }
        }
    }

    /// Writes all of `bytes` to `fd`; the errno of a failed write, else nil.
    fileprivate static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        do {
            try Syscall.writeAll(fd, bytes, name: "write-output")
            return nil
        } catch {
            return error.errno
        }
    }

    private static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let pair = String(cString: entry)
            if let eq = pair.firstIndex(of: "=") {
                result[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
            }
            pointer += 1
        }
        return result
    }
}

/// Reads a file descriptor with a bound on what it keeps: a line or the whole input
/// longer than the limit is refused as soon as that is certain, without reading the rest
/// (1 GB without a newline costs the limit, not 1 GB).
///
/// It never consumes more of the descriptor than the lines it returns, so that commands
/// run one after another on one standard input (`credfile add … && credfile add …`) each
/// get their own line, as with the shell's `read`: a terminal and a seekable file are
/// read in blocks (a terminal gives at most one line per `read`; a file is `lseek`ed back
/// to the end of the line); a pipe, which cannot be un-read, a byte per `read`, at most
/// the limit plus the line ending.
final class BoundedReader {
    /// The process's standard input (every reader of fd 0 goes through this one).
    nonisolated(unsafe) static let standardInput = BoundedReader(fd: 0)
    /// How much one `read` asks for.
    static let blockSize = 4096

    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    /// Whether a `read` may ask for a whole block (see the type's comment).
    private let readsBlocks: Bool
    /// Whether what was read past a line is given back with `lseek`.
    private let seeksBack: Bool

    init(fd: Int32) {
        self.fd = fd
        seeksBack = lseek(fd, 0, SEEK_CUR) >= 0
        readsBlocks = seeksBack || isatty(fd) == 1
    }

    /// One line without its LF (and a CR right before it); nil at end of input with
    /// nothing read. A last line without LF is returned as it is (a lone CR stays data).
    /// - Parameters:
    ///   - limit: the most bytes the line may hold without its ending.
    ///   - tooLong: what to throw when it holds more.
    /// - Throws: `tooLong`; ``CredFileError/Code/io`` when `read` fails.
    func readLine(limit: Int, tooLong: @autoclosure () -> CredFileError = BoundedReader.tooLong) throws -> [UInt8]? {
        var scanned = start
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start && buffer[end - 1] == 0x0D { end -= 1 }
                guard end - start <= limit else { throw tooLong() }
                let line = Array(buffer[start..<end])
                start = newline + 1
                giveBackUnread()
                compact()
                return line
            }
            scanned = buffer.count
            // limit bytes and a CR may still be followed by the LF; more cannot.
            guard buffer.count - start <= limit + 1 else { throw tooLong() }
            if try atEnd || fill() == 0 {
                atEnd = true
                guard buffer.count > start else { return nil }
                guard buffer.count - start <= limit else { throw tooLong() }
                let line = Array(buffer[start...])
                start = buffer.count
                compact()
                return line
            }
        }
    }

    /// Everything up to the end of input.
    /// - Throws: `tooLong` when there are more than `limit` bytes (found after reading
    ///   at most one block past the limit); ``CredFileError/Code/io`` when `read` fails.
    func readToEOF(limit: Int, tooLong: @autoclosure () -> CredFileError = BoundedReader.tooLong) throws -> [UInt8] {
        while !atEnd {
            guard buffer.count - start <= limit else { throw tooLong() }
            // All of the input is consumed anyway: blocks, even from a pipe.
            if try fill(block: true) == 0 { atEnd = true }
        }
        guard buffer.count - start <= limit else { throw tooLong() }
        defer { start = buffer.count; compact() }
        return Array(buffer[start...])
    }

    /// A seekable input is moved back to just after the line returned.
    private func giveBackUnread() {
        guard seeksBack, buffer.count > start else { return }
        if lseek(fd, off_t(start - buffer.count), SEEK_CUR) >= 0 {
            buffer.removeLast(buffer.count - start)
            atEnd = false
        }
    }

    /// Reads one block (one byte from a pipe, unless `block`) onto the end of the buffer;
    /// returns how many bytes came.
    private func fill(block: Bool = false) throws -> Int {
        let old = buffer.count
        let size = readsBlocks || block ? Self.blockSize : 1
        buffer.append(contentsOf: repeatElement(0, count: size))
        let read = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SyscallError) in
                try Syscall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[old...]), name: "read-input")
            }
        }
        switch read {
        case .success(let n):
            buffer.removeLast(size - n)
            return n
        case .failure(let error):
            buffer.removeLast(size)
            throw CredFileError(.io, "cannot read the input: read: \(String(cString: strerror(error.errno)))")
        }
    }

    private func compact() {
        if start == buffer.count {
            Self.wipe(&buffer)
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    /// Zeroes the bytes (what was read may be a password) before they are let go.
    private static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { _ = memset(base, 0, raw.count) }
        }
    }

    /// The default refusal: a usage error (exit 2) that names no content.
    static let tooLong = CredFileError.usage("the input is longer than allowed")

    deinit { Self.wipe(&buffer) }
}

/// A password prompt on `/dev/tty` with echo off, restored afterwards whatever signal
/// comes (SPEC §5): SIGINT, SIGTERM, SIGHUP restore the terminal and end the process
/// (128 + the signal); SIGTSTP restores it and stops, and on SIGCONT echo goes off again
/// and the prompt is shown again (as sudo does); SIGQUIT and crashes restore it through
/// the process-wide handlers of `credfile_harden_process`. The handlers are C
/// (`CCredFile/process.c`), so only async-signal-safe calls run in them.
enum NoEchoPrompt {
    static func read(prompt: String, tooLong: CredFileError) throws -> [UInt8] {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw CredFileError(.io, "cannot open the terminal for a password prompt") }
        defer { Glibc.close(fd) }
        var original = termios()
        let haveTermios = tcgetattr(fd, &original) == 0
        if haveTermios {
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            // The handlers know the prompt before echo goes off: a signal in between
            // restores what is already there.
            _ = withUnsafeBytes(of: &original) { saved in
                withUnsafeBytes(of: &silent) { quiet in
                    credfile_prompt_begin(fd, saved.baseAddress, quiet.baseAddress, UInt(saved.count), prompt)
                }
            }
            _ = tcsetattr(fd, TCSAFLUSH, &silent)
        }
        // The prompt only once echo is off (as getpass does): whatever is typed after
        // it appears is neither echoed nor thrown away by the TCSAFLUSH above.
        _ = prompt.withCString { Glibc.write(fd, $0, strlen($0)) }
        defer {
            if haveTermios {
                _ = tcsetattr(fd, TCSAFLUSH, &original)
                credfile_prompt_end()
            }
            _ = Glibc.write(fd, "\n", 1)
        }
        return try BoundedReader(fd: fd).readLine(limit: PasswordRules.maximumCount, tooLong: tooLong) ?? []
    }
}
