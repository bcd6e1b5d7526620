#!/usr/bin/env python3
"""The state database in PostgreSQL ÷ SQLite (SPEC §15), side by side in one run with wrk,
printed as ratios (nothing is asserted). Goal: p95-class latency at most 2×.

  (1) /auth with a session cookie (`serve --portal`): the signed-in path, its session held
      in memory and checked against the state's change counter (SQLite's data_version;
      PostgreSQL's notifications of ended sessions), so neither reads the database
  (2) /auth with a new name each request (each request is a failure transaction:
      reserve = a read and one write transaction)
  (3) /auth with a cached good Basic login (each request reads the name's failures row: a
      round trip in PostgreSQL; not the issue's goal, printed for who chooses Basic)

Both `serve`s run here, on loopback, with --iterations 1000 so that hashing does not hide the
database; PostgreSQL 15 is started in a private directory (initdb, pg_ctl on a unix socket;
as root it runs as `postgres`) and stopped by PID. wrk's Lua `done` gives the p95.
    python3 Benchmarks/state.py .build/release/credfile   # BENCH_SECONDS=N (5), BENCH_ROUNDS=N (3)
Needs postgresql-15, wrk.
"""
import base64
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from ports import free_port, wait_port

# Every request a new name (a thread id and a counter, base64 by a table) with a wrong
# password: each request is one failure transaction, none is throttled.
FRESH_LUA = r"""
local b = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, c, d = s:byte(i, i + 2)
    local n = a * 65536 + (c or 0) * 256 + (d or 0)
    local chunk = ""
    for k = 3, 0, -1 do local v = math.floor(n / 64 ^ k) % 64; chunk = chunk .. b:sub(v + 1, v + 1) end
    if not c then chunk = chunk:sub(1, 2) .. "==" elseif not d then chunk = chunk:sub(1, 3) .. "=" end
    out[#out + 1] = chunk
  end
  return table.concat(out)
end
math.randomseed(os.time())
local prefix = tostring(math.random(1, 1000000000))
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, { Authorization = "Basic " .. base64("u" .. prefix .. "-" .. n .. ":wrong") })
end
"""

CREDFILE = os.path.abspath(sys.argv[1])
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PG = "/usr/lib/postgresql/15/bin"
USER, PASSWORD = "alice", "Naranjo-en-flor-2026"
WORK = tempfile.mkdtemp(prefix="credfile-state-bench-")
os.chmod(WORK, 0o755)
PGDIR = tempfile.mkdtemp(prefix="credfile-state-pg-")
CHILDREN = []


def as_postgres(argv):
    if os.geteuid() == 0:
        return ["setpriv", "--reuid", "postgres", "--regid", "postgres", "--init-groups", "--"] + argv
    return argv


# wrk's --latency prints p50/p75/p90/p99; the goal is p95, which its Lua `done` can give.
P95_LUA = 'done = function(summary, latency, requests) io.write(string.format("P95_US %d\\n", latency:percentile(95.0))) end\n'


def wrk(url, script, granted=True):
    counted = script + ".p95.lua"
    with open(counted, "w") as f:
        f.write(open(script).read() + P95_LUA)
    out = subprocess.run(
        ["wrk", "-t", "2", "-c", "8", "-d", f"{SECONDS}s", "--latency", "-s", counted, url],
        capture_output=True, text=True, check=True).stdout
    # A run whose logins were refused would measure the wrong path.
    if granted and "Non-2xx" in out:
        sys.exit(f"bench: {url} answered other than 200:\n{out}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = {}
    for p in ("50", "90", "99"):
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out).groups()
        lat[p] = float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    lat["95"] = int(re.search(r"P95_US (\d+)", out).group(1)) / 1000
    return rate, lat


