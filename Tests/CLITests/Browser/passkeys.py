"""SPEC §14's passkeys in a real browser, through a web server in front of `credfile serve
--portal` with `webauthn-origin`: Chromium's virtual authenticator (CTAP2, internal, resident
keys, user verification) stands for the phone or laptop. A user signed in with a password
adds a passkey on the signed-in page, signs out, then signs in with the passkey alone and
reaches the page asked for.

Parameters: site, protected, prefix, user, password."""

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import WebDriverWait

import credfile_browser as cb


def settle(b, done):
    """Waits until the script `done` (a JavaScript expression) is true on a loaded page, or
    the passkey message is shown (the script's failure): the page may reload meanwhile."""
    shown = "(m => m && !m.hidden)(document.getElementById('passkey-message'))"
    WebDriverWait(b.driver, 60, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && ((%s) || %s);" % (done, shown)
        )
    )


def scenario(run):
    site, prefix = run["site"], run["prefix"]
    protected = site + run["protected"]
    steps = {}

    def step(name, b):
        steps[name] = {"url": b.url, "text": b.text()}

    with run.browser(language="es") as b:
        b.driver.add_virtual_authenticator(
            VirtualAuthenticatorOptions(
                protocol=VirtualAuthenticatorOptions.Protocol.CTAP2,
                transport=VirtualAuthenticatorOptions.Transport.INTERNAL,
                has_resident_key=True,
                has_user_verification=True,
                is_user_verified=True,
            )
        )
        b.open(protected)
        b.sign_in(run["user"], run["password"])
        step("signed_in", b)
        b.open(site + prefix + "/")
        step("home", b)
        steps["home"]["axe"] = b.axe("passkey-home")
        b.fill("#passkey-name", "portátil")
        b.driver.find_element(By.CSS_SELECTOR, "#passkey-register").click()
        settle(b, "document.querySelectorAll('ul.passkeys li').length > 0")
        step("registered", b)
        steps["registered"]["passkeys"] = [
            li.text for li in b.driver.find_elements(By.CSS_SELECTOR, "ul.passkeys li")
        ]
        steps["registered"]["credentials"] = len(b.driver.get_credentials())
        b.driver.execute_script("document.getElementById('passkey-register').scrollIntoView()")
        b.screenshot("passkey-registered")
        b.sign_out()
        step("signed_out", b)
        steps["signed_out"]["session_cookie"] = b.cookie("__Host-credfile") is not None

        b.open(protected)
        step("login", b)
        steps["login"]["axe"] = b.axe("passkey-login")
        b.screenshot("passkey-sign-in")
        b.driver.find_element(By.CSS_SELECTOR, "#passkey-sign-in").click()
        settle(b, "!location.pathname.startsWith('%s/')" % prefix)
        step("after_passkey", b)
        steps["after_passkey"]["session_cookie"] = b.cookie("__Host-credfile") is not None

        # The passkey as the second factor after a password (the code page's button).
        b.open(site + prefix + "/")
        b.sign_out()
        b.open(protected)
        b.sign_in(run["user"], run["password"])
        step("code_page", b)
        steps["code_page"]["button"] = len(b.driver.find_elements(By.CSS_SELECTOR, "#passkey-second-factor"))
        steps["code_page"]["code_field"] = len(b.driver.find_elements(By.CSS_SELECTOR, "input[name=code]"))
        b.driver.find_element(By.CSS_SELECTOR, "#passkey-second-factor").click()
        settle(b, "!location.pathname.startsWith('%s/')" % prefix)
        step("after_second_factor", b)
        steps["after_second_factor"]["session_cookie"] = b.cookie("__Host-credfile") is not None

    run.result["steps"] = steps
    return run.result


cb.main(scenario)
