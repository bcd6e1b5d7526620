#!/usr/bin/env python3
"""credfile's benchmarks: ratios measured side by side in one run, never asserted.

Prints one table: PBKDF2 rates against OpenSSL and the compression-function limit
(pbkdf2-limits.sh: the C loops, with and without SHA-NI);
check / verify lookup / one-user rewrite / upgrade against grep, cp and --jobs 1;
verify timing per outcome against the unknown-user case; peak memory.

Run through Benchmarks/run.sh, which builds credfile in release mode first.
"""
import os
import random
import resource
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CREDFILE = sys.argv[1] if len(sys.argv) > 1 else ".build/release/credfile"
QUICK = os.environ.get("BENCH_QUICK") == "1"
WORK = tempfile.mkdtemp(prefix="credfile-bench-")
ROWS = []


def row(section, what, value, goal=""):
    ROWS.append((section, what, value, goal))
    print(f"  {what:<58} {value:<24} {goal}", flush=True)


def run(argv, stdin=b"", check=True):
    """Runs argv; returns (seconds, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(stdin)
    elapsed = time.perf_counter() - start
    if check and proc.returncode not in (0, 1):
        sys.exit(f"bench: {argv[:3]} exited {proc.returncode}: {err.decode(errors='replace')}")
    return elapsed, out


def peak_rss_kib(argv, stdin=b""):
    """Peak RSS of one run of argv, measured by GNU time."""
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, input=stdin,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return int(proc.stderr.decode().strip().splitlines()[-1])


def interleaved_medians(cases, repeats):
    """cases: {name: (argv, stdin, setup)}; runs them round-robin; returns medians."""
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (argv, stdin, setup) in cases.items():
            if setup:
                setup()
            times[name].append(run(argv, stdin)[0])
    return {name: statistics.median(t) for name, t in times.items()}


def interleaved_cpu_times(cases, repeats):
    """Like interleaved_medians, but every run's wall time and the child's CPU time (user +
    system), unreduced: on a loaded machine wall time mostly measures the neighbours, CPU
    time the work."""
    wall = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (argv, stdin, _) in cases.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[name].append(run(argv, stdin)[0])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def make_big_file(path, lines):
    with open(path, "w") as f:
        for i in range(lines):
            f.write("user%06d,password%06d\n" % (i, i))


def openssl_limit(algorithm, block, multi=1):
    """Compression-function limit in PBKDF2 iterations/s: speed ÷ block ÷ 2."""
    argv = ["openssl", "speed", "-evp", algorithm, "-bytes", "8192", "-seconds", "2"]
    if multi > 1:
        argv[2:2] = ["-multi", str(multi)]
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith(algorithm + " ")][-1]  # "sha256  1490695.76k"
    return float(line.split()[-1].rstrip("k")) * 1000 / block / 2


def calibrate(algorithm):
    _, out = run([CREDFILE, "calibrate", "--json", "--algorithm", algorithm])
    text = out.decode()
    get = lambda key: float(re.search(f'"{key}":([0-9.]+)', text).group(1))
    return get("roundsPerSecond"), get("openSSLRoundsPerSecond")


def pbkdf2_limits_rows():
    """Benchmarks/pbkdf2-limits.sh (issue #29): the C loops against OpenSSL's bulk rate,
    side by side in one process, on this CPU as it is and with OpenSSL's SHA extensions
    masked. Each ratio line becomes a row; the CPU lines are printed as they come."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pbkdf2-limits.sh")
    out = subprocess.run(["bash", script], capture_output=True, text=True, check=True).stdout
    goals = {"sha256 SHA_NI loop / limit": "goal ≥ 0.90", "sha256 TRANSFORM loop / limit": "",
             "sha512 TRANSFORM loop / limit": "goal ≥ 0.90",
             "sha256 two chains interleaved (SHA_NI pair) / limit": "goal ≥ 1.2"}
    run_name = "SHA-NI"
    for line in out.splitlines():
        if line.startswith(("cpu:", "OpenSSL")):
            print("  " + line)
            if "OPENSSL_ia32cap=:" in line:
                run_name = "OpenSSL without SHA extensions"
            continue
        match = re.match(r"  (.+?)\s{2,}(\S.*)$", line)
        if match:
            what, value = match.groups()
            goal = goals.get(what, "")
            if run_name != "SHA-NI" and what == "sha256 TRANSFORM loop / limit":
                goal = "goal ≥ 0.90"  # the loop CPUs without SHA-NI run
            row("pbkdf2", f"[{run_name}] {what}", value, goal)


