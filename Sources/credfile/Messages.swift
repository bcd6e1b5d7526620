import CredFile

/// Every sentence the CLI shows people, in English and in the seed app's Spanish.
/// Spanish is chosen when `LC_ALL`, `LC_MESSAGES` or `LANG` (the first one set) starts with `es`.
struct Messages {
    let spanish: Bool

    init(environment: [String: String]) {
        let locale =
            ["LC_ALL", "LC_MESSAGES", "LANG"].lazy
            .compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        spanish = locale.hasPrefix("es")
    }

    private func t(_ en: String, _ es: String) -> String { spanish ? es : en }

    var loginTitle: String { t("Login", "Iniciar sesión") }
    var registerTitle: String { t("Register", "Registro") }
    var usernamePrompt: String { t("Username: ", "Usuario: ") }
    var passwordPrompt: String { t("Password: ", "Contraseña: ") }
    /// SPEC §14: the one-time code of a user with a second factor.
    var codePrompt: String { t("Code: ", "Código: ") }
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
    var secureExecRefused: String {
        t(
            "refusing to run set-user-ID or set-group-ID (the kernel runs this process secure-exec): credfile would act with its owner's rights for whoever runs it; install it without the set-ID bit and use sudo to let a user run it as another user",
            "se niega a ejecutarse con set-user-ID o set-group-ID (el núcleo ejecuta este proceso en modo seguro): credfile actuaría con los derechos de su dueño para quien lo ejecute; instálelo sin el bit set-ID y use sudo para que un usuario lo ejecute como otro"
        )
    }

    // MARK: The guard (SPEC §9)

    var failuresWithoutGuard: String {
        t(
            "failures: logins are not guarded here (--no-guard or guard = no)",
            "failures: aquí los inicios de sesión no están protegidos (--no-guard o guard = no)")
    }
    func failuresReset(_ name: String, had: Bool) -> String {
        had
            ? t("failures of \(name) cleared", "fallos de \(name) borrados")
            : t("\(name) had no failures", "\(name) no tenía fallos")
    }
    func allFailuresReset(_ count: Int) -> String {
        t(
            "failures cleared (\(count) name\(count == 1 ? "" : "s"))",
            "fallos borrados (\(count) nombre\(count == 1 ? "" : "s"))")
    }
    func failureCount(_ count: Int) -> String {
        t("\(count) failure\(count == 1 ? "" : "s")", "\(count) fallo\(count == 1 ? "" : "s")")
    }
    func lastFailure(_ time: String) -> String { t("last \(time)", "último \(time)") }
    func sessionsEnded(_ count: Int) -> String {
        t(
            "\(count) session\(count == 1 ? "" : "s") ended",
            "\(count) sesi\(count == 1 ? "ón terminada" : "ones terminadas")")
    }
    func sessionStarted(_ time: String) -> String { t("started \(time)", "iniciada \(time)") }
    func sessionLastSeen(_ time: String) -> String { t("last seen \(time)", "vista \(time)") }
    func throttledUntil(_ time: String) -> String { t("throttled until \(time)", "en espera hasta \(time)") }
    var lockedOut: String { t("locked out", "bloqueado por fallos") }
    var locked: String { t("user locked", "usuario bloqueado") }
    var alreadyLocked: String { t("user already locked", "el usuario ya estaba bloqueado") }
    /// What `unlock` did: to the entry (`!` removed or not there) and to the guard's
    /// count (a lockout ended, failures cleared, none recorded; nil: no guard).
    func unlocked(entry: Bool, failures: Int?, wasLockedOut: Bool) -> String {
        let first =
            entry
            ? t("user unlocked", "usuario desbloqueado")
            : t("the entry was not locked", "la entrada no estaba bloqueada")
        guard let failures else { return first }
        let count = failures == 1 ? t("1 failure", "1 fallo") : t("\(failures) failures", "\(failures) fallos")
        let second =
            wasLockedOut
            ? t("the guard's lockout ended (\(count) cleared)", "fin del bloqueo por fallos (\(count) borrados)")
            : failures > 0
                ? t("\(count) cleared", "\(count) borrados")
                : t("no failures recorded", "sin fallos registrados")
        return first + "; " + second
    }
    func removed(_ count: Int) -> String {
        t(
            "user removed (\(count) line\(count == 1 ? "" : "s"))",
            "usuario eliminado (\(count) línea\(count == 1 ? "" : "s"))")
    }
    /// Appended to a SPEC §8 refusal of `import`: how to bring in passwords already in use.
    var importExistingHint: String {
        t(
            "; if these passwords are already in use, import them with --existing, or keep the file and hash it with credfile upgrade",
            "; si estas contraseñas ya están en uso, impórtelas con --existing, o conserve el archivo y cífrelo con credfile upgrade"
        )
    }

