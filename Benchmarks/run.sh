#!/usr/bin/env bash
# Builds credfile in release mode and prints the benchmark table (ratios measured side
# by side in one run; nothing is asserted). BENCH_QUICK=1 for a short run; name
# sections to run only those: pbkdf2 files scale upgrade timing apps guard. The pbkdf2 section
# runs Benchmarks/pbkdf2-limits.sh (the C loops against OpenSSL's bulk rate, on this CPU
# and with OpenSSL's SHA extensions masked) on the objects built here. `serve` runs
# Benchmarks/serve.py instead (credfile serve beside nginx and Caddy; as root), and
# `cache-oracle` Benchmarks/cache-oracle.py (serve's throttled and locked-out answers, a
# cached password's ÷ another's), `portal` Benchmarks/portal.py (serve --portal: SPEC
# §11's five figures; `portal --quick` for a short run), and `access` Benchmarks/access.py
# (SPEC §13: a decision of 100 rules and 1,000 groups, and serve's /auth with them ÷ without),
# `register` Benchmarks/register.py (SPEC §12: registrations/s ÷ one hash per core), and
# `state` Benchmarks/state.py (SPEC §15: /auth with PostgreSQL ÷ with SQLite).
#
# credfile is built as the .deb ships it (Scripts/deb.sh, README "Install"): with the
# Swift standard library linked in, which starts in ~7 ms where the dynamically linked
# debug-style build spends ~11 ms loading the Swift libraries (a tenth of `check` on
# the 26 MB file).
set -euo pipefail
cd "$(dirname "$0")/.."
static=(-c release --static-swift-stdlib --scratch-path .build/release-static)
swift build "${static[@]}" --product credfile 2>&1 | tail -1
bin="$(swift build "${static[@]}" --show-bin-path)/credfile"
if [ "${1:-}" = serve ]; then exec python3 Benchmarks/serve.py "$bin"; fi
if [ "${1:-}" = portal ]; then exec .build/peers-venv/bin/python3 Benchmarks/portal.py "$bin" "${@:2}"; fi
if [ "${1:-}" = access ]; then
    swift build "${static[@]}" --product credfile-access-bench 2>&1 | tail -1
    exec .build/peers-venv/bin/python3 Benchmarks/access.py "$bin" "$(dirname "$bin")/credfile-access-bench"
fi
if [ "${1:-}" = register ]; then exec python3 Benchmarks/register.py "$bin"; fi
if [ "${1:-}" = state ]; then exec python3 Benchmarks/state.py "$bin"; fi
if [ "${1:-}" = cache-oracle ]; then exec .build/peers-venv/bin/python3 Benchmarks/cache-oracle.py "$bin"; fi
swift build -c release --product credfile-server-example 2>&1 | tail -1
# The peers' venv (Scripts/setup.sh test) where there is one: bench.py's bcrypt row needs pyca/bcrypt.
python=.build/peers-venv/bin/python3
[ -x "$python" ] || python=python3
exec "$python" Benchmarks/bench.py "$bin" "$@"
