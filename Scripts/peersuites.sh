#!/usr/bin/env bash
# Runs the peers' own test suites against credfile (SPEC §3.2, issue #26): a local
# measure, not part of CI, since the vectors are third-party data this repository does
# not hold. PATH is their vectors.json (records of kind correct / malformed / unclaimed,
# see its README); each record becomes one line of a credential file, and every login
# goes through the library's front door (Tests/CredFileTests/PeerSuiteTests.swift). It
# prints one table row per family: right passwords granted, wrong ones denied, the hash
# string typed as the password denied, malformed hashes never granted.
#
#   bash Scripts/peersuites.sh PATH          the suite, without the two 1 GiB argon2 vectors
#   bash Scripts/peersuites.sh --full PATH   with them, under max-memory 2 GiB
set -euo pipefail
full=0
if [[ ${1:-} == --full ]]; then full=1; shift; fi
[[ $# == 1 && -f $1 ]] || { echo "usage: $0 [--full] vectors.json" >&2; exit 2; }
path=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CREDFILE_PEERSUITES=$path CREDFILE_PEERSUITES_FULL=$full swift test --filter PeerSuiteTests 2>&1 |
    grep -E '^(\||\*)|✘|✔ Test thePeerSuites|Test run'