    func imported(added: Int, updated: Int) -> String {
        t("\(added) added, \(updated) updated", "\(added) añadidos, \(updated) actualizados")
    }
    func weakIterations(_ n: Int, minimum: Int) -> String {
        t(
            "warning: \(n) iterations is below the minimum of \(minimum) (OWASP)",
            "aviso: \(n) iteraciones está por debajo del mínimo de \(minimum) (OWASP)")
    }
    func shortMinimumLength(_ n: Int, floor: Int) -> String {
        t(
            "warning: a minimum password length of \(n) is below NIST's floor of \(floor) characters",
            "aviso: una longitud mínima de contraseña de \(n) está por debajo del mínimo de \(floor) caracteres del NIST"
        )
    }
    /// What `calibrate` prints before its configuration lines.
    func weakArgon2(_ parameters: String, floor: Int) -> String {
        t(
            "warning: argon2id \(parameters) is below OWASP's floor of \(floor) KiB × passes",
            "aviso: argon2id \(parameters) está por debajo del mínimo de OWASP de \(floor) KiB × pasadas")
    }
    func calibrationAdvice(file: String) -> String {
        t(
            "Put in \(file), in its top part (every credential file) or in a [/path/to/FILE] section (that file only):",
            "Ponga en \(file), en su parte de arriba (todos los archivos de credenciales) o en una sección [/ruta/al/ARCHIVO] (solo ese archivo):"
        )
    }
    var nothingToUpgrade: String {
        t("nothing to upgrade: no plaintext entries", "nada que actualizar: no hay entradas en texto plano")
    }
    func upgraded(_ n: Int, skipped: Int, hashed: Int, seconds: Double) -> String {
        t(
            "upgraded \(n) entries in \(formatted(seconds)) s (\(hashed) already hashed\(skipped > 0 ? ", \(skipped) changed meanwhile, rerun to finish" : ""))",
            "\(n) entradas actualizadas en \(formatted(seconds)) s (\(hashed) ya con hash\(skipped > 0 ? ", \(skipped) cambiaron entretanto, vuelva a ejecutar" : ""))"
        )
    }
    func upgradeStopped(by signal: String, left: Int) -> String {
        t(
            "upgrade stopped by \(signal) after committing its finished hashes; \(left) entr\(left == 1 ? "y is" : "ies are") still plaintext: run upgrade again to continue",
            "actualización detenida por \(signal) tras guardar los hashes terminados; quedan \(left) entradas en texto plano: vuelva a ejecutar upgrade para continuar"
        )
    }
    func wouldUpgrade(_ n: Int, hashed: Int) -> String {
        t(
            "dry run: would upgrade \(n) entries (\(hashed) already hashed); nothing written",
            "simulación: se actualizarían \(n) entradas (\(hashed) ya con hash); nada escrito")
    }
    func malformedKept(_ lines: [Int]) -> String {
        t(
            "malformed entries left as they are (they may hold a plaintext password) at line\(lines.count == 1 ? "" : "s") ",
            "entradas malformadas sin cambios (pueden contener una contraseña en texto plano) en línea\(lines.count == 1 ? "" : "s") "
        )
            + lines.map(String.init).joined(separator: ", ")
    }
    func weakLeft(_ n: Int) -> String {
        t(
            "\(n) weak hashes left (they are rehashed at the next login with --upgrade)",
            "\(n) hashes débiles (se rehacen en el próximo inicio de sesión con --upgrade)")
    }
    func upgradeFailed(_ reason: String) -> String {
        t(
            "warning: access granted, but the entry could not be upgraded: \(reason)",
            "aviso: acceso permitido, pero la entrada no se pudo actualizar: \(reason)")
    }

