import Observation

#if canImport(Glibc)
import Glibc
#endif

/// The seed app's `LoginViewModel`, hardened: the same properties and actions, so the
/// seed's SwiftUI views bind to it unchanged, over a ``CredentialStore`` instead of a
/// substring search of the file.
///
/// ```swift
/// @State private var model = LoginModel(store: CredentialStore(path: "usuarios.txt"))
/// TextField("Usuario", text: $model.username)
/// SecureField("Contraseña", text: $model.password)
/// Button("Iniciar sesión") { model.login() }
/// ```
///
/// What changed from the seed: a login compares the whole name and the whole password
/// (so the seed's forged logins are denied), the hashing runs off the main actor and
/// off Swift's cooperative pool, and `password` is cleared as soon as an attempt starts,
/// so the model never keeps it. The messages are the seed's Spanish ones, or English,
/// chosen by the locale (``Language/current``).
@MainActor @Observable
public final class LoginModel {
    /// The name typed on the screen.
    public var username = ""
    /// The password typed on the screen; cleared when a login or registration starts.
    public var password = ""
    /// Whether the last login succeeded.
    public var isAuthenticated = false
    /// What went wrong in the last attempt, in the model's language; nil after a success.
    public var errorMessage: String?
    /// Whether the last registration succeeded.
    public var isRegistered = false

    /// The store logins and registrations go to.
    public let store: CredentialStore
    /// The language of ``errorMessage``.
    public let language: Language

    /// A model over `store`, speaking `language` (by default the locale's).
    public init(store: CredentialStore, language: Language = .current) {
        self.store = store
        self.language = language
    }

    /// The languages of the messages.
    public enum Language: Sendable {
        /// The seed's messages, word for word.
        case spanish
        /// Their English translation.
        case english

        /// Spanish when `LC_ALL`, `LC_MESSAGES` or `LANG` (the first one set and not
        /// empty) starts with `es`, as the command line decides; English otherwise.
        public static var current: Language {
            for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
                guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { continue }
                return value.hasPrefix("es") ? .spanish : .english
            }
            return .english
        }
    }

    /// The seed's five messages.
    public enum Message: Sendable {
        /// A wrong password, an unknown user, or any of the seed's forged logins.
        case wrongCredentials
        /// Registration with an empty field.
        case emptyFields
        /// Registration of a name that has an entry already.
        case userExists
        /// The file cannot be read (e.g. the path is a directory).
        case readFailed
        /// The registration could not be written.
        case registerFailed

        /// The text in `language`.
        public func text(in language: Language) -> String {
            switch (self, language) {
            case (.wrongCredentials, .spanish): "Usuario o contraseña incorrectos."
            case (.wrongCredentials, .english): "Wrong username or password."
            case (.emptyFields, .spanish): "Usuario y contraseña no pueden estar vacíos."
            case (.emptyFields, .english): "Username and password cannot be empty."
            case (.userExists, .spanish): "El usuario ya existe."
            case (.userExists, .english): "The user already exists."
            case (.readFailed, .spanish): "Error al leer el archivo."
            case (.readFailed, .english): "Error reading the file."
            case (.registerFailed, .spanish): "Error al registrar usuario."
            case (.registerFailed, .english): "Error registering the user."
            }
        }
    }

    /// Logs in with ``username`` and ``password`` (the seed's `login()`), for a button's
    /// action: starts the attempt and returns at once. Await ``login()->()`` instead
    /// where you can.
    ///
    /// Unavailable from asynchronous contexts: there `await model.login()` must wait for
    /// the login, never start it and go on (top-level code, where the compiler would pick
    /// this form, writes `await model.login() as Void`).
    @available(
        *, noasync,
        message:
            "await the async login(): `await model.login()` in a function, `await model.login() as Void` at top level"
    )
    @discardableResult
    public func login() -> Task<Void, Never> {
        Task { await self.login() }
    }

    /// Logs in with ``username`` and ``password``: sets ``isAuthenticated``, or
    /// ``errorMessage`` (the same message for an unknown user, a wrong password and an
    /// empty field, as the seed's forged logins must all read alike). Clears ``password``.
    public func login() async {
        let name = username
        let typed = Password(password)
        password = ""
        isAuthenticated = false
        guard !name.isEmpty, typed.bytes.count > 0 else {
            errorMessage = Message.wrongCredentials.text(in: language)
            return
        }
        do {
            let result = try await store.verify(username: name, password: typed, upgradeOnSuccess: false)
            isAuthenticated = result.granted
            errorMessage = result.granted ? nil : Message.wrongCredentials.text(in: language)
        } catch let error as CredFileError where error.code == .io && error.cause?.errno == ENOENT {
            // No file yet: nobody is registered, so the login is simply wrong (as in the
            // seed, which created the empty file on first use).
            errorMessage = Message.wrongCredentials.text(in: language)
        } catch {
            errorMessage = Message.readFailed.text(in: language)
        }
    }

    /// Registers ``username`` with ``password`` (the seed's `register()`), for a
    /// button's action: starts the attempt and returns at once. Unavailable from
    /// asynchronous contexts, as the button form of `login()` is.
    @available(
        *, noasync,
        message:
            "await the async register(): `await model.register()` in a function, `await model.register() as Void` at top level"
    )
    @discardableResult
    public func register() -> Task<Void, Never> {
        Task { await self.register() }
    }

    /// Registers ``username`` with ``password``, hashed: sets ``isRegistered``, or
    /// ``errorMessage``. Clears ``password``.
    public func register() async {
        let name = username
        let typed = Password(password)
        password = ""
        isRegistered = false
        guard !name.isEmpty, typed.bytes.count > 0 else {
            errorMessage = Message.emptyFields.text(in: language)
            return
        }
        do {
            try await store.register(username: name, password: typed, storage: .hashed)
            isRegistered = true
            errorMessage = nil
        } catch let error as CredFileError where error.code == .userExists {
            errorMessage = Message.userExists.text(in: language)
        } catch {
            errorMessage = Message.registerFailed.text(in: language)
        }
    }
}