def pbkdf2_section():
    print("PBKDF2 (one thread unless noted)")
    pbkdf2_limits_rows()
    # credfile calibrate times wall clock (it sizes a login), so on a loaded machine these
    # read low; the rows above count CPU time side by side.
    print("  through the CLI (credfile calibrate, wall time, ÷ openssl speed, one after the other):")
    cores = os.cpu_count() or 1
    for algorithm, block, goal in (("sha256", 64, 0.90), ("sha512", 128, 0.90)):
        fast, openssl = calibrate(algorithm)
        limit = openssl_limit(algorithm, block)
        row("pbkdf2", f"{algorithm}: credfile rounds/s", f"{fast/1e6:.2f} M")
        row("pbkdf2", f"{algorithm}: PKCS5_PBKDF2_HMAC rounds/s", f"{openssl/1e6:.2f} M")
        row("pbkdf2", f"{algorithm}: limit (openssl speed ÷ {block} ÷ 2)", f"{limit/1e6:.2f} M")
        row("pbkdf2", f"{algorithm}: credfile ÷ limit", f"{fast/limit:.2f}", f"goal ≥ {goal:.2f}")
        row("pbkdf2", f"{algorithm}: credfile ÷ PKCS5_PBKDF2_HMAC", f"{fast/openssl:.2f}×")
    if cores > 1:
        # all cores: run one calibrate per core at once and add the rates up
        procs = [subprocess.Popen([CREDFILE, "calibrate", "--json"], stdout=subprocess.PIPE, text=True)
                 for _ in range(cores)]
        total = sum(float(re.search('"roundsPerSecond":([0-9.]+)', p.communicate()[0]).group(1)) for p in procs)
        limit = openssl_limit("sha256", 64, multi=cores)
        row("pbkdf2", f"sha256 on {cores} cores: credfile rounds/s", f"{total/1e6:.2f} M")
        row("pbkdf2", f"sha256 on {cores} cores: credfile ÷ limit", f"{total/limit:.2f}")
    baseline = os.environ.get("BENCH_BASELINE")
    if baseline:
        # On a loaded machine the limit moves between measurements: compare against another
        # build (e.g. main's) with calibrations alternated within the same minute.
        for algorithm in ("sha256", "sha512"):
            ours, theirs = [], []
            for _ in range(3 if QUICK else 7):
                ours.append(calibrate(algorithm)[0])
                out = run([baseline, "calibrate", "--json", "--algorithm", algorithm])[1].decode()
                theirs.append(float(re.search('"roundsPerSecond":([0-9.]+)', out).group(1)))
            ratio = statistics.median(ours) / statistics.median(theirs)
            row("pbkdf2", f"{algorithm}: credfile ÷ BENCH_BASELINE (medians, alternated)", f"{ratio:.2f}", "goal ≥ 0.97")


def file_section():
    lines = 100_000 if QUICK else 1_000_000
    big = os.path.join(WORK, "big.txt")
    make_big_file(big, lines)
    size = os.path.getsize(big)
    print(f"Files ({lines:,} lines, {size/1e6:.0f} MB; medians of interleaved runs)")
    reps = 5 if QUICK else 15
    last = "user%06d" % (lines - 1)
    pw = ("password%06d\n" % (lines - 1)).encode()
    grep_out = os.path.join(WORK, "grep.out")  # GNU grep short-cuts output to /dev/null
    m = interleaved_medians({
        "check": ([CREDFILE, "check", big], b"", None),
        "grep -c": (["sh", "-c", f"grep -c '' {big} > {grep_out}"], b"", None),
        "verify": ([CREDFILE, "verify", "--iterations", "1", big, last], pw, None),
        "grep -m1": (["sh", "-c", f"grep -m1 -F -x '{last},password{last[4:]}' {big} > {grep_out}"], b"", None),
    }, reps)
    row("files", "credfile check ÷ grep -c ''", f"{m['check']/m['grep -c']:.2f}  ({m['check']*1e3:.0f} ms / {m['grep -c']*1e3:.0f} ms)", "goal ≤ 3")
    row("files", "credfile verify (last user, --iterations 1) ÷ grep -m1 -F -x",
        f"{m['verify']/m['grep -m1']:.2f}  ({m['verify']*1e3:.0f} ms / {m['grep -m1']*1e3:.0f} ms)", "goal ≤ 4")
    row("files", "peak RSS of that verify", f"{peak_rss_kib([CREDFILE, 'verify', '--iterations', '1', big, last], pw)/1024:.0f} MB", "goal ≤ 64")
    row("files", "peak RSS of check", f"{peak_rss_kib([CREDFILE, 'check', big])/1024:.0f} MB")

    hashed_file_rows(lines, reps)


