#!/usr/bin/env bash
# Builds and runs credfile's libFuzzer targets.
#
#   Fuzz/run.sh TARGET SECONDS [--asan|--no-asan]   fuzz one target (a folder of Fuzz/Sources/: FuzzParser, FuzzHash, …)
#   Fuzz/run.sh all SECONDS [--asan|--no-asan]      fuzz every target, one after the other
#   Fuzz/run.sh TARGET minimize FILE [--asan|--no-asan]   shrink a crash input (-minimize_crash=1)
#
# ASan is on by default; --no-asan builds without it for throughput. The two builds use
# their own scratch paths (Fuzz/.build-asan, Fuzz/.build-noasan). New corpus entries go
# to Fuzz/.work/TARGET/ (the committed Fuzz/Corpus/TARGET/ and Fuzz/Regressions/TARGET/ are
# only read); a crash goes to Fuzz/Regressions/TARGET/ and the script exits non-zero. The final libFuzzer status line
# (#executions, cov:, ft:, corp:, exec/s) of each target is printed at the end.
# Inputs are capped (1 KiB for FuzzParser, 4 KiB for the others) for throughput: the
# seeds with 64 KiB lines are fuzzed only up to there, and are replayed whole by
# Tests/CredFileTests/FuzzRegressionTests.swift.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The targets are the folders of Sources/ (FuzzTarget's cases; FuzzRegressionTests checks).
mapfile -t targets < <(cd "$here/Sources" && ls -1)

usage() {
    sed -n '3,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 2 ] || usage
target=$1
shift
mode=run
if [ "$1" = minimize ]; then
    [ $# -ge 2 ] || usage
    mode=minimize
    crash=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    shift 2
else
    seconds=$1
    shift
    [[ $seconds =~ ^[0-9]+$ ]] || usage
fi
sanitizers=fuzzer,address
scratch=.build-asan
for option in "$@"; do
    case $option in
    --asan) sanitizers=fuzzer,address scratch=.build-asan ;;
    --no-asan) sanitizers=fuzzer scratch=.build-noasan ;;
    *) usage ;;
    esac
done
if [ "$target" = all ]; then
    [ $mode = run ] || usage
    selected=("${targets[@]}")
else
    [[ " ${targets[*]} " == *" $target "* ]] || { echo "run.sh: unknown target $target" >&2; usage; }
    selected=("$target")
fi

cd "$here"
echo "== building (release, -sanitize=$sanitizers) in Fuzz/$scratch"
build_started=$SECONDS
# --sanitize=fuzzer makes SwiftPM skip its main-symbol rename (libFuzzer has main);
# the -Xswiftc form sets the sanitizers of every module, the root package's included.
# --manifest-cache none: Package.swift lists the folders of Sources/, so its text does not
# change when a target is added, and SwiftPM's shared cache (keyed by that text) would
# hand back the old list of targets: a CI machine that had built the fuzzers before
# silently built two fewer. And the build plan (release.yaml) is made afresh each time:
# SwiftPM keeps an old one when only the root package's files changed (it is this
# package's dependency), so new source files or targets were missing from an incremental
# build ("cannot find … in scope", or a target not built at all). The objects stay, so
# the build is still incremental.
rm -f "$here/$scratch/release.yaml"
if ! swift build -c release --scratch-path "$scratch" --manifest-cache none --sanitize=fuzzer \
    -Xswiftc -sanitize=$sanitizers -Xswiftc -use-ld=lld >"$scratch.log" 2>&1; then
    cat "$scratch.log" >&2
    echo "run.sh: build failed" >&2
    exit 1
fi
echo "== built in $((SECONDS - build_started)) s"
bin=$(swift build -c release --scratch-path "$scratch" --manifest-cache none --show-bin-path)
for t in "${selected[@]}"; do
    [ -x "$bin/$t" ] || { echo "run.sh: the build made no $t (is it a folder of Fuzz/Sources/?)" >&2; exit 1; }
done

# Swift's backtracer would catch the trap first and exit 132 without a crash file.
export SWIFT_BACKTRACE=enable=no
# The Swift runtime keeps metadata caches for the life of the process: not leaks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

if [ $mode = minimize ]; then
    # Each smaller input that still crashes overwrites the same file.
    out=$here/Regressions/$target/minimized-$(basename "$crash")
    exec "$bin/$target" -minimize_crash=1 -runs=100000 -max_total_time=120 \
        -exact_artifact_path="$out" "$crash"
fi

# FuzzParser's checks read the input a dozen times: short files keep it fast (a file of
# 1 KiB has dozens of lines). FuzzHash needs about 1.4 KiB for a 1,024-byte salt.
max_len() { if [ "$1" = FuzzParser ]; then echo 1024; else echo 4096; fi; }

status=0
summary=()
for t in "${selected[@]}"; do
    work=$here/.work/$t
    mkdir -p "$work" "$here/Regressions/$t"
    log=$here/.work/$t${scratch#.build}.log
    echo "== fuzzing $t for $seconds s (log: Fuzz/.work/${log##*/})"
    set +e
    # Regressions/ too: the inputs that once crashed are run first, under the sanitizers
    # (swift test replays them without: an allocation of exabytes only fails there).
    "$bin/$t" "$work" "$here/Corpus/$t" "$here/Regressions/$t" \
        -dict="$here/credfile.dict" \
        -artifact_prefix="$here/Regressions/$t/" \
        -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=25 -rss_limit_mb=4096 \
        -print_final_stats=1 -detect_leaks=0 >"$log" 2>&1
    code=$?
    set -e
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    corpus=$(find "$work" -type f | wc -l)
    if [ $code -ne 0 ]; then
        status=1
        grep -E 'fuzz check failed|Fatal error|ERROR: (libFuzzer|AddressSanitizer)|Test unit written to' "$log" >&2 || tail -n 30 "$log" >&2
        summary+=("$t: FINDING (exit $code) $last")
    else
        summary+=("$t: ok, work corpus $corpus files: $last")
    fi
done
echo "== results (-sanitize=$sanitizers)"
printf '%s\n' "${summary[@]}"
exit $status
