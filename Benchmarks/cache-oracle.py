"""serve's cache of good logins and the time of a throttled or locked-out answer (SPEC §10,
issue #33 item 2), measured side by side in one run; nothing is asserted.

The victim logs in through a real `credfile serve` on loopback (so its login is cached),
then the name is made throttled (50 failures a moment ago) or locked out (100) by writing
its row into the guard database with Python's sqlite3 module, as guard.py does (the guard
itself would take hours of real delays to get there). A stranger then sends pairs of
requests over one kept-alive connection, in random order within each pair: the right
password (in the cache) and a wrong one (not in it). Printed per state: the median time of
each, their ratio hit ÷ miss (the goal is 1.00 ± 0.05: the answer must not say whether the
password is in the cache), in how many pairs the hit was the faster (about half when
nothing leaks; the issue measured 576–600 of 600 before the fix), and how many of the
stranger's right passwords were granted (the goal is 0).

    .build/peers-venv/bin/python3 Benchmarks/cache-oracle.py .build/debug/credfile
    bash Benchmarks/run.sh cache-oracle        # the release build, as the .deb ships it

BENCH_QUICK=1 for 200 pairs instead of 600.
"""
import base64
import http.client
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from ports import free_port

PASSWORD = "Tangerine-River-Stone-7"
VICTIM, STRANGER = "192.0.2.10", "198.51.100.7"


def request(connection, password, client):
    """One login of `alice`; (status, seconds)."""
    token = base64.b64encode(f"alice:{password}".encode()).decode()
    start = time.perf_counter()
    connection.request("GET", "/auth", headers={"Authorization": f"Basic {token}", "X-Real-IP": client})
    response = connection.getresponse()
    response.read()
    return response.status, time.perf_counter() - start


def main():
    credfile = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/credfile")
    pairs = 200 if os.environ.get("BENCH_QUICK") else 600
    work = tempfile.mkdtemp(prefix="credfile-cache-oracle")
    path = os.path.join(work, "users.cred")
    subprocess.run([credfile, "add", path, "alice", "--iterations", "1000"], input=(PASSWORD + "\n").encode(),
                   check=True, capture_output=True)
    port = free_port()
    serve = subprocess.Popen([credfile, "serve", path, "--iterations", "1000", "--listen", f"127.0.0.1:{port}",
                              "--log", "none", "--trusted-proxy", "127.0.0.1/32"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.02)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        assert request(connection, PASSWORD, VICTIM)[0] == 200, "the victim's login failed"
        database = path + ".guard.db"
        print(f"serve's cache and a throttled or locked-out name ({credfile}; {pairs} pairs each, one connection)")
        print(f"{'state':<12} {'hit (µs)':>9} {'miss (µs)':>10} {'hit ÷ miss':>11} {'hit faster':>11} "
              f"{'granted':>8}  goal")
        for state, count, locked in (("throttled", 50, 0), ("locked-out", 100, 1)):
            db = sqlite3.connect(database)
            now_ms = int(time.time() * 1000)
            db.executescript("DELETE FROM failures; UPDATE names SET count = 1;"
                             f"INSERT INTO failures VALUES (CAST('alice' AS BLOB), {count}, {now_ms}, {locked});")
            db.commit()
            db.close()
            for _ in range(50):  # warm-up
                request(connection, "w" * len(PASSWORD), STRANGER)
            hits, misses, faster, granted = [], [], 0, 0
            for i in range(pairs):
                # A wrong password of the right one's length: the header is as long either way.
                wrong = f"wrong-{i:0{len(PASSWORD) - 6}d}"
                order = [("hit", PASSWORD), ("miss", wrong)]
                random.shuffle(order)
                times = {}
                for kind, password in order:
                    status, seconds = request(connection, password, STRANGER)
                    times[kind] = seconds
                    if status == 200:
                        granted += 1
                hits.append(times["hit"])
                misses.append(times["miss"])
                faster += times["hit"] < times["miss"]
            hit, miss = statistics.median(hits), statistics.median(misses)
            print(f"{state:<12} {hit * 1e6:>9.1f} {miss * 1e6:>10.1f} {hit / miss:>11.3f} "
                  f"{faster:>5} / {pairs:<4} {granted:>8}  1.00 ± 0.05, about half, 0 granted")
        connection.close()
    finally:
        serve.terminate()
        serve.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
