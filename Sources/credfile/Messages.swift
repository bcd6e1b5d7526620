/// Every sentence the CLI shows people, in English and in the seed app's Spanish.
/// Spanish is chosen when `LC_ALL`, `LC_MESSAGES` or `LANG` (the first one set) starts with `es`.
struct Messages {
    let spanish: Bool

    init(environment: [String: String]) {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy
            .compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        spanish = locale.hasPrefix("es")
    }

    private func t(_ en: String, _ es: String) -> String { spanish ? es : en }

    var loginTitle: String { t("Login", "Iniciar sesión") }
    var registerTitle: String { t("Register", "Registro") }
    var usernamePrompt: String { t("Username: ", "Usuario: ") }
    var passwordPrompt: String { t("Password: ", "Contraseña: ") }
    var newPasswordPrompt: String { t("New password: ", "Nueva contraseña: ") }
    var repeatPasswordPrompt: String { t("Repeat password: ", "Repita la contraseña: ") }
    var accessGranted: String { t("✅ Access granted", "✅ Acceso permitido") }
    var wrongCredentials: String { t("Wrong username or password.", "Usuario o contraseña incorrectos.") }
    var fieldsEmpty: String {
        t("Username and password cannot be empty.", "Usuario y contraseña no pueden estar vacíos.")
    }
    var userExists: String { t("The user already exists.", "El usuario ya existe.") }
    var userNotFound: String { t("The user does not exist.", "El usuario no existe.") }
    var userRegistered: String { t("✅ User registered", "✅ Usuario registrado con éxito") }
    var passwordsDiffer: String { t("The passwords do not match.", "Las contraseñas no coinciden.") }
    var noPassword: String {
        t("no password on standard input", "no hay contraseña en la entrada estándar")
    }
    func passwordTooLong(_ limit: Int) -> String {
        t("password is longer than \(limit) bytes", "la contraseña tiene más de \(limit) bytes")
    }
    var passwordChanged: String { t("password changed", "contraseña cambiada") }
    func removed(_ count: Int) -> String {
        t("user removed (\(count) line\(count == 1 ? "" : "s"))", "usuario eliminado (\(count) línea\(count == 1 ? "" : "s"))")
    }
    func imported(added: Int, updated: Int) -> String {
        t("\(added) added, \(updated) updated", "\(added) añadidos, \(updated) actualizados")
    }
    func weakIterations(_ n: Int, minimum: Int) -> String {
        t("warning: \(n) iterations is below the minimum of \(minimum) (OWASP)",
          "aviso: \(n) iteraciones está por debajo del mínimo de \(minimum) (OWASP)")
    }
    var nothingToUpgrade: String {
        t("nothing to upgrade: no plaintext entries", "nada que actualizar: no hay entradas en texto plano")
    }
    func upgraded(_ n: Int, skipped: Int, hashed: Int, seconds: Double) -> String {
        t("upgraded \(n) entries in \(formatted(seconds)) s (\(hashed) already hashed\(skipped > 0 ? ", \(skipped) changed meanwhile, rerun to finish" : ""))",
          "\(n) entradas actualizadas en \(formatted(seconds)) s (\(hashed) ya con hash\(skipped > 0 ? ", \(skipped) cambiaron entretanto, vuelva a ejecutar" : ""))")
    }
    func wouldUpgrade(_ n: Int, hashed: Int) -> String {
        t("dry run: would upgrade \(n) entries (\(hashed) already hashed); nothing written",
          "simulación: se actualizarían \(n) entradas (\(hashed) ya con hash); nada escrito")
    }
    func malformedKept(_ lines: [Int]) -> String {
        t("malformed entries left as they are (they may hold a plaintext password) at line\(lines.count == 1 ? "" : "s") ",
          "entradas malformadas sin cambios (pueden contener una contraseña en texto plano) en línea\(lines.count == 1 ? "" : "s") ")
            + lines.map(String.init).joined(separator: ", ")
    }
    func weakLeft(_ n: Int) -> String {
        t("\(n) weak hashes left (they are rehashed at the next login with --upgrade)",
          "\(n) hashes débiles (se rehacen en el próximo inicio de sesión con --upgrade)")
    }
    func upgradeFailed(_ reason: String) -> String {
        t("warning: access granted, but the entry could not be upgraded: \(reason)",
          "aviso: acceso permitido, pero la entrada no se pudo actualizar: \(reason)")
    }

    private func formatted(_ seconds: Double) -> String {
        let hundredths = Int((seconds * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
