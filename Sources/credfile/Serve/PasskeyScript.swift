/// The portal's one script (SPEC §14), served at `{prefix}/passkeys.js` under
/// `script-src 'self'`: it asks the browser's WebAuthn for a passkey and posts the answer
/// as a form with the page's anti-forgery token. Without WebAuthn it says so; everything
/// else on the pages works without it.
enum PasskeyScript {
    static let source = #"""
        // credfile's passkeys (SPEC §14): registration on {prefix}/, sign-in on {prefix}/login,
        // the second factor on {prefix}/code.
        // Each step posts a form (with the page's anti-forgery token) and reads JSON back.
        "use strict";
        (function () {
          function toBase64URL(buffer) {
            let text = "";
            for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
            return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          }
          function fromBase64URL(text) {
            const plain = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
            return Uint8Array.from(plain, (c) => c.charCodeAt(0));
          }
          async function post(control, path, fields) {
            fields.csrf = control.dataset.csrf;
            const answer = await fetch(control.dataset.prefix + path, {
              method: "POST", credentials: "same-origin", body: new URLSearchParams(fields),
            });
            const json = await answer.json();
            if (!answer.ok) throw new Error(json.error || String(answer.status));
            return json;
          }
          function say(control, text) {
            const message = document.getElementById("passkey-message");
            message.textContent = control.dataset[text] || text;
            message.hidden = false;
          }

          async function register(control) {
            const options = await post(control, "/passkey/options", { purpose: "registration" });
            const credential = await navigator.credentials.create({ publicKey: {
              challenge: fromBase64URL(options.challenge),
              rp: { id: options.rpId, name: options.rpName },
              user: { id: fromBase64URL(options.userId), name: options.userName, displayName: options.userName },
              pubKeyCredParams: [{ type: "public-key", alg: -7 }],
              authenticatorSelection: { residentKey: "required", userVerification: "required" },
              excludeCredentials: options.exclude.map((id) => ({ type: "public-key", id: fromBase64URL(id) })),
              attestation: "none", timeout: 300000,
            } });
            await post(control, "/passkey/register", {
              name: document.getElementById("passkey-name").value,
              clientDataJSON: toBase64URL(credential.response.clientDataJSON),
              attestationObject: toBase64URL(credential.response.attestationObject),
            });
            location.reload();
          }

          async function signIn(control) {
            const options = await post(control, "/passkey/options", { purpose: "sign-in" });
            const assertion = await navigator.credentials.get({ publicKey: {
              challenge: fromBase64URL(options.challenge), rpId: options.rpId,
              userVerification: "required", timeout: 300000,
            } });
            const answer = await post(control, "/passkey/sign-in", {
              rd: control.dataset.rd || "",
              credentialId: toBase64URL(assertion.rawId),
              clientDataJSON: toBase64URL(assertion.response.clientDataJSON),
              authenticatorData: toBase64URL(assertion.response.authenticatorData),
              signature: toBase64URL(assertion.response.signature),
            });
            location.assign(answer.redirect);
          }

          // The second factor after a password (the code page): the answer is posted as the
          // code form is, a navigation, so the page that follows is the server's.
          async function secondFactor(control) {
            const options = await post(control, "/passkey/options", { purpose: "second-factor" });
            const assertion = await navigator.credentials.get({ publicKey: {
              challenge: fromBase64URL(options.challenge), rpId: options.rpId,
              allowCredentials: options.allow.map((id) => ({ type: "public-key", id: fromBase64URL(id) })),
              userVerification: "discouraged", timeout: 300000,
            } });
            const form = document.createElement("form");
            form.method = "post";
            form.action = control.dataset.prefix + "/code";
            for (const [name, value] of Object.entries({
              csrf: control.dataset.csrf,
              credentialId: toBase64URL(assertion.rawId),
              clientDataJSON: toBase64URL(assertion.response.clientDataJSON),
              authenticatorData: toBase64URL(assertion.response.authenticatorData),
              signature: toBase64URL(assertion.response.signature),
            })) {
              const input = document.createElement("input");
              input.type = "hidden";
              input.name = name;
              input.value = value;
              form.appendChild(input);
            }
            document.body.appendChild(form);
            form.submit();
          }

          for (const [id, action] of [
            ["passkey-register", register], ["passkey-sign-in", signIn], ["passkey-second-factor", secondFactor],
          ]) {
            const control = document.getElementById(id);
            if (!control) continue;
            if (!window.PublicKeyCredential || !navigator.credentials) {
              control.disabled = true;
              say(control, "unsupported");
              continue;
            }
            control.addEventListener("click", (event) => {
              event.preventDefault();
              action(control).catch((error) => say(control, error.message === "sign-in-again" ? "again" : "failed"));
            });
          }
        })();

        """#
}
