"""SPEC §14 in a real browser, through a web server in front of `credfile serve --portal`:
a signed-in user enrols an authenticator app on the signed-in page (the QR code and the
key, the code computed by pyotp from the key the page showed), then signs in again in two
steps: the password, then the code page, then the page asked for.

Parameters: site, protected, prefix, user, password."""

import time

import pyotp

import credfile_browser as cb
from selenium.webdriver.common.by import By


def scenario(run):
    site, prefix = run["site"], run["prefix"]
    protected = site + run["protected"]
    steps = {}

    def step(name, b):
        steps[name] = {"url": b.url, "text": b.text()}

    with run.browser(language="es") as b:
        b.open(protected)
        b.sign_in(run["user"], run["password"])
        step("signed_in", b)
        b.open(site + prefix + "/")
        step("home", b)
        b.submit("#otp-enroll")
        step("offer", b)
        key = b.driver.find_element(By.CSS_SELECTOR, "#otp-key").text
        steps["offer"]["qr"] = len(b.driver.find_elements(By.CSS_SELECTOR, "svg#otp-qr"))
        steps["offer"]["fields"] = b.fields()
        steps["offer"]["axe"] = b.axe("otp-enrol")
        totp = pyotp.TOTP(key)
        b.fill("#code", totp.now())
        b.submit("form[action$='/otp'] button.primary")
        step("enrolled", b)
        b.sign_out()

    with run.browser(language="es") as b:
        b.open(protected)
        b.sign_in(run["user"], run["password"])
        step("code_page", b)
        steps["code_page"]["fields"] = b.fields()
        steps["code_page"]["code_cookie"] = b.cookie("__Host-credfile-code") is not None
        steps["code_page"]["session_cookie"] = b.cookie("__Host-credfile") is not None
        steps["code_page"]["axe"] = b.axe("otp-code")
        # The enrolment's code is used: the next step's, within the window of one step.
        b.fill("#code", totp.at(int(time.time()) + 30))
        b.submit("form[action$='/code'] button.primary")
        step("after_code", b)
        steps["after_code"]["session_cookie"] = b.cookie("__Host-credfile") is not None

    run.result["steps"] = steps
    return run.result


cb.main(scenario)
