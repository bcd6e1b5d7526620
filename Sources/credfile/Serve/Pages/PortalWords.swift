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

    // SPEC §12: the Register screen and the password change.
    /// The seed's Register screen title.
    var registerTitle: String { t("Registro", "Register") }
    var invitationCode: String { t("Código de invitación", "Invitation code") }
    var wrongInvitation: String {
        t("El código de invitación no es válido.", "The invitation code is not valid.")
    }
    var registerLimit: String {
        t("Demasiados registros; inténtelo más tarde.", "Too many registrations; please try again later.")
    }
    var changePassword: String { t("Cambiar contraseña", "Change password") }
    var currentPassword: String { t("Contraseña actual", "Current password") }
    var newPassword: String { t("Nueva contraseña", "New password") }
    var wrongCurrentPassword: String {
        t("La contraseña actual no es correcta.", "The current password is not correct.")
    }
    var backToLogin: String { t("Volver al Login", "Back to Login") }
    var back: String { t("Volver", "Back") }
    /// The command line's sentences (§2's and §8's reasons, "El usuario ya existe.") in this language.
    var messages: Messages { Messages(environment: ["LANG": language == .es ? "es" : "en"]) }
}
