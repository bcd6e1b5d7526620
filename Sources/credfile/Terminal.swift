import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// Where the CLI reads and writes. `Terminal.standard` is the real process; tests build
/// their own to run commands in-process.
struct Terminal {
    /// Reads one line from standard input, its ending removed; nil at end of input.
    var readLine: () -> [UInt8]?
    /// Reads one line from the terminal with echo off, after showing `prompt` there.
    var readSecret: (_ prompt: String) throws -> [UInt8]
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

    /// The process's own standard input, output, error and `/dev/tty`.
    static var standard: Terminal {
        let output = StandardOutput.shared
        return Terminal(
            readLine: { FileDescriptorReader.standardInput.readLine() },
            readSecret: { output.flush(); return try NoEchoPrompt.read(prompt: $0) },
            showPrompt: { output.write($0); output.flush() },
            inputIsTerminal: isatty(0) == 1,
            errorIsTerminal: isatty(2) == 1,
            write: { output.write($0) },
            writeError: { output.flush(); writeAll(2, Array($0.utf8)) },
            environment: processEnvironment())
    }

    /// Standard output, buffered: `check` on a large file prints many lines.
    final class StandardOutput {
        nonisolated(unsafe) static let shared = StandardOutput()
        private var buffer: [UInt8] = []

        func write(_ text: String) {
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { flush() }
        }

        func flush() {
            Terminal.writeAll(1, buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    fileprivate static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var bytes = bytes[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
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

/// Reads lines from a file descriptor, a byte at a time, so nothing past the line is
/// consumed (the next line may be read by another reader of the same descriptor).
final class FileDescriptorReader {
    nonisolated(unsafe) static let standardInput = FileDescriptorReader(fd: 0)
    let fd: Int32
    init(fd: Int32) { self.fd = fd }

    /// One line without its LF (and a CR before it); nil at end of input with nothing read.
    func readLine() -> [UInt8]? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return line.isEmpty ? nil : line }
            if byte == 0x0A { break }
            line.append(byte)
        }
        if line.last == 0x0D { line.removeLast() }
        return line
    }
}

/// A password prompt on `/dev/tty` with echo off, restored afterwards (also on SIGINT).
enum NoEchoPrompt {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var ttyFD: Int32 = -1

    static func read(prompt: String) throws -> [UInt8] {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw CredFileError(.io, "cannot open the terminal for a password prompt") }
        defer { Glibc.close(fd) }
        var original = termios()
        let haveTermios = tcgetattr(fd, &original) == 0
        if haveTermios {
            saved = original
            ttyFD = fd
            signal(SIGINT) { signal in
                _ = tcsetattr(NoEchoPrompt.ttyFD, TCSAFLUSH, &NoEchoPrompt.saved)
                _ = Glibc.write(NoEchoPrompt.ttyFD, "\n", 1)
                _exit(128 + signal)
            }
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            _ = tcsetattr(fd, TCSAFLUSH, &silent)
        }
        // The prompt only once echo is off (as getpass does): whatever is typed after
        // it appears is neither echoed nor thrown away by the TCSAFLUSH above.
        _ = prompt.withCString { Glibc.write(fd, $0, strlen($0)) }
        defer {
            if haveTermios {
                _ = tcsetattr(fd, TCSAFLUSH, &original)
                signal(SIGINT, SIG_DFL)
                ttyFD = -1
            }
            _ = Glibc.write(fd, "\n", 1)
        }
        return FileDescriptorReader(fd: fd).readLine() ?? []
    }
}
