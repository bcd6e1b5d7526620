#!/usr/bin/env python3
"""The cost of a blocklist lookup in a 1 GB sorted SHA1HEX:count file (SPEC §8).

Builds a 1 GB file in the Pwned Passwords layout (sorted uppercase SHA-1, ':count', CRLF),
then measures, side by side in one run, nothing asserted:
  * pread calls per lookup (strace -c on `credfile check --passwords --blocklist`);
  * the time of N lookups (a file of N plaintext entries checked with and without the
    blocklist, the difference divided by N), against one `stat` of the file and one
    `look` (binary search with mmap, util-linux / bsdmainutils) and one `grep -c`
    (a full scan) of the same file;
  * peak RSS of that `check` against the file's size.

    python3 Benchmarks/blocklist.py [path/to/credfile]   (Benchmarks/run.sh builds it)

BLOCKLIST_MB=1024 sets the file size (default 1024); the file lives in a temporary
directory under /tmp and is removed at the end.
"""
import hashlib
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CREDFILE = sys.argv[1] if len(sys.argv) > 1 else ".build/release/credfile"
SIZE_MB = int(os.environ.get("BLOCKLIST_MB", "1024"))
WORK = tempfile.mkdtemp(prefix="credfile-blocklist-")
LOOKUPS = 2000


def build_list(path, listed):
    """A sorted SHA1HEX:count file of about SIZE_MB MB; the digests of `listed` inside."""
    line_len = 40 + 1 + 4 + 2  # digest, ':', up to 4 digits, CRLF (about 47 bytes)
    lines = SIZE_MB * 1024 * 1024 // line_len
    inserts = sorted(hashlib.sha1(p.encode()).hexdigest().upper() for p in listed)
    step = (1 << 32) // lines
    rng = random.Random(1)
    with open(path, "w", newline="") as f:
        buf = []
        for i in range(lines):
            digest = "%08X%032X" % (i * step, rng.getrandbits(128))
            while inserts and inserts[0] < digest:
                buf.append(inserts.pop(0) + ":7\r\n")
            buf.append("%s:%d\r\n" % (digest, i % 9999 + 1))
            if len(buf) >= 100_000:
                f.write("".join(buf))
                buf = []
        buf.extend(d + ":7\r\n" for d in inserts)
        f.write("".join(buf))
    return lines


def timed(args, stdin=None, repeat=5):
    """Median wall time of `args` and the child's peak RSS (KiB)."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        subprocess.run(args, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def main():
    listed = ["Listed-garden-%d" % i for i in range(10)]
    big = os.path.join(WORK, "pwned.txt")
    started = time.perf_counter()
    lines = build_list(big, listed)
    size = os.path.getsize(big)
    print(f"blocklist: {size / 2**20:.0f} MiB, {lines:,} lines, built in {time.perf_counter() - started:.0f} s")
    subprocess.run(["cat", big], stdout=subprocess.DEVNULL)  # warm the page cache: every figure is warm

    # A credential file of LOOKUPS plaintext entries, none on any list.
    creds = os.path.join(WORK, "creds.txt")
    with open(creds, "w") as f:
        for i in range(LOOKUPS):
            f.write(f"user{i},not-listed-garden-{i}\n")
    one = os.path.join(WORK, "one.txt")
    with open(one, "w") as f:
        f.write("ann,not-listed-garden\n")

    # pread calls: one lookup (the form is detected once when the option is read).
    trace = os.path.join(WORK, "strace.txt")
    counts = {}
    for name, path in (("none", None), ("one", one)):
        args = ["strace", "-f", "-c", "-o", trace, "-e", "trace=pread64", CREDFILE, "check", path or one, "--passwords"]
        if path:
            args += ["--blocklist", big]
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calls = 0
        with open(trace) as f:
            for line in f:
                parts = line.split()
                # % time, seconds, usecs/call, calls, [errors,] syscall
                if parts and parts[-1] == "pread64":
                    calls = int(parts[3])
        counts[name] = calls
    preads = counts["one"] - counts["none"]
    detect = 1  # Blocklist(path:) reads the first line once

    with_list, rss = timed([CREDFILE, "check", creds, "--passwords", "--blocklist", big])
    without, _ = timed([CREDFILE, "check", creds, "--passwords"])
    per_lookup = max(with_list - without, 0) / LOOKUPS
    stat_time, _ = timed(["stat", big], repeat=9)
    digest = hashlib.sha1(b"not-listed-garden").hexdigest().upper()
    look = shutil.which("look")
    look_time = timed([look, digest, big], repeat=9)[0] if look else None
    grep_time = timed(["grep", "-c", digest, big], repeat=3)[0]

    us = lambda s: f"{s * 1e6:,.1f} µs"
    print(f"  {'pread calls for one lookup (strace; + 1 for form detection)':<58} {preads - detect} + {detect}")
    print(f"  {'one lookup in credfile (check of %d entries, difference)' % LOOKUPS:<58} {us(per_lookup)}")
    print(f"  {'one `stat` process of the file':<58} {us(stat_time)}   lookup/stat = {per_lookup / stat_time:.3f}")
    if look_time:
        print(f"  {'one `look` process (mmap binary search)':<58} {us(look_time)}   lookup/look = {per_lookup / look_time:.3f}")
    print(f"  {'one `grep -c` process (full scan)':<58} {us(grep_time)}   lookup/grep = {per_lookup / grep_time:.5f}")
    print(f"  {'peak RSS of check with the blocklist':<58} {rss / 1024:.1f} MiB   RSS/file = {rss * 1024 / size:.4f}")


try:
    main()
finally:
    shutil.rmtree(WORK, ignore_errors=True)
