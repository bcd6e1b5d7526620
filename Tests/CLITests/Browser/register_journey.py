"""The seed's five steps in a real browser through nginx in front of `credfile serve --portal
--register invite` (SPEC §12): the sign-in page, its "Registrarse" link, the register page
(the invitation code), a name that is taken, a new one signed in at once and sent back to the
page asked for; then the password change, the old password refused and the new one taken.
Records what the browser showed at each step; BrowserRegistrationTests asserts.

Parameters: site, protected, prefix, taken (a name in FILE), user, password, code,
new_password."""

import credfile_browser as cb
from selenium.webdriver.common.by import By


def scenario(run):
    site, prefix = run["site"], run["prefix"]
    protected = site + run["protected"]
    steps = {}

    def step(name, b):
        steps[name] = {"url": b.url, "text": b.text()}

    def register(b, user):
        b.fill("input[autocomplete=username]", user)
        b.fill("input[autocomplete=new-password]", run["password"])
        b.fill("input[name=code]", run["code"])
        b.submit("form button[type=submit]")

    with run.browser(language="es") as b:
        b.open(protected)  # 1. the sign-in page
        step("login", b)
        b.driver.find_element(By.LINK_TEXT, "Registrarse").click()  # 2. Registrarse
        b.wait_for_url(prefix + "/register")
        step("register", b)
        steps["register"]["fields"] = b.fields()
        steps["register"]["axe"] = b.axe("register-es")
        register(b, run["taken"])  # 4. a name that exists
        step("taken", b)
        steps["taken"]["session_cookie"] = b.cookie("__Host-credfile")
        register(b, run["user"])  # 3. and 5.: registered, signed in at once
        step("registered", b)
        steps["registered"]["session_cookie"] = b.cookie("__Host-credfile")

        b.open(site + prefix + "/password")
        step("password", b)
        steps["password"]["fields"] = b.fields()
        steps["password"]["axe"] = b.axe("password-es")
        b.fill("input[name=current]", run["password"])
        b.fill("input[name=new]", run["new_password"])
        b.submit("form button[type=submit]")
        step("changed", b)

        b.sign_out()
        b.open(protected)
        b.sign_in(run["user"], run["password"])
        step("old_refused", b)
        b.sign_in(run["user"], run["new_password"])
        step("new_taken", b)
    run.result["steps"] = steps
    return run.result


cb.main(scenario)
