#if canImport(Glibc)
import Glibc
#endif

/// Passkeys (WebAuthn) for a credential file's logins (SPEC §14): registration for a
/// signed-in user, and sign-in with a passkey alone (user verification required) or as the
/// second factor after a password.
///
/// The credentials live in ``passkeyFile`` (§4's locked atomic rewrite, 0600); the
/// challenges (32 random bytes, each used once, for ``challengeLifetime`` seconds) in the
/// state database, only their SHA-256. Each check is made by a library: libfido2 for the
/// authenticator data and signature, libcbor for the attestation object and COSE key,
/// OpenSSL for the hashes; `clientDataJSON`'s type, challenge and origin by ``ClientData``.
///
/// ```swift
/// let passkeys = try Passkeys(credentialFile: "/etc/app.cred", origin: "https://example.com", rpID: "example.com")
/// let challenge = try passkeys.newChallenge(for: .signIn)
/// // … the browser's navigator.credentials.get answer …
/// switch try passkeys.signIn(credentialID: id, clientDataJSON: json, authenticatorData: data, signature: sig) {
/// case .accepted(let user): print(user)
/// case .refused(let why): print(why)
/// }
/// ```
public struct Passkeys: Sendable {
    /// The credentials file (`passkey-file`).
    public let passkeyFile: String
    /// `webauthn-origin`: the origin the browser must report (`https://example.com`);
    /// empty when made only to list and remove passkeys.
    public private(set) var origin: String
    /// `webauthn-rp-id`: the relying party id, a domain (`example.com`).
    public private(set) var rpID: String
    /// The credential file whose users own the passkeys.
    let credentialFile: String
    /// `state` as given; nil for the default beside the credential file.
    let statePath: String?

    /// How long a challenge may be used, in seconds.
    public static let challengeLifetime: Int64 = 300

    /// The passkeys of `credentialFile`'s users, for registration and sign-in.
    /// - Parameters:
    ///   - credentialFile: the credential file.
    ///   - passkeyFile: the credentials file; nil for `FILE.passkeys` beside it.
    ///   - state: the state database (§9's `state`); nil for `FILE.guard.db` beside it.
    ///   - origin: `webauthn-origin`.
    ///   - rpID: `webauthn-rp-id`; nil for the origin's host.
    /// - Throws: ``CredFileError/Code/usage`` when `origin` is not `https://HOST[:PORT]`
    ///   (or `http://localhost[:PORT]`) or `rpID` is not its host or a domain the host ends with.
    public init(
        credentialFile: String, passkeyFile: String? = nil, state: String? = nil, origin: String, rpID: String? = nil
    ) throws {
        guard let host = Self.host(ofOrigin: origin) else {
            throw CredFileError(.usage, "webauthn-origin must be https://HOST[:PORT] (or http://localhost[:PORT])")
        }
        let rpID = rpID ?? host
        guard !rpID.isEmpty, host == rpID || host.hasSuffix("." + rpID), !rpID.contains(":") else {
            throw CredFileError(.usage, "webauthn-rp-id must be the origin's host or a domain it ends with")
        }
        self.init(credentialFile: credentialFile, passkeyFile: passkeyFile, state: state)
        self.origin = origin
        self.rpID = rpID
    }

    /// The passkeys of `credentialFile`'s users, to list and remove them (`credfile
    /// passkeys`): without an origin, every registration and sign-in is refused.
    /// - Parameters:
    ///   - credentialFile: the credential file.
    ///   - passkeyFile: the credentials file; nil for `FILE.passkeys` beside it.
    ///   - state: the state database; nil for `FILE.guard.db` beside it.
    public init(credentialFile: String, passkeyFile: String? = nil, state: String? = nil) {
        let (directory, name) = AtomicWriter.split(credentialFile)
        let sidecar = AtomicWriter.sidecarName(of: name, suffix: ".passkeys")
        self.passkeyFile = passkeyFile ?? (credentialFile.contains("/") ? directory + "/" + sidecar : sidecar)
        self.origin = ""
        self.rpID = ""
        self.credentialFile = credentialFile
        self.statePath = state
    }

    /// The host of an origin `https://HOST[:PORT]` (or `http://localhost[:PORT]`), or nil.
    static func host(ofOrigin origin: String) -> String? {
        let rest: Substring
        if origin.hasPrefix("https://") {
            rest = origin.dropFirst(8)
        } else if origin.hasPrefix("http://localhost") {
            rest = origin.dropFirst(7)
        } else {
            return nil
        }
        let host = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-".utf8)
        guard !host.isEmpty, host.utf8.allSatisfy(allowed.contains), !rest.contains("/") else { return nil }
        if let port = rest.split(separator: ":", maxSplits: 1).dropFirst().first {
            guard let number = Int(port), (1...65535).contains(number) else { return nil }
        }
        return String(host)
    }

