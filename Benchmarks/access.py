#!/usr/bin/env python3
"""SPEC §13's benchmark, side by side in one run (nothing is asserted):

  (1) a decision of 100 rules with a group file of 1,000 groups, in-process
      (Benchmarks/access/main.swift, the release build): goal ≤ 10 µs
  (2) `credfile serve`'s /auth with those rules and groups ÷ the same /auth without them,
      wrk on loopback against two services started alike, in alternating runs: goal ≥ 0.9;
      both as requests per second and as serve's CPU time per request (utime + stime of
      the process ÷ requests answered: on a machine shared with other work the CPU time
      holds where the rate swings)

Run:  bash Benchmarks/run.sh access        (BENCH_QUICK=1 for 1-second runs)
Needs wrk and curl.
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

CREDFILE = os.path.abspath(sys.argv[1])
BENCH = os.path.abspath(sys.argv[2])
QUICK = os.environ.get("BENCH_QUICK") == "1"
SECONDS = 1 if QUICK else 2
PAIRS = 3 if QUICK else 7
USER, PASSWORD = "user311", "Naranjo-en-flor-2026"
WORK = tempfile.mkdtemp(prefix="credfile-access-bench-")
CHILDREN = []


def files():
    """The same 100 rules and 1,000 groups as Benchmarks/access/main.swift."""
    groups = "".join(
        f"group{g}: " + " ".join(f"user{(g * 37 + m * 101) % 2000}" for m in range(20)) + "\n" for g in range(1000))
    rules = "bypass host=status.example.com\n"
    for app in range(97):
        rules += [
            f"allow host=app{app}.example.com path=/admin/ group=group{app * 7}\n",
            f"bypass host=app{app}.example.com path=~^/api([/?].*)?$ method=GET\n",
            f"deny host=app{app}.example.com network=!10.0.0.0/8 network=!2001:db8::/32\n",
            f"allow host=*.app{app}.example.com user=user{app} user=user{app + 1} group=group{app}\n",
        ][app % 4]
    rules += "two-factor host=vault.example.com\nallow host=*.example.com\n"
    paths = {"rules": os.path.join(WORK, "bench.rules"), "groups": os.path.join(WORK, "bench.htgroup")}
    for key, text in (("rules", rules), ("groups", groups)):
        with open(paths[key], "w") as f:
            f.write(text)
    users = os.path.join(WORK, "users.txt")
    subprocess.run([CREDFILE, "import", users, "--iterations", "1000"], input=f"{USER},{PASSWORD}\n", text=True,
                   check=True, capture_output=True)
    return users, paths


def serve(users, extra):
    """A service on a free loopback port: (port, process)."""
    port = free_port()
    proc = subprocess.Popen(
        [CREDFILE, "serve", users, "--iterations", "1000", "--listen", f"127.0.0.1:{port}", "--trusted-proxy",
         "127.0.0.1", "--log", "none"] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    CHILDREN.append(proc)
    wait_port(port)
    return port, proc


def cpu(proc):
    """The process's user + system CPU time, in seconds."""
    with open(f"/proc/{proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(port):
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    out = subprocess.run(
        ["wrk", "-t1", "-c8", f"-d{SECONDS}s", "-H", f"Authorization: Basic {token}",
         "-H", "X-Original-URL: https://www.example.com/index.html", f"http://127.0.0.1:{port}/auth"],
        capture_output=True, text=True, check=True).stdout
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        sys.exit(f"bench: {non2xx.group(1)} answers were not 200:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), int(re.search(r"(\d+) requests in", out).group(1))


def measured(port, proc):
    """Requests per second, and CPU microseconds per request, of one wrk run."""
    before = cpu(proc)
    rate, count = wrk(port)
    return rate, (cpu(proc) - before) / count * 1e6


def main():
    print("access (SPEC §13):")
    for line in subprocess.run([BENCH], capture_output=True, text=True, check=True).stdout.splitlines():
        print("  " + line)
    users, paths = files()
    plain, plain_proc = serve(users, [])
    ruled, ruled_proc = serve(users, ["--rules", paths["rules"], "--groups", paths["groups"]])
    for port in (plain, ruled):  # the first login hashes; the rest are cached
        subprocess.run(["curl", "-s", "-o", "/dev/null", "-u", f"{USER}:{PASSWORD}", "-H",
                        "X-Original-URL: https://www.example.com/index.html", f"http://127.0.0.1:{port}/auth"],
                       check=True)
    without, with_rules = [], []
    for pair in range(PAIRS):  # alternating, in both orders: the machine's load falls on both alike
        if pair % 2 == 0:
            without.append(measured(plain, plain_proc))
            with_rules.append(measured(ruled, ruled_proc))
        else:
            with_rules.append(measured(ruled, ruled_proc))
            without.append(measured(plain, plain_proc))
    rates = sorted(y[0] / x[0] for x, y in zip(without, with_rules))
    costs = sorted(x[1] / y[1] for x, y in zip(without, with_rules))
    a_rate, b_rate = statistics.median(x[0] for x in without), statistics.median(y[0] for y in with_rules)
    a_cpu, b_cpu = statistics.median(x[1] for x in without), statistics.median(y[1] for y in with_rules)
    print(f"  /auth without rules: {a_rate:.0f} req/s, {a_cpu:.1f} µs CPU per request (medians of {PAIRS})")
    print(f"  /auth with 100 rules, 1,000 groups: {b_rate:.0f} req/s, {b_cpu:.1f} µs CPU per request")
    print(f"  with ÷ without, requests/s: {statistics.median(rates):.3f} (pairs {rates[0]:.2f}–{rates[-1]:.2f})"
          "  (goal ≥ 0.9)")
    print(f"  with ÷ without, requests per CPU second: {statistics.median(costs):.3f} "
          f"(pairs {costs[0]:.2f}–{costs[-1]:.2f})  (goal ≥ 0.9)")

try:
    main()
finally:
    for child in CHILDREN:
        child.terminate()
        child.wait()
    shutil.rmtree(WORK, ignore_errors=True)
