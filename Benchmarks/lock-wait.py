#!/usr/bin/env python3
"""The lock wait of 32 concurrent writers, credfile processes each (issue #25 item 11).

Every writer runs `credfile passwd FILE userN` again and again for DURATION seconds, on
one credential file of USERS lines (a rewrite of the whole file each time, under the
lock), and times each run. Run once with a single writer first: its median is the cost
of a write without waiting, and a write's lock wait is its time minus that. Nothing is
asserted; it prints, per binary, the writes, the timeouts (exit 5 after --lock-timeout)
and the percentiles of the wait, side by side:

    python3 Benchmarks/lock-wait.py BLOCKING_CREDFILE [POLLED_CREDFILE]

BLOCKING_CREDFILE is this tree's release build (blocking flock in the kernel's queue,
bounded by a timer). POLLED_CREDFILE is a build of the commit before that change
(LOCK_NB polled with sleeps of 1 ms doubling to 50 ms), made for instance with

    git archive a589ad2^ | tar -x -C /tmp/polled && (cd /tmp/polled && \
        swift build -c release --static-swift-stdlib --product credfile)

WRITERS (32), DURATION (60 s), USERS (20,000) and LOCK_TIMEOUT (15 s) can be set in
the environment.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

WRITERS = int(os.environ.get("WRITERS", "32"))
DURATION = float(os.environ.get("DURATION", "60"))
USERS = int(os.environ.get("USERS", "20000"))
LOCK_TIMEOUT = os.environ.get("LOCK_TIMEOUT", "15")
PASSWORD = b"Benchmark-Lock-Password-2026\n"


def make_file(directory):
    path = os.path.join(directory, "users.txt")
    with open(path, "w") as f:
        for i in range(USERS):
            f.write(f"user{i},plain-password-number-{i}\n")
    os.chmod(path, 0o600)
    return path


def writer(binary, path, user, until, results):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C"}
    args = [binary, "passwd", path, user, "--iterations", "1", "--lock-timeout", LOCK_TIMEOUT]
    while time.monotonic() < until:
        start = time.monotonic()
        done = subprocess.run(args, input=PASSWORD, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        results.append((time.monotonic() - start, done.returncode))


def run(binary, writers, duration):
    with tempfile.TemporaryDirectory(prefix="credfile-lock-") as directory:
        path = make_file(directory)
        results = []
        until = time.monotonic() + duration
        threads = [threading.Thread(target=writer, args=(binary, path, f"user{i}", until, results)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
    return values[k]


def main():
    binaries = [("blocking", sys.argv[1])] + ([("polled", sys.argv[2])] if len(sys.argv) > 2 else [])
    print(f"{WRITERS} writers, {DURATION:.0f} s each run, {USERS:,} lines (a rewrite per write), lock timeout {LOCK_TIMEOUT} s")
    print(f"{'lock wait':<10} {'writes':>7} {'timeouts':>9} {'alone':>8} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}  (seconds)")
    for name, binary in binaries:
        alone = statistics.median(t for t, rc in run(binary, 1, 5) if rc == 0)
        results = run(binary, WRITERS, DURATION)
        waits = [max(t - alone, 0) for t, _ in results]
        timeouts = sum(1 for _, rc in results if rc == 5)
        print(f"{name:<10} {len(results):>7} {timeouts:>9} {alone:>8.3f} {percentile(waits, 50):>8.3f} "
              f"{percentile(waits, 90):>8.3f} {percentile(waits, 99):>8.3f} {max(waits):>8.3f}")


if __name__ == "__main__":
    main()