def make_hashed_file(path, lines, last_rounds=1):
    """`user,$pbkdf2-sha256$1200000$<16-byte salt>$<32-byte checksum>` lines: check and
    list never verify, so the hashes need not be right, only well-formed. The file is
    0600, so check's only findings are its lines'. The last user's hash has
    `last_rounds` rounds (1 by default, so `verify` of it measures the lookup)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./"
    rng = random.Random(11)
    with open(path, "w") as f:
        for i in range(lines):
            salt = "".join(rng.choice(alphabet) for _ in range(21)) + "A"  # 16 bytes: low bits zero
            checksum = "".join(rng.choice(alphabet) for _ in range(42)) + "A"  # 32 bytes
            rounds = last_rounds if i == lines - 1 else 1200000
            f.write("user%06d,$pbkdf2-sha256$%d$%s$%s\n" % (i, rounds, salt, checksum))


def hashed_file_rows(lines, reps):
    """#14's read-only commands on a file of hashes, side by side with the text tools."""
    big = os.path.join(WORK, "hashed.txt")
    make_hashed_file(big, lines)
    os.chmod(big, 0o600)
    last = "user%06d" % (lines - 1)
    with open(big) as f:
        last_line = f.read().splitlines()[-1]
    out = os.path.join(WORK, "tool.out")
    m = interleaved_medians({
        "check": ([CREDFILE, "check", big], b"", None),
        "grep -c": (["sh", "-c", f"grep -c '' {big} > {out}"], b"", None),
        "list": (["sh", "-c", f"{CREDFILE} list {big} > {out}"], b"", None),
        "cut": (["sh", "-c", f"cut -d, -f1 {big} > {out}"], b"", None),
        "verify": ([CREDFILE, "verify", "--iterations", "1", big, last], b"wrong\n", None),
        "grep -m1": (["sh", "-c", f"grep -m1 -F -x '{last_line}' {big} > {out}"], b"", None),
    }, reps)
    row("files", "hashed file: check ÷ grep -c ''", f"{m['check']/m['grep -c']:.2f}  ({m['check']*1e3:.0f} ms / {m['grep -c']*1e3:.0f} ms)", "goal ≤ 3")
    row("files", "hashed file: list ÷ cut -d, -f1", f"{m['list']/m['cut']:.2f}  ({m['list']*1e3:.0f} ms / {m['cut']*1e3:.0f} ms)", "goal ≤ 3")
    row("files", "hashed file: verify (last user, --iterations 1) ÷ grep -m1 -F -x",
        f"{m['verify']/m['grep -m1']:.2f}  ({m['verify']*1e3:.0f} ms / {m['grep -m1']*1e3:.0f} ms)", "goal ≤ 4")
    size = os.path.getsize(big) / 2**20
    rss = peak_rss_kib([CREDFILE, "verify", "--iterations", "1", big, last], b"wrong\n") / 1024
    row("files", "hashed file: peak RSS of that verify", f"{rss:.0f} MB (file {size:.0f} MB)", "goal ≤ 64 MB + file")
    row("files", "hashed file: peak RSS of check", f"{peak_rss_kib([CREDFILE, 'check', big])/1024:.0f} MB")
    row("files", "hashed file: peak RSS of list", f"{peak_rss_kib([CREDFILE, 'list', big])/1024:.0f} MB")


def scale_section():
    """One-user changes on plaintext and hashed files, and upgrade's memory (issue #14)."""
    lines = 100_000 if QUICK else 1_000_000
    reps = 5 if QUICK else 11
    big = os.path.join(WORK, "scale-plain.txt")
    make_big_file(big, lines)
    size = os.path.getsize(big)
    print(f"One-user changes and upgrade memory ({lines:,} lines; medians of interleaved runs)")
    one_user_section(big, "plaintext", lines, reps)
    hashed = os.path.join(WORK, "hashed.txt")
    make_hashed_file(hashed, lines)
    one_user_section(hashed, "hashed", lines, reps)

    # Upgrade of the big file at 1 round: peak memory against the file before and after.
    work = os.path.join(WORK, "rewrite.txt")
    shutil.copy(big, work)
    rss = peak_rss_kib([CREDFILE, 'upgrade', '--iterations', '1', work]) / 1024
    before, after = size / 2**20, os.path.getsize(work) / 2**20
    row("scale", "peak RSS of upgrade (--iterations 1) − max(file before, after)",
        f"{rss - max(before, after):.0f} MB  ({rss:.0f} MB; file {before:.0f} → {after:.0f} MB)", "goal ≤ 64")


