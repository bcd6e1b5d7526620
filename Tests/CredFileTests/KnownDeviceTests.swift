import CredFileTestSupport
import Testing

@testable import CredFile

// SPEC §11's known devices in the library: the device cookie (DeviceCookies) and §9's guard
// counting a known device's attempts on their own (KnownDevice). The policies have no
// delay, so a hundred failures take a hundred one-round hashes.

/// A store over a file with `bob` (hashed, 1 round), guarded with no delay and a lockout at
/// 100, logging nowhere.
private func deviceStore(_ directory: TemporaryDirectory) throws -> CredentialStore {
    let path = directory.file("app.cred")
    var store = CredentialStore(path: path, policy: try policy(rounds: 1))
    try store.register(username: "bob", password: Password("tangerine-river-stone"), storage: .hashed)
    store.loginGuard = try LoginGuard(
        credentialFile: path, policy: try GuardPolicy(freeFailures: 0, maximumFailures: 100, maximumDelay: 0),
        log: .none, service: "test")
    return store
}

private func login(
    _ store: CredentialStore, _ password: String, device: KnownDevice? = nil, client: String = "192.0.2.1"
) throws -> CredentialStore.Verification {
    try store.verify(
        usernameBytes: "bob".utf8, password: Password(password), upgradeOnSuccess: false, client: client,
        device: device)
}

private let right = "tangerine-river-stone"
private let now: Int64 = 1_800_000_000

@Suite("Known devices (SPEC §11): device cookies and their own count in §9's guard")
struct KnownDeviceTests {
    let cookies = DeviceCookies(key: SecretBytes(Array(repeating: 7, count: 32)))

    @Test("a cookie issued for a name is that name's device for a year, and nobody else's")
    func cookieValidity() throws {
        let value = try cookies.issue(username: "bob".utf8, now: now)
        #expect(value.utf8.count == DeviceCookies.textCount)
        #expect(cookies.device(cookieValue: value.utf8, username: "bob".utf8, now: now) != nil)
        #expect(
            cookies.device(cookieValue: value.utf8, username: "bob".utf8, now: now + DeviceCookies.lifetime - 1) != nil)
        // Two cookies are two devices.
        let other = try cookies.issue(username: "bob".utf8, now: now)
        #expect(
            cookies.device(cookieValue: other.utf8, username: "bob".utf8, now: now)
                != cookies.device(cookieValue: value.utf8, username: "bob".utf8, now: now))
    }

    @Test(
        "a stolen-but-wrong cookie is no device: other user, bad MAC, other key, expired, future, malformed",
        arguments: ["other user", "bad MAC", "other key", "expired", "future", "truncated", "not base64url"])
    func wrongCookies(_ kind: String) throws {
        var value = Array(try cookies.issue(username: "bob".utf8, now: now).utf8)
        var user = "bob"
        var at = now
        var judge = cookies
        switch kind {
        case "other user": user = "alice"
        case "bad MAC":
            value[value.count - 2] = value[value.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        case "other key": judge = DeviceCookies(key: SecretBytes(Array(repeating: 8, count: 32)))
        case "expired": at = now + DeviceCookies.lifetime
        case "future": at = now - 3600
        case "truncated": value.removeLast()
        default: value[0] = UInt8(ascii: "*")
        }
        #expect(judge.device(cookieValue: value, username: user.utf8, now: at) == nil)
    }

    @Test("the owner with a device cookie signs in while the name is locked out by 100 failures from elsewhere")
    func ownerThroughLockout() throws {
        try withTemporaryDirectory { directory in
            let store = try deviceStore(directory)
            let device = try #require(
                cookies.device(
                    cookieValue: try cookies.issue(username: "bob".utf8, now: now).utf8, username: "bob".utf8, now: now)
            )
            for _ in 0..<100 { #expect(try !login(store, "guess", client: "203.0.113.9").granted) }
            let locked = try login(store, right)
            #expect(!locked.granted && locked.denial == .lockedOut)
            let owner = try login(store, right, device: device)
            #expect(owner.granted)
            // Her good login cleared her device's count only: the name stays locked out.
            #expect(try login(store, right).denial == .lockedOut)
            #expect(try store.loginGuard?.failureRecord(username: "bob")?.isLockedOut == true)
        }
    }

    @Test("failures under a device cookie lock that device only; an admin's reset clears it")
    func deviceLockout() throws {
        try withTemporaryDirectory { directory in
            let store = try deviceStore(directory)
            let stolen = try #require(
                cookies.device(
                    cookieValue: try cookies.issue(username: "bob".utf8, now: now).utf8, username: "bob".utf8, now: now)
            )
            let owners = try #require(
                cookies.device(
                    cookieValue: try cookies.issue(username: "bob".utf8, now: now).utf8, username: "bob".utf8, now: now)
            )
            for _ in 0..<100 { #expect(try !login(store, "guess", device: stolen).granted) }
            #expect(try login(store, right, device: stolen).denial == .lockedOut)
            // Nothing else is locked: the name, and the owner's own device.
            #expect(try store.loginGuard?.failureRecord(username: "bob") == nil)
            #expect(try login(store, right, device: owners).granted)
            #expect(try login(store, right).granted)
            // `credfile unlock bob` ends the device's lockout too.
            #expect(try login(store, right, device: stolen).denial == .lockedOut)
            #expect(try store.loginGuard?.resetFailures(username: "bob") == true)
            #expect(try login(store, right, device: stolen).granted)
        }
    }

    @Test("a device of another name is ignored: the attempt counts on the name typed")
    func otherNamesDevice() throws {
        try withTemporaryDirectory { directory in
            let store = try deviceStore(directory)
            let alices = try #require(
                cookies.device(
                    cookieValue: try cookies.issue(username: "alice".utf8, now: now).utf8, username: "alice".utf8,
                    now: now))
            #expect(try !login(store, "guess", device: alices).granted)
            #expect(try store.loginGuard?.failureRecord(username: "bob")?.failures == 1)
        }
    }
}
