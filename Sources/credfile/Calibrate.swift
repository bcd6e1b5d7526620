import CredFile

extension CommandContext {
    func calibrate() throws -> ExitStatus {
        throw CredFileError(.usage, "calibrate is not built yet")
    }
}