def one_user_section(source, kind, lines, reps):
    """delete and passwd of one user against the floor (cp + fsync + rename + dir fsync),
    interleaved in one run."""
    size = os.path.getsize(source)
    victims = iter(random.Random(7).sample(range(lines), 2 * reps + 2))
    work = os.path.join(WORK, "rewrite.txt")
    floor_src = os.path.join(WORK, "floor.txt")
    shutil.copy(source, work)
    shutil.copy(source, floor_src)
    floor_script = f"cp {floor_src} {floor_src}.tmp && sync {floor_src}.tmp && mv {floor_src}.tmp {floor_src} && sync {WORK}"
    times = {"delete": [], "passwd": [], "floor": []}
    for _ in range(reps):
        times["delete"].append(run([CREDFILE, "delete", work, "user%06d" % next(victims)])[0])
        times["floor"].append(run(["sh", "-c", floor_script])[0])
        times["passwd"].append(run([CREDFILE, "passwd", "--iterations", "1", work, "user%06d" % next(victims)],
                                   b"a-new-password-1\n")[0])
    f = statistics.median(times["floor"])
    for command in ("delete", "passwd"):
        t = statistics.median(times[command])
        row("scale", f"{kind} file ({size/1e6:.0f} MB): {command} one user ÷ cp + fsync + rename",
            f"{t/f:.2f}  ({t*1e3:.0f} ms / {f*1e3:.0f} ms)", "goal ≤ 2")
    shutil.copy(source, work)
    victim = "user%06d" % (lines // 2)
    # The file is mapped under the lock: only the pages passwd reads count in its RSS.
    rss = peak_rss_kib([CREDFILE, 'passwd', '--iterations', '1', work, victim], b'a-new-password-1' + bytes([10])) / 1024
    row("scale", f"{kind} file: peak RSS of passwd", f"{rss:.0f} MB (file {size / 2**20:.0f} MB)")


def upgrade_section():
    entries = 500 if QUICK else 2000
    rounds = 20_000
    print(f"Upgrade ({entries} plaintext entries, {rounds} rounds each)")
    src = os.path.join(WORK, "upgrade-src.txt")
    make_big_file(src, entries)
    work = os.path.join(WORK, "upgrade.txt")

    def fresh():
        shutil.copy(src, work)
    reps = 3 if QUICK else 5
    m = interleaved_medians({
        "jobs1": ([CREDFILE, "upgrade", "--iterations", str(rounds), "--jobs", "1", work], b"", fresh),
        "jobs2": ([CREDFILE, "upgrade", "--iterations", str(rounds), "--jobs", "2", work], b"", fresh),
    }, reps)
    row("upgrade", "upgrade --jobs 2 speed-up over --jobs 1", f"{m['jobs1']/m['jobs2']:.2f}×  ({m['jobs1']:.2f} s / {m['jobs2']:.2f} s)", "goal ≥ 1.9")

    # Per core (issue #29): upgrade --jobs 1 hashes two passwords at once where the PRF
    # interleaves (SHA-256 with SHA-NI). Its rounds per CPU second ÷ the single-chain limit
    # (openssl speed, which also counts CPU time), the limit measured before and after.
    ratios = []
    for _ in range(reps):
        before = openssl_limit("sha256", 64)
        fresh()
        start = resource.getrusage(resource.RUSAGE_CHILDREN)
        run([CREDFILE, "upgrade", "--iterations", str(rounds), "--jobs", "1", work])
        end = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime
        after = openssl_limit("sha256", 64)
        ratios.append(entries * rounds / cpu / ((before + after) / 2))
    ratios.sort()
    row("upgrade", "upgrade --jobs 1: rounds per CPU second ÷ single-chain limit (median, range)",
        f"{statistics.median(ratios):.2f}×  [{ratios[0]:.2f}, {ratios[-1]:.2f}]", "goal ≥ 1.2 (SHA-NI)")


def credfile_hash(password, *options):
    return subprocess.run([CREDFILE, "hash", *options], input=password + b"\n",
                          capture_output=True).stdout.decode().strip()


def timing_section():
    """SPEC §3.1's timing rule: a denied login of every entry kind takes the time of an
    unknown name's, within 5 %, entries costlier than the policy included. Each case is a
    file as a site would have it (policy users plus the entry in question) with the
    options it is checked under; its rows are that file's kinds, wrong password, ÷ the
    unknown name in the same file, all cases interleaved in one run."""
    import base64, hashlib
    pw = b"right-password-2026"
    def mkpasswd(*args):
        try:
            return subprocess.run(["mkpasswd", "--stdin", *args], input=pw, capture_output=True,
                                  check=True).stdout.decode().strip()
        except (OSError, subprocess.CalledProcessError):
            return None
    def htpasswd_bcrypt(cost):
        try:
            out = subprocess.run(["htpasswd", "-nbB", "-C", str(cost), "u", pw.decode()], capture_output=True,
                                 check=True).stdout.decode().strip()
            return out.split(":", 1)[1]
        except (OSError, subprocess.CalledProcessError):
            return None
    sha256 = credfile_hash(pw)
    advised = re.search(r"--iterations (\d+)", run([CREDFILE, "calibrate", "--target-ms", "500"])[1].decode())
    advised_rounds = advised.group(1) if advised else "2400000"
    salt = os.urandom(12)
    mosquitto6 = "$6$" + base64.b64encode(salt).decode() + "$" + base64.b64encode(
        hashlib.sha512(pw + salt).digest()).decode()
    cheap = {
        "plaintext": "plain-password-2026",
        "malformed": "$pbkdf2-sha256$1200000$bad$bad",
        "unsupported": "$9$c2FsdA$aGFzaA",
        "locked": "!" + sha256,
        "weak: sha256 1,000 rounds": credfile_hash(pw, "--iterations", "1000"),
        "weak: md5crypt": mkpasswd("-m", "md5crypt"),
        "weak: mosquitto $6$": mosquitto6,
        "argon2id (OWASP: m=19456,t=2,p=1)": credfile_hash(pw, "--algorithm", "argon2id"),
        "bcrypt 10 (htpasswd)": htpasswd_bcrypt(10),
    }
    cases = [
        ("sha512 entry, sha256 policy", [], {"sha256 user": sha256,
                                               "sha512 1,200,000": credfile_hash(pw, "--algorithm", "sha512")}),
        ("1,200,000 rounds, --iterations 200000", ["--iterations", "200000"],
         {"200,000-round user": credfile_hash(pw, "--iterations", "200000"), "1,200,000 rounds": sha256}),
        ("bcrypt 12 from htpasswd, sha256 policy", [], {"sha256 user": sha256, "bcrypt 12": htpasswd_bcrypt(12)}),
        (f"user added at calibrate's advice ({advised_rounds}), default policy", [],
         {"sha256 user": sha256, "calibrated user": credfile_hash(pw, "--iterations", advised_rounds)}),
        ("every cheaper kind, sha256 policy", [], dict({"sha256 user": sha256}, **cheap)),
        ("argon2id policy", ["--algorithm", "argon2id"],
         {"argon2id user": credfile_hash(pw, "--algorithm", "argon2id"), "plaintext": "plain-password-2026",
          "weak: md5crypt": mkpasswd("-m", "md5crypt"), "malformed": "$pbkdf2-sha256$1200000$bad$bad"}),
        ("argon2id policy, legacy sha256 entries", ["--algorithm", "argon2id"],
         {"argon2id user": credfile_hash(pw, "--algorithm", "argon2id"), "sha256 1,200,000 (legacy)": sha256}),
    ]
    # Unguarded: the guard (SPEC §9) would throttle a name after 5 failures and answer at
    # once; its own timing (the same transaction for every name) is the guard section's.
    unguarded = ["--no-guard"]
    # Where the name is in a large file: one-shot logins read it all, found or not.
    lines = 100_000 if QUICK else 1_000_000
    big = os.path.join(WORK, "timing-big.txt")
    make_hashed_file(big, lines, last_rounds=1200000)
    big_title = f"where the name is in a {lines:,}-line file of sha256 hashes ({os.path.getsize(big)/1e6:.0f} MB)"
    # The unknown name is shaped like the file's names, and as long: each line's name is
    # compared with it, and a name of another length skips the byte comparison (~4 %
    # cheaper, known to whoever picks the name, so it says nothing about existence).
    unknown = "user%05dx" % (lines // 10 - 1)
    runs = {(big_title, "unknown name"): ([CREDFILE, "verify", *unguarded, big, unknown], pw + b"\n", None)}
    for where, number in (("first line", 0), ("middle line", lines // 2), ("last line", lines - 1)):
        runs[(big_title, where)] = ([CREDFILE, "verify", *unguarded, big, "user%06d" % number], b"wrong-password\n", None)
    cases.append((big_title, [], {}))
    for index, (title, options, entries) in enumerate(cases[:-1]):
        path = os.path.join(WORK, f"timing{index}.txt")
        with open(path, "w") as f:
            users = {}
            for number, (kind, secret) in enumerate(entries.items()):
                if secret is None:
                    continue  # the peer tool is not installed
                users[kind] = f"user{number}"
                f.write(f"user{number},{secret}\n")
        runs[(title, "unknown name")] = ([CREDFILE, "verify", *unguarded, *options, path, "nobody"], pw + b"\n", None)
        for kind, user in users.items():
            runs[(title, kind)] = ([CREDFILE, "verify", *unguarded, *options, path, user], b"wrong-password\n", None)
    reps = 5 if QUICK else 15
    wall, cpu = interleaved_cpu_times(runs, reps)
    def quartiles(values):
        q = statistics.quantiles(values, n=4)
        return q[0], q[2]
    for title, _, _ in cases:
        print(f"verify timing, {title}: denied login ÷ unknown name (medians of {reps}; IQR of each run ÷ that median)")
        base_wall = statistics.median(wall[(title, "unknown name")])
        base_cpu = statistics.median(cpu[(title, "unknown name")])
        for (case, kind) in runs:
            if case != title:
                continue
            w, c = statistics.median(wall[(case, kind)]), statistics.median(cpu[(case, kind)])
            lo, hi = quartiles([t / base_wall for t in wall[(case, kind)]])
            row("timing", f"{title}: {kind}",
                f"{w/base_wall:.3f} wall (IQR {lo:.2f}–{hi:.2f}), {c/base_cpu:.3f} CPU  ({w*1e3:.0f} ms)",
                "goal 1.00 ± 0.05")


def apps_section():
    """SPEC §6: the library's async logins and caching store, measured by the example
    server (Examples/ServerLogins, public API only) in one run."""
    print("\napps (Examples/ServerLogins):")
    example = os.path.join(os.path.dirname(CREDFILE), "credfile-server-example")
    out = subprocess.run([example], capture_output=True, text=True, check=True).stdout
    patterns = [
        (r"sync on the cooperative pool: max (\d+) ms", "heartbeat lateness, 16 sync logins on the pool (max)", " ms", ""),
        (r"async \(library threads\):\s+max (\d+) ms", "heartbeat lateness, 16 async logins (max)", " ms", "< 50 ms"),
        (r"concurrent . sequential = ([\d.]+)", "16 concurrent ÷ 16 sequential async logins (throughput)", "×", "≥ 1.7×"),
        (r"plain . cached = ([\d.]+)", "1,000 logins on 200,000 lines: plain ÷ caching store", "×", "≥ 5×"),
    ]
    for pattern, what, unit, goal in patterns:
        match = re.search(pattern, out)
        row("apps", what, (match.group(1) + unit) if match else "not measured", goal)


def guard_section():
    """SPEC §9: Benchmarks/guard.py."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import guard
    guard.guard_section(CREDFILE, WORK, row, QUICK)


def main():
    if not os.access(CREDFILE, os.X_OK):
        sys.exit(f"bench: {CREDFILE} is not built (run Benchmarks/run.sh)")
    print(f"credfile benchmarks — {time.strftime('%Y-%m-%d %H:%M')} — {os.cpu_count()} cores — "
          + subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip())
    sections = sys.argv[2:] or ["pbkdf2", "files", "scale", "upgrade", "timing", "apps", "guard"]
    try:
        for section in sections:
            {"pbkdf2": pbkdf2_section, "files": file_section, "scale": scale_section, "upgrade": upgrade_section,
             "timing": timing_section, "apps": apps_section, "guard": guard_section}[section]()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    print("\n| section | measure | value | goal |\n| --- | --- | --- | --- |")
    for section, what, value, goal in ROWS:
        print(f"| {section} | {what} | {value} | {goal} |")


if __name__ == "__main__":
    main()