    /// The state database, found when a challenge is made or used.
    /// (SQLite or PostgreSQL, as `state` says: §15's one factory and owner rule).
    var state: any StateStore {
        get throws { try StateLocation(state: statePath, credentialFile: credentialFile).store() }
    }

    // MARK: Challenges

    /// What a challenge is for: it is accepted for that ceremony only.
    public enum Purpose: Int64, Sendable {
        /// Registering a passkey for a signed-in user.
        case registration = 1
        /// Signing in with a passkey alone (user verification required).
        case signIn = 2
        /// The second factor after a password, for the user who typed it.
        case secondFactor = 3
    }

    /// A new challenge (32 random bytes) for `purpose`, bound to `usernameBytes` (the
    /// signed-in user for a registration, the user who typed a right password for a second
    /// factor; none for a sign-in), usable once within ``challengeLifetime`` seconds.
    /// - Throws: ``CredFileError/Code/crypto`` when the random generator fails;
    ///   ``CredFileError/Code/guardDatabase`` when the state database cannot be written.
    public func newChallenge(
        for purpose: Purpose, usernameBytes: some Collection<UInt8> = [UInt8](), time: Int64? = nil
    ) throws -> [UInt8] {
        let challenge = try OpenSSL.randomBytes(count: 32)
        let digest = challenge.withUnsafeBytes { OpenSSL.sha256($0) }
        let now = time ?? Self.now()
        let user = Array(usernameBytes)
        try state.write { tables in
            try tables.challenges.insert(
                digest: digest, purpose: purpose.rawValue, user: user, expires: now + Self.challengeLifetime, now: now)
        }
        return challenge
    }

    /// Uses up the challenge `clientData` names: its user when it was given for `purpose`
    /// and has not expired; nil otherwise (it is used up all the same).
    func takeChallenge(_ clientData: ClientData, purpose: Purpose, time: Int64) throws -> [UInt8]? {
        guard clientData.challenge.count == 32 else { return nil }
        let digest = clientData.challenge.withUnsafeBytes { OpenSSL.sha256($0) }
        guard let row = try state.write({ tables in try tables.challenges.take(digest: digest) }),
            row.purpose == purpose.rawValue, time <= row.expires
        else { return nil }
        return row.user
    }

    // MARK: Ceremonies

    /// Why a passkey was refused. Each is a refusal like a wrong password: the portal
    /// answers all alike; ``clonedAuthenticator`` is also logged.
    public enum Refusal: String, Sendable, Equatable, CaseIterable {
        /// `clientDataJSON` is not JSON, or of the wrong type, origin or frame.
        case clientData
        /// The challenge was never given, already used, expired, or given for something else.
        case challenge
        /// The attestation object or authenticator data is malformed or not `none`/ES256,
        /// the RP ID hash is another site's, or user presence is missing.
        case attestation
        /// No credential has this id.
        case unknownCredential
        /// The credential belongs to another user than the one signing in.
        case otherUser
        /// The credential's user has no entry in FILE any more, or it is locked.
        case userGone
        /// The signature, RP ID hash or flags (user presence, user verification) are wrong.
        case signature
        /// The signature counter did not grow: a cloned authenticator.
        case clonedAuthenticator
        /// The name for a new passkey is empty, too long or has control characters.
        case name
        /// The credential id is registered already.
        case duplicate
    }

    /// What a ceremony gave.
    public enum Outcome: Sendable, Equatable {
        /// The passkey is good for this user (FILE's name bytes).
        case accepted(user: [UInt8])
        /// Refused, and why (for the log, never for the person).
        case refused(Refusal)
    }

