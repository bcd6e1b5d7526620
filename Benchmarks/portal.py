#!/usr/bin/env python3
"""`credfile serve --portal` (SPEC §11 "Fast", issue #35): the five portal figures, each a
ratio or a bound measured side by side in one run (nothing is asserted).

  (1) through nginx, signed-in requests/s (auth_request → serve with the session cookie)
      ÷ the same static page without auth                                 goal ≥ 0.33
  (2) serve's /auth with a session cookie at 1,000 requests/s: p95       goal < 1 ms
  (3) sign-in form posts/s ÷ (cores ÷ one policy PBKDF2)                  goal ≥ 0.85
  (4) a signed-in user's p99 through nginx while 50 clients post bad sign-ins ÷ idle
                                                                          goal ≤ 5
  (5) memory of 100,000 live sessions beyond serve's idle size           goal ≤ 64 MB

(2) needs a paced (open-loop) load generator, which wrk is not and wrk2 is not in Debian:
a small client of this file sends one request every millisecond on one keep-alive
connection and measures each answer from the moment it was due (not from when it was
sent), as wrk2 does, so a slow answer also counts against the requests queued behind it.
The client's own cost (Python, about 20–40 µs a request) is in every figure; the same
client against serve's stylesheet (no session) is printed beside it as the floor.

Run as root (nginx's workers run as www-data):
    bash Benchmarks/run.sh portal              # BENCH_QUICK=1 or --quick: 3-second runs, a tenth of the rounds
    .build/peers-venv/bin/python3 Benchmarks/portal.py BIN [--quick]
Needs nginx and wrk (Scripts/setup.sh installs them); Python's standard library only.
"""
import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from ports import free_port, wait_port

CREDFILE = os.path.abspath(sys.argv[1])
QUICK = "--quick" in sys.argv or os.environ.get("BENCH_QUICK") == "1"
SECONDS = 3 if QUICK else 10
SESSIONS = 100_000
# OWASP's floor, as Benchmarks/serve.py: a sign-in costs about a quarter second. A quick run
# takes a tenth, so that a loaded machine still finishes some sign-ins in its short runs.
ROUNDS = 60_000 if QUICK else 600_000
USER, PASSWORD = "alice", "Naranjo-en-flor-2026"
HOST = "bench.example.test"
CORES = os.cpu_count()
WORK = tempfile.mkdtemp(prefix="credfile-portal-bench-")
os.chmod(WORK, 0o755)
CHILDREN = []


