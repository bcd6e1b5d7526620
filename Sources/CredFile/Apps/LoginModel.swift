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
/// if model.isCodeRequired { TextField("Código", text: $model.code) }  // SPEC §14
/// Button("Iniciar sesión") { model.login() }
/// ```
///
/// A user with a second factor (the store's ``CredentialStore/secondFactor``) signs in in
/// two steps, as on the sign-in page: after a right password the model asks for the code
/// (``isCodeRequired``, ``Message/codeRequired``) and the next ``login()->()`` checks
/// ``code`` alone, once, within 5 minutes; a code typed with the password is checked at once.
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
    /// The one-time code typed on the screen (SPEC §14), for a user with a second factor;
    /// cleared when a login starts.
    public var code = ""
    /// Whether the password was right and the login waits for ``code`` (SPEC §14).
    public var isCodeRequired: Bool { pending != nil }

    /// The user whose password was right, and until when the code may follow.
    private var pending: (name: String, until: ContinuousClock.Instant)?

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
        /// The password was right; the one-time code comes next (SPEC §14).
        case codeRequired

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
            case (.codeRequired, .spanish): "Introduzca el código de verificación."
            case (.codeRequired, .english): "Enter the verification code."
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
    ///
    /// With a second factor: a right password sets ``isCodeRequired`` and
    /// ``Message/codeRequired`` (or, with ``code`` typed already, goes on to it); while it
    /// is set, the next login checks ``code`` only, once (a wrong one starts over with the
    /// password). Clears ``code``.
    public func login() async {
        isAuthenticated = false
        let typedCode = Array(code.utf8)
        code = ""
        if let waiting = pending {
            pending = nil
            guard ContinuousClock.now < waiting.until else {
                errorMessage = Message.wrongCredentials.text(in: language)
                return
            }
            await checkCode(typedCode, of: waiting.name)
            return
        }
        guard let (name, typed) = takeFields(orShow: .wrongCredentials) else { return }
        do {
            var twoSteps = store
            twoSteps.secondFactor?.separateStep = true
            let result = try await twoSteps.verify(username: name, password: typed, upgradeOnSuccess: false)
            if result.awaitsCode {
                guard typedCode.isEmpty else { return await checkCode(typedCode, of: name) }
                pending = (name, ContinuousClock.now + .seconds(PendingSignIns.lifetime))
                errorMessage = Message.codeRequired.text(in: language)
                return
            }
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

    /// The second step: `typed` for `name`, whose password was right; a wrong code reads as
    /// a wrong password.
    private func checkCode(_ typed: [UInt8], of name: String) async {
        do {
            let result = try await store.verifyCode(usernameBytes: Array(name.utf8), code: typed, client: nil)
            isAuthenticated = result.granted
            errorMessage = result.granted ? nil : Message.wrongCredentials.text(in: language)
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
        isRegistered = false
        guard let (name, typed) = takeFields(orShow: .emptyFields) else { return }
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

    /// The fields of an attempt (login and register take them alike): the name, and the
    /// password as a ``Password``, cleared from ``password`` at once. Nil, with `empty`
    /// shown in ``errorMessage``, when either field is empty.
    private func takeFields(orShow empty: Message) -> (name: String, password: Password)? {
        let name = username
        let typed = Password(password)
        password = ""
        guard !name.isEmpty, typed.bytes.count > 0 else {
            errorMessage = empty.text(in: language)
            return nil
        }
        return (name, typed)
    }
}
