import CredFile

/// The words of SPEC §14's pages in the seed's Spanish and in English.
extension PortalWords {
    private func pick(_ es: String, _ en: String) -> String { language == .es ? es : en }

    var code: String { pick("Código", "Code") }
    var codeHint: String {
        pick(
            "Escribe el código de 6 dígitos de tu app de autenticación.",
            "Type the 6-digit code from your authenticator app.")
    }
    var verify: String { pick("Verificar", "Verify") }
    var oneTimeCode: String { pick("Código de un solo uso", "One-time code") }
    var codeOn: String { pick("Activado.", "On.") }
    var codeOff: String { pick("No activado.", "Off.") }
    var setUpApp: String { pick("Añadir una app de autenticación", "Set up an authenticator app") }
    var scanHint: String {
        pick(
            "Escanea el código QR con tu app de autenticación o escribe esta clave:",
            "Scan the QR code with your authenticator app, or type this key:")
    }
    var shownOnce: String { pick("La clave solo se muestra esta vez.", "The key is shown only this once.") }
    var wrongCode: String { pick("Código incorrecto.", "Wrong code.") }
    var save: String { pick("Guardar", "Save") }
    var cancel: String { pick("Cancelar", "Cancel") }
}

extension PortalPage {
    /// The sign-in page's second step (SPEC §14, `GET {prefix}/code`): the code field, its
    /// anti-forgery token, nothing else (the name and `rd` are the pending sign-in's).
    /// `codeField`: the user has a secret (else only `extra`, the passkey's button).
    static func code(
        language: PortalLanguage, siteTitle: String?, prefix: String, csrf: String, codeField: Bool = true,
        extra: HTML = .empty
    ) -> HTML {
        let words = PortalWords(language: language)
        let site: HTML = siteTitle.map { "<p class=\"site\">\($0)</p>\n" } ?? .empty
        guard codeField else {
            return document(
                language: language, title: siteTitle.map { "\(words.loginTitle) · \($0)" } ?? words.loginTitle,
                prefix: prefix, body: "\(site)<h1>\(words.loginTitle)</h1>\n\(extra)")
        }
        let body: HTML = """
            \(site)<h1>\(words.loginTitle)</h1>
            \(extra)<form method="post" action="\(prefix)/code">
            <input type="hidden" name="csrf" value="\(csrf)">
            <label for="code">\(words.code)</label>
            <p class="hint" id="code-hint">\(words.codeHint)</p>
            <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" aria-describedby="code-hint" required autofocus>
            <button type="submit" class="primary">\(words.verify)</button>
            </form>
            """
        return document(
            language: language, title: siteTitle.map { "\(words.loginTitle) · \($0)" } ?? words.loginTitle,
            prefix: prefix, body: body)
    }

    /// The signed-in page's section on one-time codes (SPEC §14): on, or a button that
    /// offers a new secret (`POST {prefix}/otp`).
    static func codeSection(language: PortalLanguage, prefix: String, csrf: String, enrolled: Bool) -> HTML {
        let words = PortalWords(language: language)
        guard !enrolled else {
            return """
                <section class="otp"><h2>\(words.oneTimeCode)</h2><p id="otp-status">\(words.codeOn)</p></section>

                """
        }
        return """
            <section class="otp"><h2>\(words.oneTimeCode)</h2><p id="otp-status">\(words.codeOff)</p>
            <form method="post" action="\(prefix)/otp">
            <input type="hidden" name="csrf" value="\(csrf)">
            <button type="submit" class="secondary" id="otp-enroll">\(words.setUpApp)</button>
            </form></section>

            """
    }

    /// The enrolment page (`POST {prefix}/otp`): the secret's QR code (inline SVG) and key,
    /// shown once, and the form that saves it only with a good code.
    /// - Parameters:
    ///   - qr: the QR code of the `otpauth://` URI, as SVG.
    ///   - key: the secret in base32.
    ///   - sealed: the hidden field that carries the secret to the confirmation (``EnrolmentSeal``).
    ///   - failed: whether to show "Código incorrecto.".
    static func enrolment(
        language: PortalLanguage, siteTitle: String?, prefix: String, csrf: String, qr: HTML, key: String,
        sealed: String, failed: Bool
    ) -> HTML {
        let words = PortalWords(language: language)
        let site: HTML = siteTitle.map { "<p class=\"site\">\($0)</p>\n" } ?? .empty
        let error: HTML = failed ? "<p class=\"error\" role=\"alert\">\(words.wrongCode)</p>\n" : .empty
        let body: HTML = """
            \(site)<h1>\(words.oneTimeCode)</h1>
            <p>\(words.scanHint)</p>
            <div class="qr">\(qr)</div>
            <p><code id="otp-key">\(key)</code></p>
            <p class="hint">\(words.shownOnce)</p>
            <form method="post" action="\(prefix)/otp">
            <input type="hidden" name="csrf" value="\(csrf)">
            <input type="hidden" name="offer" value="\(sealed)">
            <label for="code">\(words.code)</label>
            <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus>
            \(error)<button type="submit" class="primary">\(words.save)</button>
            </form>
            <p class="register"><a href="\(prefix)/">\(words.cancel)</a></p>
            """
        return document(language: language, title: words.oneTimeCode, prefix: prefix, body: body)
    }

    /// `text`'s QR code as an inline SVG (libqrencode's modules, a quiet zone of 4), one
    /// path of unit squares, dark on white; nil when libqrencode cannot encode it.
    static func qrSVG(_ text: String, label: String) -> HTML? {
        guard let (width, dark) = TerminalQR.modules(text) else { return nil }
        var path = ""
        for row in 0..<width {
            for column in 0..<width where dark[row * width + column] {
                path += "M\(column + 4) \(row + 4)h1v1h-1z"
            }
        }
        let size = String(width + 8)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" width="240" height="240" role="img" aria-label="\(label)" shape-rendering="crispEdges" id="otp-qr"><rect width="\(size)" height="\(size)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}
