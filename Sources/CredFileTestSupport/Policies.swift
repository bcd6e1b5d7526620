import CredFile
import Foundation

// Small hash policies and what the tests of both targets read back from files and output.

/// One round: the suite stays fast. (Hashes are still real PBKDF2 hashes.)
public let oneRound: HashPolicy = {
    do { return try HashPolicy(rounds: 1) } catch { fatalError("rounds 1 is valid: \(error)") }  // in roundsRange
}()

/// A PBKDF2 policy of `rounds` rounds of `algorithm`.
public func policy(rounds: Int, algorithm: HashAlgorithm = .sha256) throws -> HashPolicy {
    try HashPolicy(algorithm: algorithm, rounds: rounds)
}

/// The secret of `username`'s first entry.
public func storedSecret(of username: String, in path: String) throws -> StoredSecret? {
    CredentialFile(bytes: try readBytes(path)).firstEntry(named: username)?.entry?.secret
}

/// The first JSON object on standard output.
public func jsonObject(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let dictionary = object as? [String: Any] else { throw HarnessError("not a JSON object: \(text)") }
    return dictionary
}
