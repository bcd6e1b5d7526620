import CCredFile

#if canImport(Glibc)
import Glibc
#endif

// First of all, before any password can be in memory: no core dump, no same-user
// ptrace, and our own handlers in place of Swift's crash handler (SPEC §5).
_ = credfile_harden_process()
// Large buffers mapped and unmapped, so peak memory tracks the live data (see the C side).
_ = credfile_map_large_allocations()

// The arguments as the bytes the kernel gave: a path or a name that is not valid UTF-8
// is refused by the parser, never repaired into another one.
let arguments: [[UInt8]] = (1..<Int(CommandLine.argc)).map { index in
    guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
    return Array(
        UnsafeBufferPointer(
            start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
}
// `run` flushes standard output, and fails the command when it could not be written.
exit(CredFileCLI.run(arguments, terminal: .standard).rawValue)
