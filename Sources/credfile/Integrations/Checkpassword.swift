import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension CommandContext {
    /// `credfile checkpassword FILE PROG [ARG…]`: the qmail checkpassword interface, as
    /// Dovecot 2.3's `passdb { driver = checkpassword }` calls it (SPEC §7). Reads
    /// `user\0password\0timestamp\0` (≤ 512 bytes) from fd 3. Granted: sets `USER` and
    /// execs PROG with its arguments (Dovecot's `checkpassword-reply`). Denied: exit 1.
    /// Misuse (no fd 3, bad framing): exit 2. Temporary failure (I/O, lock): exit 111.
    /// Errors are handled here rather than by the CLI's mapping, because the caller's
    /// codes differ from SPEC §5's.
    func checkpassword() -> ExitStatus {
        do {
            return try checkpasswordRequest()
        } catch let error as CredFileError {
            terminal.writeError("credfile: \(error)\n")
            return error.code == .usage ? .usage : .temporaryFailure
        } catch {
            terminal.writeError("credfile: \(error)\n")
            return .temporaryFailure
        }
    }

    private func checkpasswordRequest() throws -> ExitStatus {
        let requestFD: Int32 = 3
        guard fcntl(requestFD, F_GETFD) != -1 else {
            throw CredFileError.usage(
                "checkpassword: file descriptor 3 is not open (it is run by Dovecot or qmail, which write the login there)"
            )
        }
        var bytes = try BoundedReader(fd: requestFD).readToEOF(
            limit: CheckpasswordRequest.maximumCount,
            tooLong: CredFileError.usage(
                "checkpassword: the request on fd 3 is longer than \(CheckpasswordRequest.maximumCount) bytes"))
        defer { BoundedInput.zero(&bytes) }
        // Read once and closed (as qmail's checkpassword does): PROG, exec'd below, must
        // not inherit it, or it could read the password again (a regular file there can
        // be re-read from its start).
        close(requestFD)
        let request = try CheckpasswordRequest(parsing: bytes)
        guard let user = String(validating: request.username, as: UTF8.self) else {
            throw CredFileError.usage("checkpassword: the login is not valid UTF-8")
        }
        // Dovecot (and tcpserver before qmail) pass the client's address as TCPREMOTEIP.
        let client = clientAddress(environmentValue("TCPREMOTEIP"))
        // The store, and with it the guard database's connection, ends before PROG is
        // run (SQLite's descriptors are close-on-exec: PROG inherits none of them).
        let granted = try { () throws -> Bool in
            let store = try loginStore(service: "checkpassword")
            let password = request.password.withUnsafeBytes { Password(utf8: $0) }
            return try store.verify(
                usernameBytes: request.username, password: password, upgradeOnSuccess: false, client: client
            ).granted
        }()
        guard granted else { return .failure }
        let program = invocation.programArguments  // PROG and its ARGs, byte for byte
        // qmail's checkpassword sets USER for the program it runs; Dovecot's
        // checkpassword-reply passes it back as the user's canonical name.
        setenv("USER", user, 1)
        Terminal.StandardOutput.shared.flush()
        let arguments =
            program.map { bytes in
                // never empty: it holds the NUL
                (bytes + [0]).withUnsafeBytes { strdup($0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
            } + [nil]
        defer { arguments.forEach { free($0) } }
        // The parser guarantees PROG (validate refuses checkpassword without it).
        if program[0].contains(UInt8(ascii: "/")) {
            execv(arguments[0]!, arguments)
        } else {
            execvp(arguments[0]!, arguments)
        }
        let code = errno
        throw CredFileError(
            .io, "checkpassword: cannot run the program after a good login (execv: \(String(cString: strerror(code))))")
    }
}
