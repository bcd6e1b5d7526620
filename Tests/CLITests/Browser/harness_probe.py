"""The harness's own check (BrowserHarnessTests): an https page of the test's authority,
served from this process, that sets a __Host- cookie; the browser must trust the
certificate (no interstitial), keep the cookie with its attributes, and run axe."""

import http.server
import ssl
import threading

import credfile_browser as cb

PAGE = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>probe</title></head>
<body><main><h1>probe page</h1><p>served over https</p></main></body></html>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Set-Cookie", "__Host-probe=1; Path=/; Secure; HttpOnly; SameSite=Lax")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


def scenario(run):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(run["certificate"], run["key"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with run.browser(language="en") as b:
            for name in run["names"]:
                b.open("https://%s:%d/" % (name, server.server_address[1]))
                run.result.setdefault("pages", {})[name] = {
                    "text": b.text(),
                    "cookie": b.cookie("__Host-probe"),
                    "secure_context": b.driver.execute_script("return window.isSecureContext"),
                }
            run.result["axe"] = b.axe("probe")
            b.screenshot("probe")
    finally:
        server.shutdown()
    return run.result


cb.main(scenario)
