import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `credfile` running on a pseudo-terminal, driven the way `expect` drives a program:
/// wait for a prompt, type an answer, read what the terminal shows.
///
/// How the child gets a controlling terminal (so that its `open("/dev/tty")` works):
/// the test process has threads, so forking in Swift (`forkpty`) is unsafe; Foundation's
/// `Process` can hand the child the pty slave as stdin/stdout/stderr but cannot make it
/// the child's controlling terminal. So we call `posix_spawn` ourselves with glibc's
/// `POSIX_SPAWN_SETSID` flag: in the child glibc runs `setsid()` *before* the file
/// actions, and the file action that opens the slave by path (without `O_NOCTTY`) then
/// makes it the controlling terminal of the new session (Linux acquires a controlling
/// tty on the first terminal a session leader without one opens). No wrapper process
/// (`setsid -c`, `script`) stands between the test and credfile, so the pid we wait for
/// and kill on a timeout is credfile's own.
final class PseudoTerminal {
    enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        case timedOut(waitingFor: String, transcript: String)
        case ended(waitingFor: String, transcript: String)

        var description: String {
            switch self {
            case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
            case .timedOut(let text, let transcript):
                "timed out waiting for \(text.debugDescription); the terminal showed:\n\(transcript)"
            case .ended(let text, let transcript):
                "the terminal closed before \(text.debugDescription); it showed:\n\(transcript)"
            }
        }
    }

    let pid: pid_t
    private let master: Int32
    /// Every byte the terminal showed: output and echo.
    private(set) var transcript: [UInt8] = []
    private var consumed = 0
    private var ended = false
    private var exitCode: Int32?

    /// Starts `executable arguments` on a new pty with exactly `environment`.
    init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw Failure.system("openpty", errno) }
        // Other tests spawn processes concurrently: keep both ends out of their children.
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        defer { close(slave) }  // the parent never uses the slave: EOF on the master then means the child is done
        var name = [CChar](repeating: 0, count: 256)
        let nameError = ttyname_r(slave, &name, name.count)
        guard nameError == 0 else {
            close(master)
            throw Failure.system("ttyname_r", nameError)
        }

        do {
            // A new session (`setsid()` before the file actions), so the slave opened by
            // path becomes the child's controlling terminal.
            pid = try ChildProcess.spawn(executable, arguments, environment: environment, newSession: true) { actions in
                posix_spawn_file_actions_addopen(&actions, 0, name, O_RDWR, 0)
                posix_spawn_file_actions_adddup2(&actions, 0, 1)
                posix_spawn_file_actions_adddup2(&actions, 0, 2)
            }
        } catch {
            close(master)
            throw error
        }
        self.master = master
    }

    deinit {
        if exitCode == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        close(master)
    }

    /// Whether the terminal echoes what is typed now (the pty's one termios, read through
    /// the master side; it outlives the child).
    var echoIsOn: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// Sends `signal` to the child.
    func send(signal: Int32) { kill(pid, signal) }

    /// The transcript as text, with the terminal's CRLF turned back into LF.
    var text: String {
        String(decoding: transcript, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// Whether the terminal ever showed `string` (raw bytes, so no normalization hides it).
    func showed(_ string: String) -> Bool { Self.find(Array(string.utf8), in: transcript, from: 0) != nil }

    /// Waits until the terminal shows `text` after what earlier calls matched.
    func expect(_ text: String, timeout: Duration = .seconds(10)) throws {
        let needle = Array(text.utf8)
        let deadline = ContinuousClock.now + timeout
        while true {
            if let end = Self.find(needle, in: transcript, from: consumed) {
                consumed = end
                return
            }
            if ended { throw Failure.ended(waitingFor: text, transcript: self.text) }
            if !readMore(until: deadline) { throw Failure.timedOut(waitingFor: text, transcript: self.text) }
        }
    }

    /// Types `text` (add the "\n" yourself).
    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure.system("write", errno) }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Reads everything up to the end of output and returns the exit status (128 + N for
    /// a signal). A child still running at `timeout` is killed, and that is an error.
    func finish(timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while !ended && readMore(until: deadline) {}
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR {
                Issue.record("waitpid: \(String(cString: strerror(errno)))", sourceLocation: sourceLocation)
                exitCode = -1
                return -1
            }
            if ContinuousClock.now > deadline {
                Issue.record(
                    "credfile did not exit in time; the terminal showed:\n\(text)", sourceLocation: sourceLocation)
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(2_000)
        }
        let (exitStatus, signal) = ChildProcess.decode(waitStatus: status)
        let code = exitStatus ?? 128 + (signal ?? 0)
        exitCode = code
        return code
    }

    /// Reads what is available, waiting at most until `deadline`; false at the deadline
    /// or at the end of output (EIO on Linux once no process holds the slave open).
    private func readMore(until deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return false }
        let milliseconds = Int32(
            min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, milliseconds)
        if ready < 0 { return errno == EINTR }
        if ready == 0 { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(master, &buffer, buffer.count)
        if n < 0 && errno == EINTR { return true }
        guard n > 0 else {
            ended = true
            return false
        }
        transcript.append(contentsOf: buffer[..<n])
        return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty else { return start }
        guard haystack.count - start >= needle.count else { return nil }
        for i in start...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i + needle.count
        }
        return nil
    }
}
