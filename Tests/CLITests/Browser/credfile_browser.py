"""A real browser for credfile's tests: Debian's chromium, headless, driven through
Debian's chromedriver by Selenium, with axe-core 4.9 (selenium-axe-python) for accessibility.

A scenario is a small Python file beside this one that the Swift test runs with the
peers' venv python (BrowserHarness.run in Tests/CLITests/BrowserSupport.swift):

    import credfile_browser as cb

    def scenario(run):
        with run.browser(language="en") as b:
            b.open(run["url"])                      # run[...]: the test's parameters
            b.sign_in(run["user"], run["password"])
            b.screenshot("home-en")                 # a PNG in the run's screenshot folder
            run.result["axe"] = b.axe("home")       # serious/critical findings, [] when none
            run.result["text"] = b.text()
        return run.result

    cb.main(scenario)

A browser: open(url), url, text(), html(), reload(), back(), wait_for_url(part),
fill(css, text), submit(button_css), sign_in(user, password), sign_out(everywhere=False),
cookies(), cookie(name), fields(), screenshot(name), axe(page); b.driver is Selenium's.

The parameters come as JSON on standard input (never on the command line: they hold
passwords); the result goes as JSON to the file the test named. The browser trusts the
test's own certificate authority through the NSS database in the run's HOME (made by
the Swift side), so TLS is checked as for a real site: no --ignore-certificate-errors.
"""

import json
import os
import sys
import traceback

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# Languages as Chromium sends them in Accept-Language.
ACCEPT_LANGUAGES = {"es": "es-ES,es", "en": "en-US,en"}


class Run:
    """One run of a scenario: the test's parameters, the result, the browsers it starts."""

    def __init__(self, parameters):
        self.parameters = parameters
        self.result = {}
        self.screenshots = parameters["screenshots"]

    def __getitem__(self, name):
        return self.parameters[name]

    def get(self, name, default=None):
        return self.parameters.get(name, default)

    def browser(self, language="es"):
        """A new headless Chromium with its own profile, asking for pages in `language`."""
        return Browser(self, language)


class Browser:
    """One headless Chromium: open pages, sign in and out, read cookies, check with axe."""

    def __init__(self, run, language):
        self.run = run
        self.language = language
        p = run.parameters
        options = webdriver.ChromeOptions()
        options.binary_location = p["chromium"]
        profile = os.path.join(p["home"], "profile-%s-%d" % (language, id(self)))
        for flag in [
            "--headless=new",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--password-store=basic",
            "--window-size=480,720",
            "--user-data-dir=" + profile,
            "--lang=" + ACCEPT_LANGUAGES[language].split(",")[0],
            # The site's names reach the test's servers on loopback; ports stay as given.
            "--host-resolver-rules=" + ", ".join("MAP %s 127.0.0.1" % n for n in p.get("names", [])),
        ]:
            options.add_argument(flag)
        if os.geteuid() == 0:
            options.add_argument("--no-sandbox")  # Chromium's sandbox refuses to run as root
        options.add_experimental_option("prefs", {"intl.accept_languages": ACCEPT_LANGUAGES[language]})
        env = dict(os.environ, HOME=p["home"], SE_OFFLINE="true", SE_AVOID_STATS="true")
        service = Service(
            executable_path=p["chromedriver"], env=env, log_output=os.path.join(p["home"], "chromedriver.log")
        )
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(60)
        self.driver.set_script_timeout(60)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.quit()

    def quit(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass

    # Pages

    def open(self, url):
        """Loads `url` and waits for the page."""
        self.driver.get(url)

    @property
    def url(self):
        return self.driver.current_url

    def text(self):
        """The page's visible text."""
        return self.driver.find_element(By.TAG_NAME, "body").text

    def html(self):
        return self.driver.page_source

    def reload(self):
        self.driver.refresh()

    def back(self):
        self.driver.back()

    def wait_for_url(self, part, seconds=30):
        """Waits until the address holds `part` (after a redirect or a form's post)."""
        WebDriverWait(self.driver, seconds).until(lambda d: part in d.current_url)

    def submit(self, button_css="button[type=submit]"):
        """Clicks the button and waits for the next page to load."""
        old = self.driver.find_element(By.TAG_NAME, "html")
        self.driver.find_element(By.CSS_SELECTOR, button_css).click()
        WebDriverWait(self.driver, 60).until(lambda d: _stale(old))
        WebDriverWait(self.driver, 60).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )

    def fill(self, css, text):
        """Types `text` into the field `css` names (emptied first)."""
        field = self.driver.find_element(By.CSS_SELECTOR, css)
        field.clear()
        field.send_keys(text)

    def sign_in(self, user, password):
        """Types `user` and `password` into the sign-in page's fields, as a person would,
        and sends the form (the page must be the sign-in page)."""
        self.fill("input[autocomplete=username]", user)
        self.fill("input[autocomplete=current-password]", password)
        self.submit("form button[type=submit]")

    def sign_out(self, everywhere=False):
        """Sends the signed-in page's "sign out" (or "sign out everywhere") form."""
        self.submit("button.secondary" if everywhere else "form[action$='/logout'] button.primary")

    # What the browser keeps

    def cookies(self):
        """The cookies the browser stored for the page's host, with their attributes
        (name, value, domain, path, secure, httpOnly, sameSite, expiry)."""
        return self.driver.get_cookies()

    def cookie(self, name):
        for c in self.cookies():
            if c["name"] == name:
                return c
        return None

    def fields(self):
        """Every input of the page: name, type, autocomplete, and the text of its label."""
        return self.driver.execute_script(
            """
            return Array.from(document.querySelectorAll('input')).map(i => ({
                name: i.name, type: i.type, autocomplete: i.getAttribute('autocomplete'),
                id: i.id, required: i.required, form: i.form ? i.form.getAttribute('action') : null,
                label: i.labels && i.labels.length ? i.labels[0].textContent.trim() : null }));
            """
        )

    # Evidence

    def screenshot(self, name):
        """Saves the page as `name`.png in the run's screenshot folder; returns the path."""
        path = os.path.join(self.run.screenshots, name + ".png")
        self.driver.save_screenshot(path)
        self.run.result.setdefault("screenshots", []).append(name + ".png")
        return path

    def axe(self, page, impacts=("serious", "critical")):
        """Runs axe-core on the page; returns its findings of `impacts` (id, impact, help,
        the elements), and keeps every finding's id in the result under axe-all[page]."""
        from selenium_axe_python import Axe

        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        self.run.result["axe-version"] = results["testEngine"]["version"]
        self.run.result.setdefault("axe-all", {})[page] = [v["id"] for v in results["violations"]]
        self.run.result.setdefault("axe-passes", {})[page] = len(results["passes"])
        return [
            {
                "id": v["id"],
                "impact": v["impact"],
                "help": v["help"],
                "nodes": [n["html"] for n in v["nodes"]][:5],
            }
            for v in results["violations"]
            if v["impact"] in impacts
        ]


def _stale(element):
    try:
        element.is_enabled()
        return False
    except WebDriverException:
        return True


def main(scenario):
    """Runs `scenario(run)` with the parameters of standard input and writes its result
    (a JSON object) to the file the parameters name as "result"; a failure writes
    {"error": traceback} there and exits 1."""
    parameters = json.load(sys.stdin)
    run = Run(parameters)
    try:
        result = scenario(run)
        status = 0
    except Exception:  # the Swift test reports it
        result = dict(run.result, error=traceback.format_exc())
        status = 1
    with open(parameters["result"], "w", encoding="utf-8") as f:
        json.dump(result, f)
    sys.exit(status)
