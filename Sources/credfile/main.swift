#if canImport(Glibc)
import Glibc
#endif

let status = CredFileCLI.run(Array(CommandLine.arguments.dropFirst()), terminal: .standard)
Terminal.StandardOutput.shared.flush()
exit(status.rawValue)
