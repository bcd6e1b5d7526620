#!/usr/bin/env bash
# credfile's start beside a C tool's, measured side by side in one run (issue #34 item 9;
# nothing is asserted, ratios are printed). As root: it writes two PAM services into
# /etc/pam.d (named credfile-bench-PID and pwdfile-bench-PID, removed on exit). Needs
# hyperfine, pamtester, libpam-pwdfile and whois's mkpasswd (Scripts/setup.sh test).
#
#   bash Benchmarks/startup.sh            # about a minute
#   BENCH_QUICK=1 bash Benchmarks/startup.sh
#   CREDFILE=/path/to/credfile bash Benchmarks/startup.sh   # that binary, not this tree's
#
# 1. Start: `credfile verify` on a one-line file whose entry costs 1,000 PBKDF2 rounds
#    (the policy lowered to match, so the login's own work is ~0.2 ms) ÷ `/usr/bin/id`
#    (goal ≤ 3×), with `credfile --version` beside them, and the shared objects each loads;
#    wall time and CPU time (on a loaded machine the CPU time is the steadier figure).
# 2. PAM: logins per second through pamtester of `credfile pam` behind pam_exec over
#    pam_pwdfile's, the same crypt hash in both files (goal ≥ 0.9): sha512crypt at 5,000
#    rounds (glibc's default) and yescrypt at mkpasswd's default cost (Debian's default
#    for /etc/shadow). credfile's policy is lowered to 1,000 rounds so it adds no PBKDF2
#    of its own; its timing rule (SPEC §3.1) still pads every login to its costliest
#    entry with a margin (LoginPlan), which pam_pwdfile does not do.
#
# credfile is built as the .deb ships it (Scripts/deb.sh): the Swift runtime linked in.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in hyperfine pamtester mkpasswd; do
    command -v "$tool" >/dev/null || { echo "startup.sh: $tool is missing (bash Scripts/setup.sh test)" >&2; exit 1; }