def start(argv, **kw):
    log = open(os.path.join(WORK, "children.log"), "ab")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, **kw)
    CHILDREN.append(proc)
    return proc


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write(name, text, mode=0o644):
    path = os.path.join(WORK, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


class Connection:
    """One keep-alive HTTP/1.1 connection, every byte as sent (a few lines; no library)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self, raw):
        self.sock.sendall(raw)

    def answer(self):
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = [tuple(x.strip() for x in line.split(":", 1)) for line in lines[1:]]
        length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
        while len(self.buffer) < length:
            self.buffer += self.sock.recv(65536)
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def request(self, raw):
        self.send(raw)
        return self.answer()


def get(path, cookie=None):
    return (f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n" + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n").encode()


def cookie_of(headers, name):
    for key, value in headers:
        if key.lower() == "set-cookie" and value.startswith(name + "="):
            return value[len(name) + 1:].split(";")[0]
    return None


def form_pair(port):
    """A pre-session cookie and its form token, from the sign-in page."""
    status, headers, body = Connection(port).request(get("/.credfile/login"))
    pre = cookie_of(headers, "__Host-credfile-form")
    csrf = re.search(rb'name="csrf" value="([^"]+)"', body).group(1).decode()
    return pre, csrf


def sign_in_body(csrf, user, password):
    return f"csrf={csrf}&username={user}&password={password}"


def sign_in(port):
    """A session cookie for USER, through the form."""
    pre, csrf = form_pair(port)
    body = sign_in_body(csrf, USER, PASSWORD)
    raw = (f"POST /.credfile/login HTTP/1.1\r\nHost: {HOST}\r\nOrigin: https://{HOST}\r\n"
           f"Cookie: __Host-credfile-form={pre}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
           f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
    status, headers, _ = Connection(port).request(raw)
    token = cookie_of(headers, "__Host-credfile")
    if status != 303 or not token:
        sys.exit(f"bench: the sign-in was answered {status}")
    return "__Host-credfile=" + token


def wrk(url, connections, seconds=SECONDS, script=None, latency=False):
    argv = ["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s"]
    if latency:
        argv.append("--latency")
    if script:
        argv += ["-s", script]
    out = subprocess.run(argv + [url], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    p99 = None
    if latency:
        m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        p99 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m and rate > 0 else seconds * 1000.0
    return rate, p99, int(bad.group(1)) if bad else 0


def lua_headers(name, headers, extra=""):
    lines = [f'wrk.headers["{k}"] = "{v}"' for k, v in headers]
    return write(name, "\n".join(lines) + "\n" + extra)


def paced(port, raw, rate, seconds):
    """Latencies (s) of requests due every 1/rate s on one keep-alive connection, each from
    the moment it was due (open loop, as wrk2)."""
    conn = Connection(port)
    conn.request(raw)  # warm
    count = int(rate * seconds)
    latencies = []
    begin = time.perf_counter() + 0.01
    for i in range(count):
        due = begin + i / rate
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait) if wait > 0.0005 else None
            while time.perf_counter() < due:
                pass
        conn.send(raw)
        status, _, _ = conn.answer()
        if status != 200:
            sys.exit(f"bench: a paced request was answered {status}")
        latencies.append(time.perf_counter() - due)
    latencies.sort()
    achieved = count / (time.perf_counter() - begin)
    return latencies, achieved


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


NGINX = """user www-data www-data;
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body; proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi; uwsgi_temp_path {prefix}/uwsgi; scgi_temp_path {prefix}/scgi;
    upstream credfile {{ server unix:{sock}; keepalive 16; }}
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location /private/ {{ auth_request /.credfile/auth; }}
        location = /.credfile/auth {{
            internal;
            proxy_pass http://credfile;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
        }}
        location /.credfile/ {{
            proxy_pass http://credfile;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Real-IP $remote_addr;
        }}
    }}
}}
"""

RANDOM_BAD_SIGN_INS = r"""
-- Every post a new made-up name with a wrong password: never throttled by §9 (each name
-- fails once), so every one costs serve a dummy PBKDF2 (the worst flood for the CPU).
math.randomseed(os.time())
request = function()
  local name = ""
  for i = 1, 12 do name = name .. string.char(96 + math.random(1, 26)) end
  return wrk.format("POST", "/.credfile/login", nil, "csrf=" .. CSRF .. "&username=" .. name .. "&password=wrong-guess")
