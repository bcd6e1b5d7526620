import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// A listening socket of `credfile serve` (SPEC §10): `--listen unix:PATH`, `--listen
/// HOST:PORT`, or one that systemd passed.
struct Listener {
    /// The listening descriptor (close-on-exec, non-blocking).
    let fd: Int32
    /// How people name it (`unix:/run/credfile/web.sock`, `127.0.0.1:9091`).
    let name: String
    let isUnixSocket: Bool
    /// The socket file this process created (removed at exit), if any.
    let createdPath: String?

    /// What `--listen` names.
    enum Address: Equatable {
        case unix(path: String)
        case tcp(IPAddress, port: UInt16)

        /// Parses `unix:PATH`, `HOST:PORT` or `[IPv6]:PORT` (HOST an address or `localhost`).
        /// - Throws: ``CredFileError/Code/usage`` naming what is wrong, never echoing it.
        init(parsing text: String) throws {
            if text.hasPrefix("unix:") {
                let path = String(text.dropFirst(5))
                guard path.hasPrefix("/") else {
                    throw CredFileError.usage("--listen unix:PATH needs an absolute PATH")
                }
                // sockaddr_un holds 108 bytes with the final NUL.
                guard path.utf8.count < 108 else {
                    throw CredFileError.usage("--listen unix:PATH: PATH is longer than 107 bytes")
                }
                self = .unix(path: path)
                return
            }
            let host: Substring
            let port: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                    throw CredFileError.usage("--listen takes unix:PATH, HOST:PORT or [IPv6]:PORT")
                }
                host = text[text.index(after: text.startIndex)..<close]
                port = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                    throw CredFileError.usage("--listen takes unix:PATH, HOST:PORT or [IPv6]:PORT")
                }
                host = text[..<colon]
                port = text[text.index(after: colon)...]
            }
            guard
                let address = host == "localhost"
                    ? IPAddress(parsing: Array("127.0.0.1".utf8)) : IPAddress(parsing: Array(host.utf8))
            else { throw CredFileError.usage("--listen: HOST must be an IP address or localhost") }
            guard port.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = UInt16(port), number > 0 else {
                throw CredFileError.usage("--listen: PORT must be a number from 1 to 65535")
            }
            self = .tcp(address, port: number)
        }
    }

    /// How a unix socket file is made.
    struct SocketFile {
        var mode: mode_t = 0o660
        var group: gid_t?
    }

    /// Binds and listens on `address`. A TCP address must be loopback unless `public`.
    /// A unix socket's stale file (a socket nobody listens on) is replaced; any other
    /// file there is refused. The socket file gets `file`'s group, then its mode.
    /// - Throws: ``CredFileError/Code/usage`` for a public address without `--listen-public`,
    ///   ``CredFileError/Code/io`` when the socket cannot be made.
    static func open(_ address: Address, file: SocketFile, allowPublic: Bool) throws -> Listener {
        switch address {
        case .tcp(let ip, let port):
            guard ip.isLoopback || allowPublic else {
                throw CredFileError.usage(
                    "--listen \(ip):\(port) is not a loopback address: add --listen-public to answer on it")
            }
            let name = ip.isIPv4 ? "\(ip):\(port)" : "[\(ip)]:\(port)"
            let fd = socket(
                ip.isIPv4 ? AF_INET : AF_INET6,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw failure("socket", name) }
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            if !ip.isIPv4 {
                setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
            }
            let bound = bind(fd, ip, port)
            guard bound == 0, listen(fd, SOMAXCONN) == 0 else {
                let error = failure(bound == 0 ? "listen" : "bind", name)
                close(fd)
                throw error
            }
            return Listener(fd: fd, name: name, isUnixSocket: false, createdPath: nil)
        case .unix(let path):
            let name = "unix:" + path
            try removeStaleSocket(at: path)
            let fd = socket(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw failure("socket", name) }
            var socketAddress = unixAddress(path)
            // Created 0600 (never wider than asked for, even for a moment), then the group, then the mode.
            let previous = umask(0o177)
            let bound = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            umask(previous)
            guard bound == 0 else {
                let error = failure("bind", name)
                close(fd)
                throw error
            }
            if let group = file.group, chown(path, uid_t.max, group) != 0 {
                let error = failure("chown", name)
                unlink(path)
                close(fd)
                throw error
            }
            guard chmod(path, file.mode) == 0, listen(fd, SOMAXCONN) == 0 else {
                let error = failure("chmod", name)
                unlink(path)
                close(fd)
                throw error
            }
            return Listener(fd: fd, name: name, isUnixSocket: true, createdPath: path)
        }
    }

    /// A socket systemd passed (`LISTEN_FDS`), described by what it is bound to. A TCP
    /// socket on an address other than loopback needs `--listen-public` as `--listen` does.
    static func passed(_ fd: Int32, allowPublic: Bool) throws -> Listener {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw failure("getsockname", "the socket systemd passed as fd \(fd)") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        if Int32(storage.ss_family) == AF_UNIX {
            let path = withUnsafeBytes(of: &storage) { raw -> String in
                let bytes = raw[MemoryLayout<sa_family_t>.size..<Int(length)]
                return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return Listener(fd: fd, name: "unix:" + path + " (from systemd)", isUnixSocket: true, createdPath: nil)
        }
        let ip = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ipAddress(of: $0, length: length) }
        }
        guard let ip else { throw CredFileError.usage("the socket systemd passed as fd \(fd) is neither unix nor TCP") }
        // The port stands at the same offset in sockaddr_in and sockaddr_in6.
        let port = withUnsafePointer(to: &storage) { pointer -> UInt16 in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        guard ip.isLoopback || allowPublic else {
            throw CredFileError.usage(
                "systemd passed a socket on \(ip):\(port), not a loopback address: add --listen-public to answer on it")
        }
        return Listener(
            fd: fd, name: (ip.isIPv4 ? "\(ip):\(port)" : "[\(ip)]:\(port)") + " (from systemd)", isUnixSocket: false,
            createdPath: nil)
    }

    /// `bind(2)` of `fd` to `ip`:`port`, in the family of `ip`; 0 or -1 with errno.
    private static func bind(_ fd: Int32, _ ip: IPAddress, _ port: UInt16) -> Int32 {
        var storage = sockaddr_storage()
        let length: Int
        if ip.isIPv4 {
            length = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    address.pointee.sin_family = sa_family_t(AF_INET)
                    address.pointee.sin_port = port.bigEndian
                    withUnsafeMutableBytes(of: &address.pointee.sin_addr) { $0.copyBytes(from: ip.bytes) }
                    return MemoryLayout<sockaddr_in>.size
                }
            }
        } else {
            length = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    address.pointee.sin6_family = sa_family_t(AF_INET6)
                    address.pointee.sin6_port = port.bigEndian
                    withUnsafeMutableBytes(of: &address.pointee.sin6_addr) { $0.copyBytes(from: ip.bytes) }
                    return MemoryLayout<sockaddr_in6>.size
                }
            }
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(length)) }
        }
    }

    /// The IP address of a `sockaddr` (IPv4, or IPv6), or nil.
    static func ipAddress(of address: UnsafePointer<sockaddr>, length: socklen_t) -> IPAddress? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { IPAddress(bytes: Array($0)) }
            }
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { IPAddress(bytes: Array($0)) }
            }
        default:
            return nil
        }
    }

    /// Removes a socket file nobody listens on (left by a process that was killed); a
    /// live socket or any other kind of file is an error, never removed.
    private static func removeStaleSocket(at path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw CredFileError(.io, "--listen unix:\(Escaped.path(path)): a file that is not a socket is in the way")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        var socketAddress = unixAddress(path)
        let live = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard !live else {
            throw CredFileError(.io, "--listen unix:\(Escaped.path(path)): another process answers on it")
        }
        unlink(path)
    }

    private static func unixAddress(_ path: String) -> sockaddr_un {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            raw.initializeMemory(as: UInt8.self, repeating: 0)
            raw.copyBytes(from: Array(path.utf8).prefix(raw.count - 1))
        }
        return socketAddress
    }

    private static func failure(_ call: String, _ name: String) -> CredFileError {
        CredFileError(.io, "cannot listen on \(name) (\(call): \(String(cString: strerror(errno))))")
    }
}