    /// Registers a passkey: `clientDataJSON` of type `webauthn.create` for ``origin`` with a
    /// registration challenge given to `usernameBytes`, and an attestation object with
    /// `none` attestation, an ES256 key and user presence for ``rpID``. The credential is
    /// added to ``passkeyFile`` (created 0600 when missing) by §4's locked atomic rewrite.
    /// - Parameters:
    ///   - usernameBytes: the signed-in user.
    ///   - name: the name the user chose (1 to 64 bytes, no control character).
    ///   - clientDataJSON: the browser's bytes, as sent.
    ///   - attestationObject: the browser's bytes, as sent.
    ///   - time: seconds since 1970 (the clock's, unless a test gives one).
    /// - Returns: ``Outcome/accepted(user:)`` when saved, else why not.
    /// - Throws: the writer's errors; ``CredFileError/Code/malformedFile`` when the
    ///   passkeys file has a bad line; ``CredFileError/Code/guardDatabase``.
    public func register(
        usernameBytes: some Collection<UInt8>, name: String, clientDataJSON: [UInt8], attestationObject: [UInt8],
        time: Int64? = nil
    ) throws -> Outcome {
        let user = Array(usernameBytes)
        let now = time ?? Self.now()
        guard PasskeyFile.validName(Array(name.utf8)) != nil else { return .refused(.name) }
        guard PasskeyFile.isValidUser(user) else { return .refused(.userGone) }
        guard !origin.isEmpty,
            let clientData = WebAuthn.clientData(clientDataJSON, type: "webauthn.create", origin: origin)
        else {
            return .refused(.clientData)
        }
        guard let owner = try takeChallenge(clientData, purpose: .registration, time: now), owner == user else {
            return .refused(.challenge)
        }
        guard
            let credential = WebAuthn.registration(
                clientDataJSON: clientDataJSON, attestationObject: attestationObject, rpID: rpID)
        else { return .refused(.attestation) }
        let entry = PasskeyFile.Entry(
            line: 0, user: user, id: credential.id, counter: credential.counter, created: now, lastUsed: 0,
            coseKey: credential.coseKey, name: name)
        let added = try AtomicWriter(path: passkeyFile).rewrite(createIfMissing: true) { current -> ([UInt8]?, Bool) in
            let file = try PasskeyFile(parsing: current ?? [], path: passkeyFile)
            guard file.entry(id: credential.id) == nil else { return (nil, false) }
            return (PasskeyFile.replacing(id: credential.id, in: current ?? [], with: entry), true)
        }
        return added ? .accepted(user: user) : .refused(.duplicate)
    }

    /// Signs in with a passkey: `clientDataJSON` of type `webauthn.get` for ``origin`` with
    /// a challenge given for `purpose` (``Purpose/signIn``, or ``Purpose/secondFactor`` given
    /// to the user who typed a right password), a registered credential of a user who still
    /// has an unlocked entry in FILE, and libfido2's check of the signature, RP ID hash, user
    /// presence and, for ``Purpose/signIn``, user verification. The signature counter must
    /// grow when it is not 0 (else ``Refusal/clonedAuthenticator``); the credential's counter
    /// and last use are written to ``passkeyFile``.
    /// - Parameters:
    ///   - purpose: ``Purpose/signIn`` or ``Purpose/secondFactor``.
    ///   - credentialID: the credential's raw id.
    ///   - clientDataJSON: the browser's bytes, as sent.
    ///   - authenticatorData: the browser's bytes, as sent.
    ///   - signature: the browser's bytes, as sent (DER ECDSA).
    ///   - time: seconds since 1970 (the clock's, unless a test gives one).
    /// - Returns: ``Outcome/accepted(user:)`` with the credential's user, else why not.
    /// - Throws: the writer's errors; ``CredFileError/Code/malformedFile``;
    ///   ``CredFileError/Code/io`` when FILE cannot be read; ``CredFileError/Code/guardDatabase``.
    public func signIn(
        purpose: Purpose = .signIn, credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8],
        signature: [UInt8], time: Int64? = nil
    ) throws -> Outcome {
        guard purpose != .registration else { return .refused(.challenge) }
        let now = time ?? Self.now()
        guard !origin.isEmpty,
            let clientData = WebAuthn.clientData(clientDataJSON, type: "webauthn.get", origin: origin)
        else {
            return .refused(.clientData)
        }
        guard let owner = try takeChallenge(clientData, purpose: purpose, time: now) else {
            return .refused(.challenge)
        }
        guard let bytes = try FileReader.read(passkeyFile),
            let entry = try PasskeyFile(parsing: bytes, path: passkeyFile).entry(id: credentialID)
        else { return .refused(.unknownCredential) }
        if purpose == .secondFactor, owner != entry.user { return .refused(.otherUser) }
        guard try userIsActive(entry.user) else { return .refused(.userGone) }
        guard
            let counter = WebAuthn.assertion(
                clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
                rpID: rpID, coseKey: entry.coseKey, userVerification: purpose == .signIn)
        else { return .refused(.signature) }
        // Written under the file's lock, the counter compared with the one there now: of
        // two assertions racing, the one with the lower counter is refused.
        let fresh = try AtomicWriter(path: passkeyFile).rewrite { current -> ([UInt8]?, Bool) in
            guard let current, var stored = try PasskeyFile(parsing: current, path: passkeyFile).entry(id: credentialID)
            else { return (nil, false) }
            guard Self.counterGrew(from: stored.counter, to: counter) else { return (nil, false) }
            stored.counter = counter
            stored.lastUsed = now
            return (PasskeyFile.replacing(id: credentialID, in: current, with: stored), true)
        }
        return fresh ? .accepted(user: entry.user) : .refused(.clonedAuthenticator)
    }

    /// WebAuthn §7.2 step 21: a counter that is not 0 (now or before) must grow.
    static func counterGrew(from stored: UInt32, to new: UInt32) -> Bool {
        (stored == 0 && new == 0) || new > stored
    }

    /// Whether `user` has an entry in FILE that is not locked (checked at every sign-in, so
    /// `delete` and `lock` end a user's passkeys at once).
    func userIsActive(_ user: [UInt8]) throws -> Bool {
        guard let name = String(validating: user, as: UTF8.self),
            let entry = try CredentialStore(path: credentialFile).read().firstEntry(named: name)?.entry
        else { return false }
        if case .locked = entry.secret { return false }
        return true
    }

    /// The WebAuthn user handle of `usernameBytes` (`user.id` at registration): the first
    /// 16 bytes of a SHA-256 of the name, so the browser never stores the name itself there.
    public static func userHandle(usernameBytes: some Collection<UInt8>) -> [UInt8] {
        Array(
            (Array("credfile webauthn user\u{0}".utf8) + Array(usernameBytes)).withUnsafeBytes { OpenSSL.sha256($0) }
                .prefix(16))
    }

    // MARK: Listing and removing

    /// A registered passkey as `credfile passkeys` lists it (never its key).
    public struct Credential: Sendable, Equatable {
        /// The credential id in unpadded base64url (what `--remove` takes).
        public let id: String
        /// The user's name bytes.
        public let user: [UInt8]
        /// The name the user chose.
        public let name: String
        /// The signature counter last accepted.
        public let counter: UInt32
        /// Seconds since 1970.
        public let created: Int64
        /// Seconds since 1970; 0 when never used.
        public let lastUsed: Int64
    }

    /// The passkeys of `usernameBytes` (every user's when nil), in file order.
    /// - Throws: ``CredFileError/Code/malformedFile`` naming a bad line;
    ///   ``CredFileError/Code/io``.
    public func credentials(usernameBytes: [UInt8]? = nil) throws -> [Credential] {
        guard let bytes = try FileReader.read(passkeyFile) else { return [] }
        return try PasskeyFile(parsing: bytes, path: passkeyFile).entries
            .filter { usernameBytes == nil || $0.user == usernameBytes }
            .map {
                Credential(
                    id: Base64URL.encode($0.id), user: $0.user, name: $0.name, counter: $0.counter,
                    created: $0.created, lastUsed: $0.lastUsed)
            }
    }

    /// Removes the passkey whose id is `id` (unpadded base64url), of `usernameBytes` only
    /// when given.
    /// - Returns: whether one was removed.
    /// - Throws: as ``credentials(usernameBytes:)``; the writer's errors.
    public func remove(id: String, usernameBytes: [UInt8]? = nil) throws -> Bool {
        guard let raw = Base64URL.decode(Array(id.utf8)), (try? Syscall.status(of: passkeyFile)) != nil else {
            return false
        }
        return try AtomicWriter(path: passkeyFile).rewrite { current -> ([UInt8]?, Bool) in
            guard let current, let entry = try PasskeyFile(parsing: current, path: passkeyFile).entry(id: raw),
                usernameBytes == nil || entry.user == usernameBytes
            else { return (nil, false) }
            return (PasskeyFile.replacing(id: raw, in: current, with: nil), true)
        }
    }

    /// The current time in seconds since 1970.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec)
    }
}

