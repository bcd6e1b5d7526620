"""A person's visit through a web server in front of `credfile serve --portal` (SPEC §11),
in each language of run["languages"]: the protected page sends to the sign-in page, a
wrong password shows the message, the right one leads back to the page asked for, a
reload keeps the session, the signed-in page, sign-out, and the back button after it.
Records what the browser showed and kept at each step; BrowserPortalTests asserts.

Parameters: site (https://name:port), protected (a path of the site), prefix, user,
password, wrong_password, languages, screenshots_named (take the documentation's
screenshots: login-es.png, …)."""

import credfile_browser as cb


def visit(run, language):
    site, prefix = run["site"], run["prefix"]
    protected = site + run["protected"]
    steps = {}

    def step(name, b):
        steps[name] = {"url": b.url, "text": b.text()}

    with run.browser(language=language) as b:
        b.open(protected)
        step("first", b)
        steps["first"]["fields"] = b.fields()
        steps["first"]["lang"] = b.driver.execute_script("return document.documentElement.lang")
        steps["first"]["title"] = b.driver.title
        steps["first"]["axe"] = b.axe("login-" + language)
        if run.get("screenshots_named"):
            b.screenshot("login-" + language)

        b.sign_in(run["user"], run["wrong_password"])
        step("wrong", b)
        steps["wrong"]["session_cookie"] = b.cookie("__Host-credfile")
        steps["wrong"]["username_kept"] = b.driver.execute_script(
            "return document.querySelector('input[autocomplete=username]').value"
        )
        steps["wrong"]["axe"] = b.axe("wrong-" + language)
        if run.get("screenshots_named"):
            b.screenshot("wrong-password-" + language)

        b.sign_in(run["user"], run["password"])
        step("signed_in", b)
        steps["signed_in"]["session_cookie"] = b.cookie("__Host-credfile")
        steps["signed_in"]["cookies"] = [c["name"] for c in b.cookies()]

        b.reload()
        step("reload", b)

        b.open(site + prefix + "/")
        step("home", b)
        steps["home"]["axe"] = b.axe("home-" + language)
        if run.get("screenshots_named"):
            b.screenshot("home-" + language)

        b.sign_out()
        step("signed_out", b)
        steps["signed_out"]["session_cookie"] = b.cookie("__Host-credfile")

        b.back()  # the signed-in page
        step("back1", b)
        b.back()  # the protected page
        step("back2", b)

        b.open(protected)
        step("again", b)
    return steps


def scenario(run):
    run.result["visits"] = {language: visit(run, language) for language in run["languages"]}
    return run.result


cb.main(scenario)
