import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// SPEC §14 in the seed's model: a user with a second factor signs in in two steps.
@Suite("LoginModel's code (SPEC §14)") @MainActor
struct LoginModelCodeTests {
    static let secret = "3132333435363738393031323334353637383930"

    func store(_ directory: TemporaryDirectory) throws -> CredentialStore {
        var store = CredentialStore(path: directory.file("app.cred"), policy: try HashPolicy(rounds: 1000))
        store.passwordPolicy = .permissive
        try store.register(username: "bob", password: Password("Tangerine-River-Stone-7"), storage: .hashed)
        try store.register(username: "ana", password: Password("Tangerine-River-Stone-7"), storage: .hashed)
        #expect(
            FileManager.default.createFile(
                atPath: store.path + ".oath", contents: Data("HOTP/T30 bob - \(Self.secret)\n".utf8)))
        store.secondFactor = try SecondFactor(credentialFile: store.path)
        return store
    }

    func code(_ offset: Int64 = 0) throws -> String {
        let secret = SecretBytes(try #require(OATH.bytes(hex: ArraySlice(Self.secret.utf8))))
        return try #require(SecondFactor.code(secret: secret, time: SecondFactor.now() + offset))
    }

    @Test("password, then Código: codeRequired, then the code once; a code typed with the password at once")
    func twoSteps() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let model = LoginModel(store: try store(directory), language: .spanish)
            model.username = "bob"
            model.password = "Tangerine-River-Stone-7"
            await model.login()
            #expect(!model.isAuthenticated && model.isCodeRequired)
            #expect(model.errorMessage == "Introduzca el código de verificación.")
            #expect(model.password.isEmpty)
            model.code = try code(-30)
            await model.login()
            #expect(model.isAuthenticated && !model.isCodeRequired && model.errorMessage == nil && model.code.isEmpty)

            // A replay, typed with the password: a wrong password's message; no second step.
            model.password = "Tangerine-River-Stone-7"
            model.code = try code(-30)
            await model.login()
            #expect(!model.isAuthenticated && !model.isCodeRequired)
            #expect(model.errorMessage == "Usuario o contraseña incorrectos.")

            // A wrong code ends the step: the next login starts with the password.
            model.password = "Tangerine-River-Stone-7"
            await model.login()
            #expect(model.isCodeRequired)
            model.code = "000000" == (try code()) ? "111111" : "000000"
            await model.login()
            #expect(!model.isAuthenticated && !model.isCodeRequired)
            model.password = "Tangerine-River-Stone-7"
            model.code = try code()
            await model.login()
            #expect(model.isAuthenticated)

            // A user without a second factor: one step.
            model.username = "ana"
            model.password = "Tangerine-River-Stone-7"
            await model.login()
            #expect(model.isAuthenticated && !model.isCodeRequired)
        }
    }
}
