#if canImport(Glibc)
import Glibc
#endif

exit(CredFileCLI.run(Array(CommandLine.arguments.dropFirst()), terminal: .standard).rawValue)
