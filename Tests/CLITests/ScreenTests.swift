import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// The seed app's two screens (`login`, `register`) and the `add` prompt, on a real
/// pseudo-terminal: prompts read from the terminal, answers typed into it, passwords
/// read from `/dev/tty` with echo off.
@Suite struct ScreenTests {
    /// The seed app's sentences in one language.
    struct Language: CustomTestStringConvertible, Sendable {
        var name: String
        var lang: String
        var loginTitle: String
        var registerTitle: String
        var username: String
        var password: String
        var repeatPassword: String
        var granted: String
        var wrong: String
        var exists: String
        var empty: String
        var registered: String
        var mismatch: String
        var testDescription: String { name }

        static let english = Language(
            name: "English (LANG=C)", lang: "C", loginTitle: "Login", registerTitle: "Register",
            username: "Username: ", password: "Password: ", repeatPassword: "Repeat password: ",
            granted: "Access granted", wrong: "Wrong username or password.", exists: "The user already exists.",
            empty: "Username and password cannot be empty.", registered: "User registered",
            mismatch: "The passwords do not match.")
        // The seed app's own words (seed/000_0cadaabe3c4ee605.txt).
        static let spanish = Language(
            name: "Spanish (LANG=es_ES.UTF-8)", lang: "es_ES.UTF-8", loginTitle: "Iniciar sesión",
            registerTitle: "Registro", username: "Usuario: ", password: "Contraseña: ",
            repeatPassword: "Repita la contraseña: ", granted: "Acceso permitido",
            wrong: "Usuario o contraseña incorrectos.", exists: "El usuario ya existe.",
            empty: "Usuario y contraseña no pueden estar vacíos.", registered: "Usuario registrado con éxito",
            mismatch: "Las contraseñas no coinciden.")
        static let both = [english, spanish]
    }

    /// Starts `credfile arguments` on a pty in `language`.
    func start(_ arguments: [String], _ language: Language) throws -> PseudoTerminal {
        try PseudoTerminal(
            try BuiltProduct.path("credfile"), arguments + ["--iterations", "1"],
            environment: BuiltBinary.environment(lang: language.lang))
    }

    /// A file with valencia's hashed password (the seed's first user) and a plaintext one.
    func seedFile(_ session: CLISession) throws -> String {
        let file = session.path("usuarios.txt")
        let hash = try PasswordHash(hashing: Password(session.password("contrasena123")), policy: HashPolicy(rounds: 1))
        try session.write("usuarios.txt", "valencia,\(hash.string)\nusuario2,\(session.password("password456"))\n")
        return file
    }

    @Test(arguments: Language.both)
    func loginGranted(_ language: Language) throws {
        try withSession { session in
            let file = try seedFile(session)
            for (user, password) in [("valencia", "contrasena123"), ("usuario2", "password456")] {
                let tty = try start(["login", file], language)
                try tty.expect(language.loginTitle)
                try tty.expect(language.username)
                try tty.send(user + "\n")
                try tty.expect(language.password)
                try tty.send(password + "\n")
                try tty.expect(language.granted)
                #expect(tty.finish() == 0, "\(tty.text)")
                #expect(tty.showed(user + "\r\n"), "the username is echoed as typed: \(tty.text)")
                #expect(!tty.showed(password), "the password was echoed: \(tty.text)")
                session.record(tty.text)
            }
        }
    }

