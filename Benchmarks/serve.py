#!/usr/bin/env python3
"""`credfile serve` (SPEC §10) beside the other ways a web server checks a Basic login,
measured side by side in one run with wrk, printed as ratios (nothing is asserted).

  (1) nginx auth_request → serve, cached logins/s ÷ the same static page without auth
  (2) serve's uncached logins/s ÷ (cores ÷ the time of one policy PBKDF2)
  (3) the public page's p99 while 50 clients send bad logins ÷ its p99 idle, for serve
      and for the auth_pam recipe (nginx → PAM → pam_exec → credfile pam)
  (4) the same workload through nginx auth_basic and Caddy basic_auth, bcrypt cost 10

Run as root (PAM's service file goes to /etc/pam.d; nginx workers run as www-data):
    bash Benchmarks/run.sh serve            # BENCH_QUICK=1 for 2-second runs
Needs nginx, libnginx-mod-http-auth-pam, caddy, wrk, apache2-utils (htpasswd), curl.
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from ports import free_port, wait_port

CREDFILE = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "Examples")
QUICK = os.environ.get("BENCH_QUICK") == "1"
SECONDS = 2 if QUICK else 8
ROUNDS = 600_000  # the policy: OWASP's floor, so an uncached login costs about a quarter second
USER, PASSWORD = "alice", "Naranjo-en-flor-2026"
# The flood guesses another known user's password, so §9's throttling of that name never
# touches the logins measured.
VICTIM, VICTIM_PASSWORD = "bob", "Pomelo-en-flor-2026"
WRONG = "not-the-password-at-all"
CORES = os.cpu_count()
WORK = tempfile.mkdtemp(prefix="credfile-serve-bench-")
os.chmod(WORK, 0o755)
CHILDREN = []


def start(argv, **kw):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "children.log"), "ab"), **kw)
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


def lua(name, user, password):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return write(name, f'wrk.headers["Authorization"] = "Basic {token}"\n')


RANDOM_NAMES_LUA = r"""
-- Every request a new name (12 random letters) with a wrong password: no name is
-- throttled by §9 (each fails once), so every request costs serve a dummy PBKDF2.
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(data)
  return ((data:gsub('.', function(x)
    local r, b = '', x:byte()
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and '1' or '0') end
    return r
  end) .. '0000'):gsub('%d%d%d?%d?%d?%d?', function(x)
    if #x < 6 then return '' end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == '1' and 2 ^ (6 - i) or 0) end
    return alphabet:sub(c + 1, c + 1)
  end) .. ({ '', '==', '=' })[#data % 3 + 1])
end
math.randomseed(os.time())
request = function()
  local name = ""
  for i = 1, 12 do local r = math.random(1, 26); name = name .. string.char(96 + r) end
  return wrk.format(nil, nil, { Authorization = "Basic " .. base64(name .. ":not-the-password") })
end
"""


def wrk(url, connections, seconds=SECONDS, script=None, latency=False):
    """Requests/s and the p99 latency in ms (when asked) of one wrk run."""
    argv = ["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s"]
    if latency:
        argv.append("--latency")
    if script:
        argv += ["-s", script]
    out = subprocess.run(argv + [url], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    p99 = None
    if latency:
        m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        # No request finished within the run: report the run's length as a floor.
        p99 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m and rate > 0 else seconds * 1000.0
    return rate, p99, int(non2xx.group(1)) if non2xx else 0


def during_flood(flood_url, flood_script, public_url):
    """The public page's p99 (ms) while 50 clients send bad logins to flood_url (or, with
    no script, fetch it: the control, what any flood of requests costs this machine)."""
    flood = subprocess.Popen(
        ["wrk", "-t", "2", "-c", "50", "-d", f"{SECONDS + 3}s"] + (["-s", flood_script] if flood_script else []) + [flood_url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)  # the flood is under way
    _, p99, _ = wrk(public_url, 1, latency=True)
    flood.wait()
    return p99


def checker(port, good, bad):
    """Good logins/s, the public page's p99 idle and during the bad-login flood (ms), of a
    web server on `port` that checks logins for /private/ itself."""
    wait_port(port)
    public, private = f"http://127.0.0.1:{port}/index.html", f"http://127.0.0.1:{port}/private/index.html"
    idle = wrk(public, 1, latency=True)[1]
    rate = wrk(private, 8, script=good)[0]
    return rate, idle, during_flood(private, bad, public)


def web_root():
    root = os.path.join(WORK, "html")
    os.makedirs(os.path.join(root, "private"), exist_ok=True)
    for page in ["index.html", "private/index.html"]:
        write(f"html/{page}", "a page of about a hundred bytes, as a small static page would be." * 2 + "\n")
    return root


NGINX_MAIN = """user www-data www-data;
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
{modules}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body; proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi; uwsgi_temp_path {prefix}/uwsgi; scgi_temp_path {prefix}/scgi;
    include {prefix}/site.conf;
}}
"""


def nginx(name, site, modules=""):
    prefix = os.path.join(WORK, name)
    os.makedirs(prefix, exist_ok=True)
    write(f"{name}/site.conf", site)
    write(f"{name}/nginx.conf", NGINX_MAIN.format(prefix=prefix, workers=CORES, modules=modules))
    proc = start(["nginx", "-p", prefix, "-c", f"{prefix}/nginx.conf"])
    return proc


def serve_site(port, root, sock):
    with open(os.path.join(EXAMPLES, "nginx", "credfile-serve.conf")) as f:
        text = f.read()
    return (text.replace("listen 80;", f"listen 127.0.0.1:{port};")
            .replace("root /var/www/html;", f"root {root};")
            .replace("unix:/run/credfile/web.sock", f"unix:{sock}"))


def simple_site(port, root, private):
    return f"""server {{
    listen 127.0.0.1:{port};
    root {root};
    location /private/ {{ {private} }}
}}
"""


def main():
    for tool in ["nginx", "wrk", "htpasswd", "caddy", "curl"]:
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed (Scripts/setup.sh installs it)")
    root = web_root()
    users = os.path.join(WORK, "users.txt")
    for name, password in [(USER, PASSWORD), (VICTIM, VICTIM_PASSWORD)]:
        subprocess.run([CREDFILE, "add", users, name, "--iterations", str(ROUNDS)], input=password.encode(), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(users, 0o644)
    # The flood guesses a known user's password: an unknown name costs nginx's auth_basic
    # nothing (it answers 401 before any bcrypt), a known one costs every checker a hash.
    good, bad = lua("good.lua", USER, PASSWORD), lua("bad.lua", VICTIM, WRONG)
    rows = []

    def row(what, value, goal=""):
        rows.append((what, value, goal))
        print(f"  {what:<72} {value:<22} {goal}", flush=True)

    print(f"credfile serve, {CORES} cores, policy PBKDF2-SHA256 {ROUNDS:,} rounds, {SECONDS} s per run")
    # The time of one policy PBKDF2, as credfile computes it (its own loop, one thread).
    rate = json.loads(subprocess.run([CREDFILE, "calibrate", "--json"], capture_output=True, check=True).stdout)
    pbkdf2 = ROUNDS / rate["roundsPerSecond"]
    row("one policy PBKDF2 (credfile calibrate)", f"{pbkdf2 * 1000:.0f} ms")

    # credfile serve behind nginx (the shipped recipe).
    sock = os.path.join(WORK, "serve.sock")
    tcp = free_port()
    serve = start([CREDFILE, "serve", users, "--iterations", str(ROUNDS), "--listen", f"unix:{sock}",
                   "--socket-group", "www-data", "--listen", f"127.0.0.1:{tcp}"])
    wait_port(tcp)
    port = free_port()
    web = nginx("nginx-serve", serve_site(port, root, sock))
    wait_port(port)
    public, private = f"http://127.0.0.1:{port}/index.html", f"http://127.0.0.1:{port}/private/index.html"
    subprocess.run(["curl", "-s", "-o", "/dev/null", "-K", "-", private], input=f'user = "{USER}:{PASSWORD}"'.encode())
    idle = wrk(public, 1, latency=True)[1]
    static_rate, _, _ = wrk(public, 32)
    cached_rate, _, errors = wrk(private, 32, script=good)
    row("(1) static page without auth, requests/s (nginx)", f"{static_rate:,.0f}")
    row("    cached auth_request logins/s (nginx → serve)", f"{cached_rate:,.0f}" + (f" ({errors} not 2xx)" if errors else ""))
    row("    ratio", f"{cached_rate / static_rate:.2f}", "goal ≥ 0.33")
    flooded = during_flood(private, bad, public)
    random_names = during_flood(private, write("random.lua", RANDOM_NAMES_LUA), public)
    control = during_flood(public, None, public)
    serve_p99 = (idle, flooded, control, random_names)
    stop(web)
    stop(serve)

    # (2) uncached: every login one PBKDF2, straight to serve (cache off).
    tcp = free_port()
    serve = start([CREDFILE, "serve", users, "--iterations", str(ROUNDS), "--cache-seconds", "0", "--listen", f"127.0.0.1:{tcp}"])
    wait_port(tcp)
    # What `cores` PBKDF2 threads get on this machine right now (it is shared): as many
    # calibrate processes at once, each one thread of credfile's own loop.
    runs = [subprocess.Popen([CREDFILE, "calibrate", "--json"], stdout=subprocess.PIPE) for _ in range(CORES)]
    concurrent = sum(json.loads(run.communicate()[0])["roundsPerSecond"] for run in runs) / ROUNDS
    uncached, _, errors = wrk(f"http://127.0.0.1:{tcp}/", 4 * CORES, seconds=max(SECONDS, 4), script=good)
    ideal = CORES / pbkdf2
    row("(2) uncached logins/s (serve, --cache-seconds 0)", f"{uncached:.2f}" + (f" ({errors} not 2xx)" if errors else ""))
    row("    cores ÷ one policy PBKDF2", f"{ideal:.2f}")
    row("    ratio", f"{uncached / ideal:.2f}", "goal ≥ 0.85")
    row("    the same ÷ what cores PBKDF2 threads got meanwhile (shared machine)", f"{uncached / concurrent:.2f} ({concurrent:.2f}/s)")
    stop(serve)

    row("(3) public page p99 idle / during 50 bad-login clients, nginx → serve", f"{serve_p99[0]:.2f} / {serve_p99[1]:.2f} ms")
    row("    ratio", f"{serve_p99[1] / serve_p99[0]:.1f}", "goal ≤ 5")
    row("    the same, each bad login under a new name (never throttled: a hash each)",
        f"{serve_p99[3]:.2f} ms (×{serve_p99[3] / serve_p99[0]:.1f})")
    row("    control: p99 while 50 clients fetch the public page itself (no login)",
        f"{serve_p99[2]:.2f} ms (×{serve_p99[2] / serve_p99[0]:.1f})")

    # The auth_pam recipe: nginx's workers run PAM, pam_exec, credfile pam.
    service = f"credfile-bench-{os.getpid()}"
    # pam runs as nginx's worker user, which needs a guard database it may write (§9).
    state = os.path.join(WORK, "www-data-state")
    os.makedirs(state, exist_ok=True)
    shutil.chown(state, "www-data", "www-data")
    with open(f"/etc/pam.d/{service}", "w") as f:
        f.write(f"auth required pam_exec.so expose_authtok quiet {CREDFILE} pam --iterations {ROUNDS} "
                f"--state {state}/users.guard.db {users}\n"
                "account required pam_permit.so\n")
    try:
        port = free_port()
        module = "load_module /usr/lib/nginx/modules/ngx_http_auth_pam_module.so;"
        web = nginx("nginx-pam", simple_site(port, root, f'auth_pam "bench"; auth_pam_service_name "{service}";'), module)
        pam_rate, idle, flooded = checker(port, good, bad)
        row("    the same for auth_pam (nginx → PAM → credfile pam)", f"{idle:.2f} / {flooded:.2f} ms")
        row("    ratio", f"{flooded / idle:.1f}")
        stop(web)
    finally:
        os.unlink(f"/etc/pam.d/{service}")

    # (4) the users' alternatives: bcrypt cost 10 in nginx's workers and in Caddy.
    htpasswd = subprocess.run(["htpasswd", "-nbB", "-C", "10", USER, PASSWORD], capture_output=True, text=True, check=True).stdout.strip()
    victim = subprocess.run(["htpasswd", "-nbB", "-C", "10", VICTIM, VICTIM_PASSWORD], capture_output=True, text=True, check=True).stdout.strip()
    write("htpasswd", htpasswd + "\n" + victim + "\n")
    port = free_port()
    web = nginx("nginx-basic", simple_site(port, root, f'auth_basic "bench"; auth_basic_user_file {WORK}/htpasswd;'))
    nginx_basic = checker(port, good, bad)
    stop(web)

    port = free_port()
    bcrypt = htpasswd.split(":", 1)[1]
    caddyfile = write("Caddyfile", f"""{{
\tadmin off
}}
http://127.0.0.1:{port} {{
\troot * {root}
\tbasicauth /private/* bcrypt bench {{
\t\t{USER} {bcrypt}
\t\t{VICTIM} {victim.split(":", 1)[1]}
\t}}
\tfile_server
}}
""")
    home = os.path.join(WORK, "caddy-home")
    os.makedirs(home, exist_ok=True)
    web = start(["caddy", "run", "--config", caddyfile, "--adapter", "caddyfile"],
                env={"HOME": home, "XDG_DATA_HOME": home, "XDG_CONFIG_HOME": home, "PATH": "/usr/bin:/bin"})
    caddy_basic = checker(port, good, bad)
    stop(web)

    row("(4) good logins/s: serve cached / auth_pam / nginx auth_basic / Caddy basic_auth",
        f"{cached_rate:,.0f} / {pam_rate:,.1f} / {nginx_basic[0]:,.1f} / {caddy_basic[0]:,.1f}")
    for name, (_, idle, flooded) in [("nginx auth_basic", nginx_basic), ("Caddy basic_auth", caddy_basic)]:
        row(f"    public p99 idle → flood, {name} bcrypt 10", f"{idle:.2f} → {flooded:.2f} ms (×{flooded / idle:.1f})")


if __name__ == "__main__":
    try:
        main()
    finally:
        for proc in CHILDREN:
            stop(proc)
        shutil.rmtree(WORK, ignore_errors=True)
