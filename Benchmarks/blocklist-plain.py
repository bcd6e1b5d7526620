#!/usr/bin/env python3
"""`import` against a one-password-a-line blocklist of 120 MB (issue #25 item 8).

Builds a list of random passwords (about 120 MB, one a line), then runs
`credfile import FILE --blocklist LIST` for 20 and for 10,000 new users (none on the
list), and prints for each: the wall time, the time per user, and what the process read
from the list (the bytes `pread` returned, counted with strace when it is installed).
The list is read once per run (indexed: a keyed hash of each line, sorted), so the bytes
read are the list's size whatever the number of users; before, every lookup scanned it
from the start, twice per user (20 users read 4.8 GB in 23 s). Nothing is asserted.

    python3 Benchmarks/blocklist-plain.py [path/to/credfile]

LIST_MB (default 120) sets the list's size.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

CREDFILE = sys.argv[1] if len(sys.argv) > 1 else ".build/release/credfile"
LIST_MB = int(os.environ.get("LIST_MB", "120"))


def build_list(path):
    rng = random.Random(8)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    target = LIST_MB * 1024 * 1024
    size = 0
    lines = 0
    with open(path, "w") as f:
        chunk = []
        while size < target:
            word = "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 14)))
            chunk.append(word)
            size += len(word) + 1
            lines += 1
            if len(chunk) >= 100_000:
                f.write("\n".join(chunk) + "\n")
                chunk = []
        if chunk:
            f.write("\n".join(chunk) + "\n")
    return lines


def run_import(work, blocklist, users):
    """Exit status and seconds of a run, then the bytes read from the list in a second
    run under strace (which slows it: not timed)."""
    creds = os.path.join(work, f"creds-{users}.txt")
    stdin = "".join(f"user{i},Not-On-Any-List-{i:06d}-Password\n" for i in range(users)).encode()
    args = [CREDFILE, "import", creds, "--iterations", "1", "--blocklist", blocklist]
    if os.path.exists(creds):
        os.remove(creds)
    start = time.perf_counter()
    done = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    trace = os.path.join(work, "trace")
    strace = shutil.which("strace")
    read = None
    if strace:
        os.remove(creds)
        subprocess.run([strace, "-f", "-qq", "-e", "trace=pread64", "-o", trace] + args, input=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        read = 0
        with open(trace) as f:
            for line in f:
                value = line.rsplit("=", 1)[-1].strip().split(" ")[0]
                if value.isdigit():
                    read += int(value)
    return done.returncode, elapsed, read


def main():
    work = tempfile.mkdtemp(prefix="credfile-blocklist-plain-")
    try:
        blocklist = os.path.join(work, "list.txt")
        started = time.perf_counter()
        lines = build_list(blocklist)
        size = os.path.getsize(blocklist)
        print(f"blocklist: {size / 2**20:.0f} MiB, {lines:,} passwords, built in {time.perf_counter() - started:.0f} s")
        subprocess.run(["cat", blocklist], stdout=subprocess.DEVNULL)  # warm the page cache
        print(f"{'users':>7} {'exit':>5} {'seconds':>8} {'ms/user':>8} {'MB read':>8}  (strace: {'yes' if shutil.which('strace') else 'no'})")
        for users in (20, 10_000):
            status, elapsed, read = run_import(work, blocklist, users)
            mb = f"{read / 1e6:.0f}" if read is not None else "-"
            print(f"{users:>7} {status:>5} {elapsed:>8.2f} {elapsed / users * 1000:>8.2f} {mb:>8}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
