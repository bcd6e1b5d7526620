#if canImport(Glibc)
import Glibc
#endif

/// `check`'s question about the guard (SPEC §9): can everyone who may read the credential
/// file also write its guard database? A caller that can read FILE but not write the
/// database gets a temporary failure for every login (never an unguarded one), so an
/// nginx worker or Dovecot's auth process in FILE's group needs `state` pointing at a
/// database of its own.
extension LoginGuard {
    /// The ``Finding/Kind/guardDatabase`` warnings (line 0): one for FILE's owner (when not
    /// root), one for its group when the mode lets the group read it, one for others when
    /// they may read it, for each that could not write the database — or, when the
    /// database or its `-wal`/`-shm` files do not exist yet, create them in its directory.
    /// Judged from owners and mode bits (root can write anyway); nothing is opened.
    public func accessFindings() -> [Finding] {
        // A PostgreSQL state is the database's grants' business (several-hosts.md).
        guard countsFailures, stateLocation.path != nil else { return [] }
        guard let resolved = try? FileReader.resolvedPath(credentialFile),
            let file = (try? Syscall.lstat(resolved)) ?? nil
        else { return [] }
        let mode = UInt32(file.st_mode)
        var readers: [(Reader, Finding.GuardDatabaseProblem)] = []
        if file.st_uid != 0, mode & 0o400 != 0 {
            readers.append((.owner(file.st_uid), .ownerCannotWrite(uid: file.st_uid, path: databasePath)))
        }
        if mode & 0o040 != 0, file.st_gid != 0 {
            readers.append((.group(file.st_gid), .groupCannotWrite(gid: file.st_gid, path: databasePath)))
        }
        if mode & 0o004 != 0 { readers.append((.others, .othersCannotWrite(path: databasePath))) }
        return readers.filter { !canUseDatabase(as: $0.0) }.map {
            Finding(line: 0, severity: .warning, detail: .guardDatabase($0.1))
        }
    }

    /// Who reads the file: its owner, its group, or anyone.
    enum Reader {
        case owner(uid_t)
        case group(gid_t)
        case others
    }

    /// Whether `reader` could write the database and its `-wal` and `-shm` files (or
    /// create the missing ones in their directory).
    func canUseDatabase(as reader: Reader) -> Bool {
        let directory = AtomicWriter.split(databasePath).directory
        return [databasePath, databasePath + "-wal", databasePath + "-shm"].allSatisfy { path in
            if let info = (try? Syscall.lstat(path)) ?? nil { return Self.may(reader, write: info) }
            guard let parent = (try? Syscall.lstat(directory)) ?? nil else { return false }
            return Self.may(reader, write: parent, search: true)
        }
    }

    /// Whether the mode bits of `info` let `reader` write it (and, for a directory,
    /// search it). The owner is judged by the owner bits, its primary group and the other
    /// bits. The group counts as able when a member of it (by primary or supplementary
    /// group) owns the file and may write it: that is the recommended set-up, a service
    /// user in FILE's group with a `state` directory of its own.
    static func may(_ reader: Reader, write info: stat, search: Bool = false) -> Bool {
        let mode = UInt32(info.st_mode)
        func bits(_ shift: UInt32) -> Bool {
            let wanted: UInt32 = (search ? 0o3 : 0o2) << shift
            return mode & wanted == wanted
        }
        switch reader {
        case .owner(let uid):
            if info.st_uid == uid { return bits(6) }
            if let entry = getpwuid(uid), entry.pointee.pw_gid == info.st_gid { return bits(3) }
            return bits(0)
        case .group(let gid):
            if isMember(info.st_uid, of: gid), bits(6) { return true }
            return info.st_gid == gid ? bits(3) : bits(0)
        case .others:
            return bits(0)
        }
    }

    /// Whether user `uid` belongs to group `gid`, as its primary group or a supplementary one.
    static func isMember(_ uid: uid_t, of gid: gid_t) -> Bool {
        guard let user = getpwuid(uid) else { return false }
        if user.pointee.pw_gid == gid { return true }
        let name = String(cString: user.pointee.pw_name)
        guard let group = getgrgid(gid), var member = group.pointee.gr_mem else { return false }
        while let entry = member.pointee {
            if String(cString: entry) == name { return true }
            member += 1
        }
        return false
    }
}