    // MARK: What the library reports, rendered from its values (findings, refused input)

    /// A finding's message: the library's English, or its Spanish here, plus the CLI's
    /// advice (the library never tells an app what to run).
    func finding(_ finding: Finding) -> String {
        let advice = t("; run 'credfile upgrade'", "; ejecute 'credfile upgrade'")
        guard spanish else { return finding.message + (finding.kind == .plaintext ? advice : "") }
        func who(_ user: [UInt8]?) -> String { user.map { " del usuario \(Escaped.quotedName($0))" } ?? "" }
        switch finding.detail {
        case .malformedEntry(let user, let reason):
            return "entrada malformada\(who(user)): \(malformed(reason))"
        case .duplicate(let user, let firstLine):
            return "entrada duplicada\(who(user)) (la primera en la línea \(firstLine)); nunca autentica"
        case .unsupportedHash(let user, let scheme):
            return "esquema de hash no admitido \(scheme)\(who(user)); nunca autentica"
        case .weakHash(let user, _, let rounds?, let minimum?):
            return "hash débil\(who(user)): \(rounds) rondas, por debajo del mínimo de \(minimum)"
        case .weakHash(let user, let scheme, nil, let minimum?):
            return "hash débil\(who(user)): \(scheme) cuesta verificarlo menos que el mínimo de \(minimum) rondas"
        case .weakHash(let user, let scheme, _, _):
            return "hash débil\(who(user)): \(scheme) ya no resiste un ataque sin conexión"
        case .costlyHash(let user, let scheme, let times):
            return
                "hash costoso\(who(user)): \(scheme) cuesta unas \(Int(times.rounded())) veces el trabajo de la política por inicio de sesión"
        case .plaintext(let count):
            return
                (count == 1
                ? "contraseña en texto plano"
                : "\(count) entradas tienen una contraseña en texto plano (esta es la primera)") + advice
        case .username(let problem):
            return "el nombre de usuario \(username(problem))"
        case .permissions(.fileAccessibleToOthers(let mode)):
            return
                "el grupo u otros pueden leer o escribir el archivo (modo \(octal(mode))); los hashes filtrados se pueden atacar sin conexión"
        case .permissions(.directoryWritableByOthers(let mode)):
            return
                "otros pueden escribir en el directorio del archivo sin el bit sticky (modo \(octal(mode))); pueden reemplazar el archivo"
        case .blocklisted(let user):
            return
                "la contraseña en texto plano\(who(user)) está en una lista de contraseñas prohibidas (de uso común o filtradas)"
        case .guardDatabase(let problem):
            let (who, path): (String, String) =
                switch problem {
                case .ownerCannotWrite(let uid, let path): ("su dueño (uid \(uid))", path)
                case .groupCannotWrite(let gid, let path): ("su grupo (gid \(gid))", path)
                case .othersCannotWrite(let path): ("otros", path)
                }
            return
                "el archivo lo puede leer \(who), que no puede escribir la base de datos de protección \(Escaped.path(path)): "
                + "sus inicios de sesión fallan (configure state con una base de datos que pueda escribir)"
        }
    }

    /// Why an input was refused, without naming the item (the caller names its line).
    /// `line` turns the index of an earlier item into the caller's line number.
    func refusal(_ refusal: CredFileError.Refusal, line: (Int) -> Int = { $0 + 1 }) -> String {
        switch refusal {
        case .username(let problem): t("username \(problem)", "el nombre de usuario \(username(problem))")
        case .password(let problem): spanish ? password(problem) : problem.description
        case .secret(let reason): t("secret: \(reason)", "secreto: \(malformed(reason))")
        case .sameUser(let first): t("same user as line \(line(first))", "el mismo usuario que la línea \(line(first))")
        case .passwordPolicy(let violation): passwordRefused(violation)
        }
    }

    /// An error as the user reads it: a refused input in the user's language, anything else as the library says it.
    func error(_ error: CredFileError) -> String {
        guard let refusal = error.refusal, error.item == nil else { return error.description }
        return self.refusal(refusal)
    }

