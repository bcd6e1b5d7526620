"""The guard's figures (SPEC §9), measured side by side in one run; nothing is asserted.

* guesses per second that 1 and 8 clients get against one account through the Squid
  helper (each client a `credfile helper` process, as Squid's children are), without the
  guard (`--no-guard`) and with it. With the guard the run uses a short max-delay
  (GUARD_MAX_DELAY seconds, default 2, instead of the default 900) so the steady state
  comes within seconds instead of after a quarter of an hour: the goal is at most one
  checked guess per max-delay once the free failures are spent, whatever the number of
  clients. Checked guesses are read from the guard database (`credfile failures`), which
  counts exactly the attempts whose password was looked at.
* the cost of one failure in the guard database (one transaction) ÷ one PBKDF2 at the
  policy's rounds: helpers at 1 round, guarded and not, interleaved, for new names (an
  insert) and for one name again and again (an update); and for a process per login
  (`verify`, as pam_exec and checkpassword run), which opens the database each time, in
  rounds (the median round and the range), wall and CPU time, each round ÷ its own
  PBKDF2, with the largest size the log reached; the PBKDF2 from `calibrate`. GUARD_COMPARE=PATH runs another credfile
  build (the one before a change) in the same rounds, interleaved.
* the time of a throttled answer for a known name ÷ an unknown one, and of a locked-out
  answer, through the helper (one process, requests in turn) and through `verify` (one
  process per login, as pam_exec runs credfile). The throttled and locked-out rows are
  written into the guard database beforehand with Python's sqlite3 module (the guard
  itself would take minutes of real delays to get there).

GUARD_PARTS picks the parts (default guesses,transaction,process,answers).
"""
import json
import os
import resource
import select
import shutil
import statistics
import subprocess
import time

MAX_DELAY = float(os.environ.get("GUARD_MAX_DELAY", "2"))
# Which parts run (default all): guesses, transaction, process, answers.
PARTS = os.environ.get("GUARD_PARTS", "guesses,transaction,process,answers").split(",")


