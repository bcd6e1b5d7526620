import CredFile

/// The words of the portal's pages in the seed's Spanish and in English (SPEC §11), one
/// table so every page says the same thing the same way.
struct PortalWords: Sendable {
    let language: PortalLanguage

    private func t(_ es: String, _ en: String) -> String { language == .es ? es : en }

    /// The seed's screen title: "Login" in both languages.
    var loginTitle: String { "Login" }
    var username: String { t("Usuario", "Username") }
    var password: String { t("Contraseña", "Password") }
    var signIn: String { t("Iniciar sesión", "Sign in") }
    var register: String { t("Registrarse", "Register") }
    var wrongCredentials: String { t("Usuario o contraseña incorrectos.", "Wrong username or password.") }
    var accessGranted: String { t("✅ Acceso permitido", "✅ Access granted") }
    var signedInAs: String { t("Sesión iniciada como", "Signed in as") }
    var groups: String { t("Grupos", "Groups") }
    var noGroups: String { t("ninguno", "none") }
    var signOut: String { t("Cerrar sesión", "Sign out") }
    var signOutEverywhere: String { t("Cerrar sesión en todos los dispositivos", "Sign out everywhere") }
}
