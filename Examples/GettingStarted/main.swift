import CredFile

// A password of at least 15 characters, on no blocklist, without the name (SPEC §8).
let store = CredentialStore(path: "usuarios.txt")  // default HashPolicy; creates the file (0600)
try store.register(username: "valencia", password: "naranjo-en-flor-2026")
let granted: Bool = try store.authenticate(username: "valencia", password: "naranjo-en-flor-2026")
print(granted ? "granted" : "denied")  // granted
