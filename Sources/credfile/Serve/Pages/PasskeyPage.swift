import CredFile

/// The passkey parts of the portal's pages (SPEC §14): the `id="passkey-register"` control
/// on `{prefix}/` and `id="passkey-sign-in"` on the sign-in page, each with the script
/// under the prefix and a message for a browser without WebAuthn (or without JavaScript).
enum PasskeyPage {
    /// The words of the passkey parts, Spanish and English.
    struct Words {
        let language: PortalLanguage
        private func t(_ es: String, _ en: String) -> String { language == .es ? es : en }
        var title: String { t("Llaves de acceso", "Passkeys") }
        var name: String { t("Nombre de la llave", "Passkey name") }
        var add: String { t("Añadir una llave de acceso", "Add a passkey") }
        var signIn: String { t("Iniciar sesión con una llave de acceso", "Sign in with a passkey") }
        var secondFactor: String { t("Usar una llave de acceso", "Use a passkey") }
        var none: String { t("Aún no tienes llaves de acceso.", "You have no passkeys yet.") }
        var unsupported: String {
            t("Este navegador no admite llaves de acceso.", "This browser does not support passkeys.")
        }
        var noScript: String {
            t("Las llaves de acceso necesitan JavaScript.", "Passkeys need JavaScript.")
        }
        var failed: String { t("No se pudo usar la llave de acceso.", "The passkey could not be used.") }
        var again: String {
            t("Inicia sesión de nuevo para añadir una llave de acceso.", "Sign in again to add a passkey.")
        }
    }

    /// What the control's `data-` attributes and the message paragraph share.
    private static func control(
        id: String, label: String, prefix: String, csrf: String, rd: String?, words: Words
    ) -> HTML {
        let next: HTML = rd.map { " data-rd=\"\($0)\"" } ?? .empty
        return """
            <button type="button" id="\(id)" class="secondary" data-prefix="\(prefix)" data-csrf="\(csrf)"\(next) data-unsupported="\(words.unsupported)" data-failed="\(words.failed)" data-again="\(words.again)">\(label)</button>
            <p id="passkey-message" class="error" role="status" hidden></p>
            <noscript><p class="error">\(words.noScript)</p></noscript>
            <script src="\(prefix)/passkeys.js" defer></script>
            """
    }

    /// The sign-in page's passkey button.
    static func signIn(language: PortalLanguage, prefix: String, csrf: String, rd: String?) -> HTML {
        let words = Words(language: language)
        return control(id: "passkey-sign-in", label: words.signIn, prefix: prefix, csrf: csrf, rd: rd, words: words)
    }

    /// The code page's passkey button (SPEC §14: the second factor after a password).
    static func secondFactor(language: PortalLanguage, prefix: String, csrf: String) -> HTML {
        let words = Words(language: language)
        return control(
            id: "passkey-second-factor", label: words.secondFactor, prefix: prefix, csrf: csrf, rd: nil, words: words)
    }

    /// The signed-in page's passkeys: their names, and the registration control.
    static func manage(language: PortalLanguage, prefix: String, csrf: String, names: [String]) -> HTML {
        let words = Words(language: language)
        let list: HTML =
            names.isEmpty
            ? "<p>\(words.none)</p>"
            : "<ul class=\"passkeys\">\(names.map { name -> HTML in "<li>\(name)</li>" })</ul>"
        return """
            <h2>\(words.title)</h2>
            \(list)
            <label for="passkey-name">\(words.name)</label>
            <input id="passkey-name" type="text" maxlength="64" value="passkey">
            \(control(id: "passkey-register", label: words.add, prefix: prefix, csrf: csrf, rd: nil, words: words))
            """
    }
}