done
pwdfile=/lib/$(gcc -print-multiarch)/security/pam_pwdfile.so
[ -e "$pwdfile" ] || { echo "startup.sh: $pwdfile is missing (apt-get install libpam-pwdfile)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "startup.sh: run as root (it writes two services into /etc/pam.d)" >&2; exit 1; }
static=(-c release --static-swift-stdlib --scratch-path .build/release-static)
if [ -n "${CREDFILE:-}" ]; then
    bin=$CREDFILE  # another build to compare, such as main's
else
    swift build "${static[@]}" --product credfile 2>&1 | tail -1
    bin="$(swift build "${static[@]}" --show-bin-path)/credfile"
fi

work=$(mktemp -d)
services=(/etc/pam.d/credfile-bench-$$ /etc/pam.d/pwdfile-bench-$$)
trap 'rm -rf "$work" "${services[@]}"' EXIT
rounds=${BENCH_QUICK:+3} batch=${BENCH_QUICK:+20} runs=${BENCH_QUICK:+40}
rounds=${rounds:-9} batch=${batch:-40} runs=${runs:-100}
password='correct horse battery staple'
printf '%s\n' "$password" >"$work/password"

# hyperfine's median wall time of a row of its CSV export, in ms.
median() { awk -F, -v name="$1" '$1 == name { printf "%.2f", $4 * 1000 }' "$work/times.csv"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
objects() { LD_DEBUG=files "$@" </dev/null 2>&1 >/dev/null | grep -c 'calling init:' || true; }
# loop N COMMAND…: wall and CPU (user + system) seconds of N runs of COMMAND, stdin the
# password file, from bash's `time` of a subshell (its forks included: see `start`).
loop() {
    local n=$1 TIMEFORMAT='%R %U %S'
    shift
    { time (for ((i = 0; i < n; i++)); do "$@" <"$work/password" >/dev/null 2>&1; done); } 2>&1
}

echo "== 1. Start (per run; $rounds rounds of $batch runs of each, interleaved; the median round)"
printf '%s\n' "$password" | "$bin" add --iterations 1000 "$work/one.cred" alice 2>/dev/null
# Each round runs a batch of every command, one after the other, so the machine's load
# falls on all alike; a batch of forked subshells that exec nothing (`fork`) is taken off
# the others, leaving the exec and the program. Wall times are the loaded machine's;
# CPU time is what a quiet machine's wall time approaches.
names=(fork id version verify)
labels=("" /usr/bin/id "credfile --version" "credfile verify (one-line file)")
commands=("bash -c :" "/usr/bin/id" "$bin --version" "$bin verify --iterations 1000 $work/one.cred alice")
for ((round = 0; round < rounds; round++)); do
    for k in "${!names[@]}"; do
        if [[ ${names[$k]} == fork ]]; then
            echo "fork $( { time (for ((i = 0; i < batch; i++)); do (:) <"$work/password"; done); } 2>&1 )"
        else
            # shellcheck disable=SC2086
            echo "${names[$k]} $(loop "$batch" ${commands[$k]})"
        fi
    done
done >"$work/rounds"
# mid NAME FIELD: the median over the rounds of NAME's seconds (FIELD wall or cpu).
mid() {
    awk -v name="$1" -v field="$2" '$1 == name { print (field == "wall" ? $2 : $3 + $4) }' "$work/rounds" |
        sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
# per NAME: its wall and CPU ms per run, the fork batch's taken off.
per() {
    awk -v n="$batch" -v w="$(mid "$1" wall)" -v c="$(mid "$1" cpu)" -v fw="$(mid fork wall)" -v fc="$(mid fork cpu)" \
        'BEGIN { printf "%.2f %.2f", (w - fw) * 1000 / n, (c - fc) * 1000 / n }'
}
read -r id_wall id_cpu <<<"$(per id)"
printf '%-32s %8s %6s %8s %6s %8s\n' "" "wall ms" "÷ id" "CPU ms" "÷ id" "objects"
for k in 1 2 3; do
    read -r wall cpu <<<"$(per "${names[$k]}")"
    # shellcheck disable=SC2086
    printf '%-32s %8s %6s %8s %6s %8s\n' "${labels[$k]}" "$wall" "$(ratio "$wall" "$id_wall")" \
        "$cpu" "$(ratio "$cpu" "$id_cpu")" "$(objects ${commands[$k]})"
done
echo "(goal: verify ≤ 3 × id; objects: the shared objects the loader maps, LD_DEBUG=files)"

echo
echo "== 2. PAM through pamtester: logins per second, credfile pam ÷ pam_pwdfile (goal ≥ 0.9)"
printf 'auth required pam_exec.so expose_authtok quiet %s pam --iterations 1000 %s\naccount required pam_permit.so\n' \
    "$bin" "$work/app.cred" >"${services[0]}"
printf 'auth required pam_pwdfile.so pwdfile %s\naccount required pam_permit.so\n' "$work/app.pwd" >"${services[1]}"
credfile_service=${services[0]##*/} pwdfile_service=${services[1]##*/}
printf '%-34s %10s %10s %8s\n' "hash" "credfile/s" "pwdfile/s" "ratio"
for method in "sha512crypt -R 5000" yescrypt; do
    hash=$(mkpasswd -m $method "$password")
    printf 'alice,%s\n' "$hash" >"$work/app.cred"
    printf 'alice:%s\n' "$hash" >"$work/app.pwd"
    chmod 0600 "$work/app.cred" "$work/app.pwd"
    for service in "$credfile_service" "$pwdfile_service"; do
        pamtester "$service" alice authenticate <"$work/password" >/dev/null 2>&1 ||
            { echo "startup.sh: $service refused the good password" >&2; exit 1; }
    done
    hyperfine --style none --warmup 5 --runs "$runs" --export-csv "$work/times.csv" \
        -n credfile "pamtester $credfile_service alice authenticate <$work/password" \
        -n pwdfile "pamtester $pwdfile_service alice authenticate <$work/password" >/dev/null 2>&1
    c=$(median credfile) p=$(median pwdfile)
    printf '%-34s %10s %10s %8s\n' "${method/ -R /, rounds=}" "$(ratio 1000 "$c" | cut -d. -f1)" \
        "$(ratio 1000 "$p" | cut -d. -f1)" "$(ratio "$p" "$c")"
done