def sign_in(port):
    """A session cookie for USER, through serve's sign-in form (as Benchmarks/portal.py)."""
    def request(raw):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int((re.search(rb"(?i)content-length: (\d+)", head) or re.search(rb"()", b"")).group(1) or 0)
            while len(body) < length:
                body += sock.recv(65536)
            return head.decode("latin-1"), body

    def cookie(head, name):
        found = re.search(rf"(?im)^set-cookie: {re.escape(name)}=([^;\r]+)", head)
        return found.group(1) if found else None

    host = "bench.example.test"
    head, body = request(f"GET /.credfile/login HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    pre = cookie(head, "__Host-credfile-form")
    csrf = re.search(rb'name="csrf" value="([^"]+)"', body).group(1).decode()
    form = f"csrf={csrf}&username={USER}&password={PASSWORD}"
    head, _ = request((f"POST /.credfile/login HTTP/1.1\r\nHost: {host}\r\nOrigin: https://{host}\r\n"
                       f"Cookie: __Host-credfile-form={pre}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                       f"Content-Length: {len(form)}\r\nConnection: close\r\n\r\n{form}").encode())
    token = cookie(head, "__Host-credfile")
    if not token:
        sys.exit("bench: the sign-in gave no session cookie:\n" + head)
    return "__Host-credfile=" + token


def main():
    if os.geteuid() == 0:
        shutil.chown(PGDIR, "postgres", "postgres")
    os.chmod(PGDIR, 0o700)
    subprocess.run(as_postgres([f"{PG}/initdb", "-D", f"{PGDIR}/data", "-A", "trust", "-U", "credfile"]),
                   check=True, capture_output=True, cwd="/")
    subprocess.run(as_postgres([f"{PG}/pg_ctl", "-D", f"{PGDIR}/data", "-o", f"-k {PGDIR} -c listen_addresses=",
                                "-l", f"{PGDIR}/log", "-w", "start"]), check=True, capture_output=True, cwd="/")
    postmaster = int(open(f"{PGDIR}/data/postmaster.pid").readline())
    try:
        subprocess.run([f"{PG}/psql", "-h", PGDIR, "-U", "credfile", "-d", "postgres", "-qc", "CREATE DATABASE bench"],
                       check=True)
        cred = os.path.join(WORK, "users.txt")
        subprocess.run([CREDFILE, "add", cred, USER, "--iterations", "1000"], input=PASSWORD + "\n", text=True,
                       check=True, capture_output=True)
        token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        good = os.path.join(WORK, "good.lua")
        open(good, "w").write(f'wrk.headers["Authorization"] = "Basic {token}"\n')
        fresh = os.path.join(WORK, "fresh.lua")
        open(fresh, "w").write(FRESH_LUA)
        states = {"sqlite": None, "postgresql": f"postgresql:///bench?host={PGDIR}&user=credfile"}
        urls = {}
        for name, state in states.items():
            argv = [CREDFILE, "serve", cred, "--iterations", "1000", "--log", "none"]
            if state:
                argv += ["--state", state]
            port = free_port()
            CHILDREN.append(subprocess.Popen(argv + ["--listen", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL))
            wait_port(port)
            # The portal's signed-in path: a serve of its own (--portal), one session.
            portal = free_port()
            CHILDREN.append(subprocess.Popen(argv + ["--portal", "--listen", f"127.0.0.1:{portal}"],
                                             stderr=subprocess.DEVNULL))
            wait_port(portal)
            session = os.path.join(WORK, f"session-{name}.lua")
            open(session, "w").write(f'wrk.headers["Cookie"] = "{sign_in(portal)}"\n'
                                     'wrk.headers["Host"] = "bench.example.test"\n')
            urls[name] = {"session": (f"http://127.0.0.1:{portal}/.credfile/auth", session, True),
                          "failure": (f"http://127.0.0.1:{port}/auth", fresh, False),
                          "basic": (f"http://127.0.0.1:{port}/auth", good, True)}
        # Alternating runs (SQLite first, then PostgreSQL first, …): a machine shared with
        # other work swings between runs, so each figure is the median of ROUNDS.
        results = {name: {workload: [] for workload in urls[name]} for name in states}
        for round_ in range(ROUNDS):
            for workload in ("session", "failure", "basic"):
                for name in (list(states) if round_ % 2 == 0 else list(reversed(states))):
                    url, script, granted = urls[name][workload]
                    results[name][workload].append(wrk(url, script, granted))
        median = statistics.median
        print(f"PostgreSQL ÷ SQLite, medians of {ROUNDS} alternating {SECONDS}-s runs, load average "
              f"{os.getloadavg()[0]:.1f}")
        for workload in ("session", "failure", "basic"):
            figures = {}
            for name in states:
                runs = results[name][workload]
                figures[name] = (median(r for r, _ in runs), {p: median(l[p] for _, l in runs) for p in ("50", "90", "95", "99")})
            (s_rate, s_lat), (p_rate, p_lat) = figures["sqlite"], figures["postgresql"]
            print(f"{workload:8} sqlite {s_rate:8.0f}/s p50 {s_lat['50']:.2f} p95 {s_lat['95']:.2f} p99 {s_lat['99']:.2f} ms"
                  f" | postgresql {p_rate:8.0f}/s p50 {p_lat['50']:.2f} p95 {p_lat['95']:.2f} p99 {p_lat['99']:.2f} ms"
                  f" | ratio p95 {p_lat['95'] / s_lat['95']:.2f}x{' (goal ≤ 2)' if workload != 'basic' else ''}"
                  f" p99 {p_lat['99'] / s_lat['99']:.2f}x"
                  f" rate {s_rate / p_rate:.2f}x")
    finally:
        for proc in CHILDREN:
            if proc.poll() is None:
                proc.kill()
        os.kill(postmaster, 2)
        for _ in range(200):
            try:
                os.kill(postmaster, 0)
                time.sleep(0.05)
            except ProcessLookupError:
                break
        shutil.rmtree(PGDIR, ignore_errors=True)
        shutil.rmtree(WORK, ignore_errors=True)


main()