class Helper:
    """One `credfile helper --protocol squid` process, asked one line at a time."""

    def __init__(self, credfile, path, options):
        self.proc = subprocess.Popen([credfile, "helper", path, "--protocol", "squid"] + options,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def ask(self, user, password):
        self.proc.stdin.write(f"{user} {password}\n".encode())
        self.proc.stdin.flush()
        return self.proc.stdout.readline().decode().strip()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def policy_seconds(credfile):
    """One PBKDF2 at the default policy (1,200,000 rounds), from `calibrate`'s rate now."""
    rate = json.loads(subprocess.run([credfile, "calibrate", "--json"], capture_output=True, text=True,
                                     check=True).stdout)["roundsPerSecond"]
    return 1_200_000 / rate


def make_file(credfile, path, users):
    if os.path.exists(path):
        os.remove(path)
    for user, password in users:
        subprocess.run([credfile, "add", path, user, "--iterations", "1000", "--min-length", "8"],
                       input=(password + "\n").encode(), check=True, capture_output=True)


def checked(credfile, path, options, user):
    out = subprocess.run([credfile, "failures", path, user, "--json"] + options,
                         capture_output=True, text=True, check=True).stdout
    records = json.loads(out)
    return records[0]["failures"] if records else 0


def reset(credfile, path, options):
    """Clears every name's failures (the helper-only options left out)."""
    kept, skip = [], False
    for i, option in enumerate(options):
        if skip:
            skip = False
            continue
        if option == "--jobs":
            skip = True
            continue
        kept.append(option)
    subprocess.run([credfile, "failures", path, "--reset"] + kept, capture_output=True, check=True)


def guesses_per_second(credfile, path, options, clients, seconds, warmup, guarded):
    """Runs `clients` helpers guessing bob's password for `seconds`; returns checked
    guesses per second in the window after `warmup` (all answers when unguarded)."""
    helpers = [Helper(credfile, path, options) for _ in range(clients)]
    start = time.monotonic()
    answers = 0
    in_window = 0
    count_at_warmup = None
    pending = {h.proc.stdout.fileno(): h for h in helpers}
    n = 0
    for h in helpers:
        h.proc.stdin.write(f"bob guess-{n}\n".encode())
        h.proc.stdin.flush()
        n += 1
    while True:
        now = time.monotonic() - start
        if guarded and count_at_warmup is None and now >= warmup:
            count_at_warmup = checked(credfile, path, options, "bob")
        if now >= seconds:
            break
        ready, _, _ = select.select(list(pending), [], [], 0.5)
        for fd in ready:
            h = pending[fd]
            h.proc.stdout.readline()
            answers += 1
            if now >= warmup:
                in_window += 1
            h.proc.stdin.write(f"bob guess-{n}\n".encode())
            h.proc.stdin.flush()
            n += 1
    total_checked = checked(credfile, path, options, "bob") if guarded else None
    for h in helpers:
        h.close()
    if guarded:
        return (total_checked - count_at_warmup) / (seconds - warmup), answers / seconds
    return in_window / (seconds - warmup), answers / seconds


def per_request_seconds(helper, users, requests):
    start = time.perf_counter()
    for i in range(requests):
        helper.ask(users(i), f"wrong-{i}")
    return (time.perf_counter() - start) / requests


def sqlite(database, statement):
    """Runs statements on the guard database (Python's own sqlite3 module: no sqlite3 shell needed)."""
    import sqlite3
    connection = sqlite3.connect(database)
    connection.executescript(statement)
    connection.commit()
    connection.close()


def guard_section(credfile, work, row, quick):
    print("\nguard (SPEC §9):")
    path = os.path.join(work, "guard.cred")
    make_file(credfile, path, [("bob", "Tangerine-River-Stone-7")])
    seconds = 12 if quick else 30
    warmup = max(4.0, 3 * MAX_DELAY)
    base = ["--log", "none"]
    guarded = base + ["--max-delay", f"{MAX_DELAY:g}"]
    if "guesses" in PARTS:
        for clients in (1, 8):
            before, _ = guesses_per_second(credfile, path, base + ["--no-guard"], clients, seconds / 2, 1, False)
            reset(credfile, path, guarded)
            after, answered = guesses_per_second(credfile, path, guarded, clients, seconds, warmup, True)
            row("guard", f"guesses/s, {clients} client{'s' if clients > 1 else ''}, one account: unguarded", f"{before:.2f}/s")
            row("guard", f"guesses/s, {clients} client{'s' if clients > 1 else ''}: guarded, max-delay {MAX_DELAY:g} s (after {warmup:g} s)",
                f"{after:.2f}/s ({answered:.1f} answers/s)", f"≤ 1/max-delay = {1 / MAX_DELAY:.2f}/s")
            row("guard", f"  guarded ÷ unguarded, {clients} client{'s' if clients > 1 else ''}", f"{after / before:.3f}")
        reset(credfile, path, guarded)

    # One failure in the database ÷ one policy PBKDF2.
    policy_pbkdf2 = policy_seconds(credfile)
    requests = 300 if quick else 1500
    one_round = ["--iterations", "1", "--jobs", "1", "--log", "none", "--free-failures", "100", "--max-delay", "0"]
    reset(credfile, path, one_round)
    if "transaction" in PARTS:
        for kind, users in (("a new name (insert)", lambda i: f"user{i}-{time.monotonic_ns()}"),
                            ("the same name (update)", lambda i: "repeat")):
            costs = {"guarded": [], "unguarded": []}
            for _ in range(5):
                for name, extra in (("guarded", []), ("unguarded", ["--no-guard"])):
                    reset(credfile, path, one_round)
                    helper = Helper(credfile, path, one_round + extra)
                    # The same name 90 times at most: it stays below max-failures (100).
                    count = min(requests, 90) if kind.startswith("the same") else requests
                    costs[name].append(per_request_seconds(helper, users, count))
                    helper.close()
            cost = statistics.median(costs["guarded"]) - statistics.median(costs["unguarded"])
            row("guard", f"one failure in the database, {kind}", f"{cost * 1e3:.3f} ms")
            row("guard", f"  ÷ one policy PBKDF2 ({policy_pbkdf2 * 1e3:.0f} ms)", f"{cost / policy_pbkdf2 * 100:.2f} %", "goal < 5 %")
        reset(credfile, path, one_round)
    if "process" in PARTS:
        process_per_login(credfile, path, row, quick)
        reset(credfile, path, one_round)

    if "answers" in PARTS:
        # Throttled and locked-out answers: known name ÷ unknown name.
        database = path + ".guard.db"
        subprocess.run([credfile, "failures", path], capture_output=True, check=True)  # creates it
        now_ms = int(time.time() * 1000)
        for state, count, locked in (("throttled", 50, 0), ("locked-out", 100, 1)):
            sqlite(database, "DELETE FROM failures; UPDATE names SET count = 2;"
                   f"INSERT INTO failures VALUES (CAST('bob' AS BLOB), {count}, {now_ms}, {locked}),"
                   f" (CAST('mallory' AS BLOB), {count}, {now_ms}, {locked});")
            helper = Helper(credfile, path, ["--log", "none"])
            times = {"bob": [], "mallory": []}
            for i in range(400 if quick else 2000):
                for user in ("bob", "mallory"):
                    start = time.perf_counter()
                    helper.ask(user, "Tangerine-River-Stone-7")
                    times[user].append(time.perf_counter() - start)
            helper.close()
            known, unknown = statistics.median(times["bob"]), statistics.median(times["mallory"])
            row("guard", f"{state} answer, helper: known ÷ unknown name", f"{known / unknown:.3f}  ({known * 1e6:.0f} µs)",
                "goal 1.00 ± 0.05")
            per_process = {"bob": [], "mallory": []}
            for i in range(15 if quick else 60):
                for user in ("bob", "mallory"):
                    start = time.perf_counter()
                    subprocess.run([credfile, "verify", path, user, "--log", "none"], input=b"Tangerine-River-Stone-7\n",
                                   capture_output=True)
                    per_process[user].append(time.perf_counter() - start)
            known, unknown = statistics.median(per_process["bob"]), statistics.median(per_process["mallory"])
            row("guard", f"{state} answer, verify (a process each): known ÷ unknown", f"{known / unknown:.3f}  ({known * 1e3:.1f} ms)",
                "goal 1.00 ± 0.05")


def process_per_login(credfile, path, row, quick):
    """A process per login (pam_exec, checkpassword): opening the database, the transaction,
    and whatever the process does to the log (a checkpoint every 256 pages) are the cost.
    Rounds of guarded and unguarded `verify` processes, interleaved; each round's cost is the
    mean guarded time minus the mean unguarded one. Wall time counts the waits (a
    checkpoint's fdatasync now and then) and the neighbours' load; CPU time (user + system
    of the child) only the work. The log's size is read after every login.
    GUARD_COMPARE=OTHER-CREDFILE runs another build (an older one: before/after) in the same
    rounds, interleaved, on its own copy of the file."""
    builds = {"": (credfile, path)}
    other = os.environ.get("GUARD_COMPARE")
    if other:
        copy = path + ".compare"
        shutil.copyfile(path, copy)
        os.chmod(copy, 0o600)
        builds[f" [{os.path.basename(other)}]"] = (other, copy)
    rounds, per_round = (3, 40) if quick else (5, 120)
    costs = {(label, kind): [] for label in builds for kind in ("wall", "CPU")}
    ratios = {(label, kind): [] for label in builds for kind in ("wall", "CPU")}
    pbkdf2s = []
    logs = {label: {"largest": 0, "emptied": 0, "previous": None} for label in builds}
    for r in range(rounds):
        wall = {(label, name): [] for label in builds for name in ("guarded", "unguarded")}
        cpu = {(label, name): [] for label in builds for name in ("guarded", "unguarded")}
        for i in range(per_round):
            for label, (binary, file) in builds.items():
                for name, extra in (("guarded", []), ("unguarded", ["--no-guard"])):
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    start = time.perf_counter()
                    subprocess.run([binary, "verify", file, f"someone-{r}-{i}", "--iterations", "1", "--log", "none"] + extra,
                                   input=b"wrong\n", capture_output=True)
                    wall[(label, name)].append(time.perf_counter() - start)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu[(label, name)].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                    if name == "guarded":
                        log = file + ".guard.db-wal"
                        size = os.path.getsize(log) if os.path.exists(log) else 0
                        state = logs[label]
                        state["largest"] = max(state["largest"], size)
                        state["emptied"] += state["previous"] is not None and size < state["previous"]
                        state["previous"] = size
        # The round's own PBKDF2 (the load changes both within minutes).
        pbkdf2 = policy_seconds(credfile)
        pbkdf2s.append(pbkdf2)
        for label in builds:
            for kind, times in (("wall", wall), ("CPU", cpu)):
                cost = statistics.mean(times[(label, "guarded")]) - statistics.mean(times[(label, "unguarded")])
                costs[(label, kind)].append(cost)
                ratios[(label, kind)].append(cost / pbkdf2)
    for label in builds:
        for kind in ("wall", "CPU"):
            values = ratios[(label, kind)]
            spread = f"{min(values) * 100:.2f}–{max(values) * 100:.2f} %"
            row("guard", f"a process per login (verify){label}: the guard's cost, {kind} (median of {rounds} × {per_round})",
                f"{statistics.median(costs[(label, kind)]) * 1e3:.2f} ms")
            row("guard", f"  ÷ that round's policy PBKDF2 ({min(pbkdf2s) * 1e3:.0f}–{max(pbkdf2s) * 1e3:.0f} ms)",
                f"{statistics.median(values) * 100:.2f} % ({spread})", "goal < 5 %")
        row("guard", f"  the log over {rounds * per_round} logins{label}: largest, times emptied",
            f"{logs[label]['largest'] / 1024:.0f} KiB, {logs[label]['emptied']}×")