    @Test(arguments: Language.both)
    func loginDeniedAlikeForWrongPasswordAndUnknownUser(_ language: Language) throws {
        try withSession { session in
            let file = try seedFile(session)
            let before = session.bytes("usuarios.txt")
            var screens: [String] = []
            // Wrong password, unknown user, and the seed's substring tricks (SPEC §1).
            for (user, password) in [
                ("valencia", session.password("wrong-Pass-1~~~")), ("nadie", session.password("contrasena123")),
                ("ncia", session.password("contrasena12")), ("usuario2", session.password("password45")),
            ] {
                let tty = try start(["login", file], language)
                try tty.expect(language.username)
                try tty.send(user + "\n")
                try tty.expect(language.password)
                try tty.send(password + "\n")
                try tty.expect(language.wrong)
                #expect(tty.finish() == 1, "\(tty.text)")
                #expect(!tty.showed(password), "the password was echoed: \(tty.text)")
                #expect(!tty.text.contains(language.granted))
                session.record(tty.text)
                // Everything after the echoed username is the same whoever it was.
                screens.append(
                    String(
                        tty.text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2).joined(
                            separator: "\n")))
            }
            #expect(Set(screens).count == 1, "\(screens)")
            #expect(session.bytes("usuarios.txt") == before)
        }
    }

    @Test(arguments: Language.both)
    func registerAsksTwiceWithoutEchoThenLoginWorks(_ language: Language) throws {
        try withSession { session in
            let file = try seedFile(session)
            let password = session.password("N3w-Secret-Phrase-\(language.lang)")
            let tty = try start(["register", file], language)
            try tty.expect(language.registerTitle)
            try tty.expect(language.username)
            try tty.send("nuevo\n")
            try tty.expect(language.password)
            try tty.send(password + "\n")
            try tty.expect(language.repeatPassword)
            try tty.send(password + "\n")
            try tty.expect(language.registered)
            #expect(tty.finish() == 0, "\(tty.text)")
            #expect(tty.showed("nuevo\r\n"))
            #expect(!tty.showed(password), "the password was echoed: \(tty.text)")
            session.record(tty.text)
            #expect(try libraryGrants(file, "nuevo", password))
            #expect(session.text("usuarios.txt").contains("nuevo,$pbkdf2-sha256$1$"))

            // And the login screen lets the new user in.
            let login = try start(["login", file], language)
            try login.expect(language.username)
            try login.send("nuevo\n")
            try login.expect(language.password)
            try login.send(password + "\n")
            try login.expect(language.granted)
            #expect(login.finish() == 0)
            #expect(!login.showed(password))
            session.record(login.text)
        }
    }

    @Test(arguments: Language.both)
    func registerMismatchLeavesTheFileUntouched(_ language: Language) throws {
        try withSession { session in
            let file = try seedFile(session)
            let before = session.bytes("usuarios.txt")
            let first = session.password("First-Try-9k~~~")
            let second = session.password("Second-Try-7m~~")
            let tty = try start(["register", file], language)
            try tty.expect(language.username)
            try tty.send("nuevo\n")
            try tty.expect(language.password)
            try tty.send(first + "\n")
            try tty.expect(language.repeatPassword)
            try tty.send(second + "\n")
            try tty.expect(language.mismatch)
            #expect(tty.finish() == 2, "\(tty.text)")
            #expect(!tty.showed(first) && !tty.showed(second), "a password was echoed: \(tty.text)")
            #expect(tty.text.contains("credfile: "))
            session.record(tty.text)
            #expect(session.bytes("usuarios.txt") == before)
        }
    }

    @Test(arguments: Language.both)
    func registerExistingUser(_ language: Language) throws {
        try withSession { session in
            let file = try seedFile(session)
            let before = session.bytes("usuarios.txt")
            let password = session.password("Other-Pass-3z~~")
            let tty = try start(["register", file], language)
            try tty.expect(language.username)
            try tty.send("valencia\n")
            try tty.expect(language.password)
            try tty.send(password + "\n")
            try tty.expect(language.repeatPassword)
            try tty.send(password + "\n")
            try tty.expect(language.exists)
            #expect(tty.finish() == 3, "\(tty.text)")
            #expect(!tty.showed(password))
            session.record(tty.text)
            #expect(session.bytes("usuarios.txt") == before)
        }
    }

    @Test(arguments: Language.both)
    func registerEmptyFields(_ language: Language) throws {
        try withSession { session in
            let file = try seedFile(session)
            let before = session.bytes("usuarios.txt")
            let password = session.password("Lonely-Pass-5q~")
            // Empty username (with a password), then empty password (with a username).
            for (user, typed) in [("", password), ("alguien", "")] {
                let tty = try start(["register", file], language)
                try tty.expect(language.username)
                try tty.send(user + "\n")
                try tty.expect(language.password)
                try tty.send(typed + "\n")
                try tty.expect(language.repeatPassword)
                try tty.send(typed + "\n")
                try tty.expect(language.empty)
                #expect(tty.finish() == 2, "\(tty.text)")
                #expect(!tty.showed(password))
                session.record(tty.text)
            }
            #expect(session.bytes("usuarios.txt") == before)
        }
    }

    @Test func addOnATerminalAsksTwiceWithoutEcho() throws {
        try withSession { session in
            let file = session.path("users.txt")
            let password = session.password("Typed-Twice-8w~")
            let tty = try start(["add", file, "alice"], .english)
            try tty.expect("New password: ")
            try tty.send(password + "\n")
            try tty.expect("Repeat password: ")
            try tty.send(password + "\n")
            #expect(tty.finish() == 0, "\(tty.text)")
            #expect(!tty.showed(password), "the password was echoed: \(tty.text)")
            session.record(tty.text)
            #expect(try libraryGrants(file, "alice", password))

            // A mismatch writes nothing.
            let before = session.bytes("users.txt")
            let again = try start(["add", file, "bob"], .english)
            try again.expect("New password: ")
            try again.send(session.password("One-Thing-1a~~~") + "\n")
            try again.expect("Repeat password: ")
            try again.send(session.password("Another-2b~~~~~") + "\n")
            try again.expect("The passwords do not match.")
            #expect(again.finish() == 2)
            #expect(!again.showed("One-Thing-1a~~~") && !again.showed("Another-2b~~~~~"))
            session.record(again.text)
            #expect(session.bytes("users.txt") == before)
        }
    }
}