end
"""


def serve(users, state, extra=()):
    sock = os.path.join(WORK, f"serve-{len(CHILDREN)}.sock")
    tcp = free_port()
    proc = start([CREDFILE, "serve", users, "--portal", "--iterations", str(ROUNDS), "--state", state,
                  "--log", "none", "--listen", f"unix:{sock}", "--socket-group", "www-data",
                  "--listen", f"127.0.0.1:{tcp}", *extra])
    wait_port(tcp)
    return proc, sock, tcp


def main():
    for tool in ["nginx", "wrk"]:
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed (Scripts/setup.sh installs it)")
    root = os.path.join(WORK, "html")
    for page in ["index.html", "private/index.html"]:
        write(f"html/{page}", "a page of about a hundred bytes, as a small static page would be." * 2 + "\n")
    users = os.path.join(WORK, "users.txt")
    subprocess.run([CREDFILE, "add", users, USER, "--iterations", str(ROUNDS)], input=PASSWORD.encode(), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(users, 0o644)
    state = os.path.join(WORK, "state", "users.state.db")
    os.makedirs(os.path.dirname(state))

    def row(what, value, goal=""):
        print(f"  {what:<70} {value:<24} {goal}", flush=True)

    load = os.getloadavg()[0]
    print(f"credfile serve --portal, {CORES} cores, load average {load:.1f}, PBKDF2-SHA256 {ROUNDS:,} rounds, "
          f"{SECONDS} s per run{' (quick)' if QUICK else ''}")
    rate = json.loads(subprocess.run([CREDFILE, "calibrate", "--json"], capture_output=True, check=True).stdout)
    pbkdf2 = ROUNDS / rate["roundsPerSecond"]
    row("one policy PBKDF2 (credfile calibrate)", f"{pbkdf2 * 1000:.0f} ms")

    # One serve for (1), (2), (4): the address throttle set to its largest, so the flood
    # of (4) from one address is hashed (the worst case), not denied unchecked.
    proc, sock, tcp = serve(users, state, ["--address-free-failures", "100000"])
    port = free_port()
    prefix = os.path.join(WORK, "nginx")
    os.makedirs(prefix)
    write("nginx/nginx.conf", NGINX.format(prefix=prefix, workers=CORES, sock=sock, port=port, root=root))
    web = start(["nginx", "-p", prefix, "-c", f"{prefix}/nginx.conf"])
    wait_port(port)
    cookie = sign_in(tcp)
    public, private = f"http://127.0.0.1:{port}/index.html", f"http://127.0.0.1:{port}/private/index.html"
    signed = lua_headers("signed-in.lua", [("Cookie", cookie)])

    static_rate, _, _ = wrk(public, 32)
    signed_rate, _, errors = wrk(private, 32, script=signed)
    row("(1) static page without auth, requests/s (nginx)", f"{static_rate:,.0f}")
    row("    signed-in requests/s (nginx auth_request → serve, session cookie)",
        f"{signed_rate:,.0f}" + (f" ({errors} not 2xx)" if errors else ""))
    row("    ratio", f"{signed_rate / static_rate:.2f}", "goal ≥ 0.33")
    basic = lua_headers("basic.lua", [("Authorization", "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())])
    basic_rate, _, errors = wrk(private, 32, script=basic)
    row("    control: the same with a cached Basic login (§10's path) instead, ratio",
        f"{basic_rate / static_rate:.2f} ({basic_rate:,.0f}/s)" + (f" ({errors} not 2xx)" if errors else ""))

    auth = get("/.credfile/auth", cookie)
    lat, achieved = paced(tcp, auth, 1000, SECONDS)
    floor, _ = paced(tcp, get("/.credfile/style.css"), 1000, SECONDS)
    row("(2) /auth with a session cookie at 1,000/s (paced, one connection): p95",
        f"{percentile(lat, 0.95) * 1000:.3f} ms", "goal < 1 ms")
    row("    p50 / p99 / achieved rate",
        f"{percentile(lat, 0.5) * 1000:.3f} / {percentile(lat, 0.99) * 1000:.3f} ms / {achieved:,.0f}/s")
    row("    floor: the same client, serve's stylesheet (no session): p95", f"{percentile(floor, 0.95) * 1000:.3f} ms")

    pre, csrf = form_pair(tcp)
    flood = lua_headers(
        "flood.lua",
        [("Cookie", f"__Host-credfile-form={pre}"), ("Origin", f"https://{HOST}"), ("Host", HOST),
         ("Content-Type", "application/x-www-form-urlencoded")],
        f'CSRF = "{csrf}"\n' + RANDOM_BAD_SIGN_INS)
    idle = wrk(private, 1, script=signed, latency=True)[1]
    runner = subprocess.Popen(["wrk", "-t", "2", "-c", "50", "-d", f"{SECONDS + 3}s", "-s", flood,
                               f"http://127.0.0.1:{port}/.credfile/login"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(1.5)
    flooded = wrk(private, 1, script=signed, latency=True)[1]
    out = runner.communicate()[0]
    posts = re.search(r"Requests/sec:\s+([\d.]+)", out)
    refused = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    total = re.search(r"(\d+) requests in", out)
    row("(4) signed-in user's p99 through nginx, idle / during 50 clients' bad sign-ins",
        f"{idle:.2f} / {flooded:.2f} ms")
    row("    ratio", f"{flooded / idle:.1f}", "goal ≤ 5")
    row("    bad sign-ins answered meanwhile, each a new name (a hash each when queued;",
        f"{float(posts.group(1)) if posts else 0:,.1f}/s")
    row("    the rest 503 at once: the login queue is full), of them 503",
        f"{int(refused.group(1)) if refused else 0:,} of {int(total.group(1)) if total else 0:,}")
    # The control: what any 50 clients cost this machine (they fetch the static page).
    runner = subprocess.Popen(["wrk", "-t", "2", "-c", "50", "-d", f"{SECONDS + 3}s", public],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    control = wrk(private, 1, script=signed, latency=True)[1]
    runner.wait()
    row("    control: the same p99 while 50 clients fetch the static page (no sign-in)",
        f"{control:.2f} ms (×{control / idle:.1f})")
    stop(web)
    stop(proc)

    # (3) sign-in posts straight to serve, the cache of good logins off: a hash each.
    proc, sock, tcp = serve(users, state, ["--cache-seconds", "0"])
    pre, csrf = form_pair(tcp)
    posts = lua_headers(
        "sign-in.lua",
        [("Cookie", f"__Host-credfile-form={pre}"), ("Origin", f"https://{HOST}"),
         ("Content-Type", "application/x-www-form-urlencoded"), ("Host", HOST)],
        f'wrk.method = "POST"\nwrk.body = "{sign_in_body(csrf, USER, PASSWORD)}"\n')
    runs = [subprocess.Popen([CREDFILE, "calibrate", "--json"], stdout=subprocess.PIPE) for _ in range(CORES)]
    concurrent = sum(json.loads(run.communicate()[0])["roundsPerSecond"] for run in runs) / ROUNDS
    sign_ins, _, errors = wrk(f"http://127.0.0.1:{tcp}/.credfile/login", 4 * CORES, seconds=max(SECONDS, 6),
                              script=posts)
    ideal = CORES / pbkdf2
    row("(3) sign-in form posts/s (good; serve --cache-seconds 0)",
        f"{sign_ins:.2f}" + (f" ({errors} not 2xx/3xx)" if errors else ""))
    row("    cores ÷ one policy PBKDF2", f"{ideal:.2f}")
    row("    ratio", f"{sign_ins / ideal:.2f}", "goal ≥ 0.85")
    row("    the same ÷ what cores PBKDF2 threads got meanwhile (shared machine)",
        f"{sign_ins / concurrent:.2f} ({concurrent:.2f}/s)")
    stop(proc)

    # (5) memory: serve warm with one session, then SESSIONS more, each asked for once
    # (so each is held in memory), RSS before and after.
    state5 = os.path.join(WORK, "state", "memory.state.db")
    proc, sock, tcp = serve(users, state5)
    cookie = sign_in(tcp)
    conn = Connection(tcp)
    for _ in range(2000):
        conn.request(get("/.credfile/auth", cookie))
    idle_kib = rss_kib(proc.pid)
    db = sqlite3.connect(state5, timeout=30)
    key = db.execute("SELECT key FROM state_keys WHERE name = ?", (b"session-entry",)).fetchone()[0]
    with open(users, "rb") as f:
        line = next(l for l in f.read().split(b"\n") if l.startswith(USER.encode() + b","))
    digest = hmac.new(key, b"credfile entry\0" + line, hashlib.sha256).digest()
    now = int(time.time())
    tokens = [os.urandom(32) for _ in range(SESSIONS)]
    db.executemany(
        "INSERT INTO sessions (token_sha256, user, entry_digest, started, last_seen, client, user_agent) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(hashlib.sha256(t).digest(), USER.encode(), digest, now, now, b"203.0.113.9",
          b"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36")
         for t in tokens])
    db.commit()
    db.close()
    granted = [0]

    def ask(part):
        c = Connection(tcp)
        for t in part:
            value = base64.urlsafe_b64encode(t).rstrip(b"=").decode()
            if c.request(get("/.credfile/auth", "__Host-credfile=" + value))[0] == 200:
                granted[0] += 1

    threads = [threading.Thread(target=ask, args=(tokens[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    full_kib = rss_kib(proc.pid)
    stop(proc)
    beyond = (full_kib - idle_kib) / 1024
    row(f"(5) serve's RSS idle (one session) / with {SESSIONS:,} live sessions held",
        f"{idle_kib / 1024:.1f} / {full_kib / 1024:.1f} MiB")
    row(f"    beyond idle ({granted[0]:,} of {SESSIONS:,} answered 200)", f"{beyond:.1f} MiB",
        "goal ≤ 64 MB" + (" (for 100,000)" if SESSIONS == 100_000 else ""))
    if SESSIONS != 100_000:
        row("    scaled to 100,000 (quick run)", f"{beyond * 100_000 / SESSIONS:.1f} MiB", "goal ≤ 64 MB")


if __name__ == "__main__":
    try:
        main()
    finally:
        for proc in CHILDREN:
            stop(proc)
        shutil.rmtree(WORK, ignore_errors=True)