// MARK: The readers, as values (for the fuzz target and the portal)

extension Passkeys {
    /// The credential id and COSE key that a registration's attestation object registers
    /// for `rpID` (`none` attestation, an ES256 key read alike by libfido2 and libcbor, the
    /// RP ID hash of `rpID`, user presence), or nil: what ``register(usernameBytes:name:clientDataJSON:attestationObject:time:)``
    /// checks after `clientDataJSON`.
    /// - Parameters:
    ///   - attestationObject: the browser's bytes.
    ///   - rpID: the relying party id.
    /// - Returns: the id and the COSE key's bytes, or nil.
    public static func attestedCredential(attestationObject: [UInt8], rpID: String) -> (id: [UInt8], coseKey: [UInt8])?
    {
        // The client data hash only feeds libfido2's parse here; no signature is checked.
        WebAuthn.registration(clientDataJSON: [], attestationObject: attestationObject, rpID: rpID)
            .map { ($0.id, $0.coseKey) }
    }

    /// The X and Y (64 bytes) of an ES256 COSE key read by libcbor, or nil for another key.
    /// - Parameter coseKey: the key's CBOR bytes.
    public static func es256PublicKey(coseKey: [UInt8]) -> [UInt8]? {
        WebAuthn.publicKey(coseKey: coseKey)
    }

    /// The unpadded base64url of `bytes` (what the portal's script sends and reads).
    /// - Parameter bytes: any bytes.
    public static func base64URL(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

    /// The bytes of unpadded base64url `text`, or nil.
    /// - Parameter text: the text.
    public static func bytes(base64URL text: String) -> [UInt8]? { Base64URL.decode(Array(text.utf8)) }
}