    private func malformed(_ reason: MalformedReason) -> String {
        guard spanish else { return reason.description }
        switch reason {
        case .emptyUsername: return "usuario vacío"
        case .emptySecret: return "secreto vacío"
        case .noComma: return "falta la coma entre usuario y secreto"
        case .controlByte(let byte, let column):
            return
                "byte de control 0x\(byte < 16 ? "0" : "")\(String(byte, radix: 16, uppercase: true)) en la columna \(column)"
        case .invalidUTF8: return "no es UTF-8 válido"
        case .lineTooLong(let limit): return "la línea supera los \(limit) bytes"
        case .malformedHash(let reason): return "hash malformado (\(reason))"
        case .tooCostly(let why):
            if let memory = why.memory {
                return
                    "demasiado costoso: \(why.scheme) reservaría \(TooCostly.mebibytes(memory)) MiB por inicio de sesión "
                    + "(max-memory \(TooCostly.mebibytes(why.maximumMemory)) MiB)"
            }
            return
                "demasiado costoso: \(why.scheme) tardaría unos \(TooCostly.seconds(why.seconds ?? 0)) s de CPU por inicio "
                + "de sesión (max-work \(TooCostly.seconds(why.maximumSeconds ?? 0)) s)"
        }
    }

    private func username(_ problem: Username.Problem) -> String {
        guard spanish else { return problem.description }
        switch problem {
        case .empty: return "está vacío"
        case .tooLong(let limit): return "supera los \(limit) bytes"
        case .invalidUTF8: return "no es UTF-8 válido"
        case .comma: return "contiene una coma"
        case .controlCharacter: return "contiene un carácter de control"
        case .edgeWhitespace: return "tiene espacios al principio o al final"
        case .startsWithCommentMark: return "empieza por '#'"
        }
    }

    private func password(_ problem: PasswordRules.Problem) -> String {
        switch problem {
        case .empty: "la contraseña está vacía"
        case .tooLong(let limit): "la contraseña supera los \(limit) bytes"
        case .forbiddenByte: "la contraseña contiene un NUL, CR o LF"
        case .plaintextLooksLikeHash:
            "una contraseña en texto plano no puede empezar por '$' ni por '{ESQUEMA}', ni ser '!' delante de un hash así (se leería como un hash o una entrada bloqueada)"
        case .plaintextNotText: "una contraseña en texto plano debe ser UTF-8 válido sin caracteres de control"
        }
    }

    private func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: New passwords (SPEC §8) and imports of hashes (SPEC §5)

    /// Why a new password is refused; never the password itself.
    func passwordRefused(_ violation: PasswordViolation) -> String {
        switch violation {
        case .tooShort(let minimum):
            t(
                "password refused: it needs at least \(minimum) characters",
                "contraseña rechazada: debe tener al menos \(minimum) caracteres")
        case .tooLong(let maximum):
            t(
                "password refused: it is longer than \(maximum) bytes",
                "contraseña rechazada: tiene más de \(maximum) bytes")
        case .forbiddenCharacter:
            t(
                "password refused: it contains a NUL, CR or LF",
                "contraseña rechazada: contiene un NUL, CR o LF")
        case .containsUsername:
            t(
                "password refused: it contains the username",
                "contraseña rechazada: contiene el nombre de usuario")
        case .containsContextWord:
            t(
                "password refused: it contains the name of this file or of the program (credfile)",
                "contraseña rechazada: contiene el nombre de este archivo o del programa (credfile)")
        case .blocklisted(.builtIn):
            t(
                "password refused: it is on the list of commonly used passwords",
                "contraseña rechazada: está en la lista de contraseñas de uso común")
        case .blocklisted:
            t(
                "password refused: it is on the blocklist",
                "contraseña rechazada: está en la lista de contraseñas prohibidas")
        }
    }
    /// `import --from shadow`: a user not imported.
    func importSkipped(_ name: String, line: Int, reason: SkippedUser.Reason) -> String {
        switch reason {
        case .locked:
            t(
                "standard input line \(line): \(name) skipped: the account is locked",
                "línea \(line) de la entrada estándar: \(name) omitido: la cuenta está bloqueada")
        case .noPassword:
            t(
                "standard input line \(line): \(name) skipped: no password",
                "línea \(line) de la entrada estándar: \(name) omitido: no tiene contraseña")
        }
    }

    private func formatted(_ seconds: Double) -> String {
        let hundredths = Int((seconds * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
