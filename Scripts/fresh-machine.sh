#!/usr/bin/env bash
# Runs CI (`CI=true bash .ci/run`) on a fresh machine: a Debian 12 root that has only
# Debian's base (debootstrap's minbase) plus git and ca-certificates, with the Swift
# toolchain of this machine mounted read-only. Whatever a test needs beyond that must come
# from Scripts/setup.sh, so a test that passes only because this machine was set up by
# hand fails here. As root:
#
#   bash Scripts/fresh-machine.sh ROOT [REV] [-- COMMAND]
#
#   ROOT     a directory outside every repository, e.g. /var/tmp/credfile-fresh: ROOT/base
#            is Debian's base as debootstrap made it (once; delete ROOT to start over), and
#            each run gets ROOT/run, a new copy of it (REUSE=1 keeps the last run's root, its
#            installed packages and .build, for rerunning a failing suite quickly).
#   REV      the commit to test (default HEAD; committed work only: the root gets a clone).
#   COMMAND  what to run in the clone instead of CI, e.g.
#            -- 'bash Scripts/setup.sh test && swift test --filter Argon2PolicyTests'
#
# The toolchain is the directory above the `usr/bin` of `swift` on PATH (or TOOLCHAIN=…);
# the mirror is the one this machine's apt sources name (or MIRROR=http://…). /proc, /sys,
# /dev, /dev/pts, a tmpfs /tmp and /dev/shm and the toolchain (read-only) are mounted (on
# a bind mount of the root onto itself, so that / is a mount point, as on a machine) in
# a mount namespace of the script's own (unshare), so the host never sees them, and are
# unmounted on exit. The run is as root with a clean environment (CI=true, PATH = the
# toolchain + Debian's). The root gets this machine's network settings (resolv.conf and the
# certificate authorities of /usr/local/share/ca-certificates), nothing else of it. It
# prints the wall time at the end.
set -euo pipefail

usage() {
    sed -n '7,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
[ $# -ge 1 ] || usage
[ "$(id -u)" = 0 ] || { echo "fresh-machine: run as root (debootstrap, mount, chroot)" >&2; exit 1; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=$(realpath -m "$1")
shift
rev=HEAD
if [ $# -ge 1 ] && [ "$1" != -- ]; then rev=$1; shift; fi
command='bash .ci/run'
if [ $# -ge 1 ]; then
    [ "$1" = -- ] && [ $# -eq 2 ] || usage
    command=$2
fi
case "$root/" in
    "$repo"/*) echo "fresh-machine: $root is inside the repository; put it outside" >&2; exit 2 ;;
esac

# In a mount namespace of our own: mounts made below are invisible outside it and cannot
# propagate to (or, when unmounted, from) the host's /dev, whatever its propagation.
if [ -z "${FRESH_MACHINE_NAMESPACE:-}" ]; then
    export FRESH_MACHINE_NAMESPACE=1
    exec unshare --mount --propagation private -- bash "${BASH_SOURCE[0]}" "$root" "$rev" -- "$command"
fi

toolchain=${TOOLCHAIN:-$(dirname "$(dirname "$(dirname "$(command -v swift)")")")}
[ -x "$toolchain/usr/bin/swift" ] || { echo "fresh-machine: no $toolchain/usr/bin/swift (set TOOLCHAIN)" >&2; exit 1; }
if [ -z "${MIRROR:-}" ]; then
    MIRROR=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
        grep -v "^ *#" | grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1 | tr -d ' ') || true
fi
mirror=${MIRROR:-http://deb.debian.org/debian}
commit=$(git -C "$repo" rev-parse --verify "$rev^{commit}")

# 1. The root: Debian 12's minbase, git and ca-certificates, nothing else; a new copy per run.
base=$root/base
if [ ! -e "$base/etc/debian_version" ]; then
    command -v debootstrap >/dev/null || {
        echo "fresh-machine: installing debootstrap" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    echo "fresh-machine: debootstrap bookworm into $base from $mirror" >&2
    rm -rf "$base"
    debootstrap --variant=minbase --include=git,ca-certificates bookworm "$base" "$mirror"
fi
run=$root/run
if grep -qE " $run[/ ]" /proc/self/mountinfo; then # never rm -rf through a mount (/dev, the toolchain)
    echo "fresh-machine: something is mounted under $run; unmount it first" >&2
    exit 1
fi
if [ -z "${REUSE:-}" ] || [ ! -e "$run/etc/debian_version" ]; then
    rm -rf "$run"
    cp -a "$base" "$run"
fi
# The network as this machine reaches it: its resolver, and the local certificate
# authorities it trusts (a TLS-inspecting proxy's, for pip's download of the PyPI peers).
cp /etc/resolv.conf "$run/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$run/usr/local/share/ca-certificates/"
    chroot "$run" update-ca-certificates >/dev/null
fi

# 2. The mounts, undone in reverse order on exit (also when the run fails or is interrupted).
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true
    done
    mounted=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mount_at() { # mount_at TARGET mount-arguments…
    local target=$run$1
    shift
    mkdir -p "$target"
    mount "$@" "$target"
    mounted+=("$target")
}
# The root a mount of its own, as a machine's or a container's is: inside a chroot of a plain
# directory, `unshare --mount --propagation private` (SyslogDaemon.namespaced) fails with
# "cannot change root filesystem propagation", and a test would fail for the chroot's sake.
mount_at / --bind "$run"
mount_at /proc -t proc proc
mount_at /sys --bind /sys
mount_at /dev --bind /dev
mount_at /dev/pts --bind /dev/pts
mount_at /dev/shm -t tmpfs -o mode=1777 tmpfs
mount_at /tmp -t tmpfs -o mode=1777 tmpfs
mount_at "$toolchain" --bind "$toolchain"
mount -o remount,bind,ro "$run$toolchain"

# 3. A clone of the commit (with REUSE=1, the last run's clone checks it out, .build kept).
work=$run/root/credfile
if [ -n "${REUSE:-}" ] && [ -d "$work/.git" ]; then
    git -C "$work" fetch -q "$repo" "+refs/heads/*:refs/remotes/origin/*"
else
    rm -rf "$work"
    git clone -q --no-checkout "$repo" "$work"
fi
git -C "$work" -c advice.detachedHead=false checkout -q --force "$commit"
echo "fresh-machine: $(git -C "$work" log -1 --format='%h %s' | cut -c1-100)" >&2

# 4. The run, as root, with a clean environment: only the toolchain is added to PATH.
start=$(date +%s)
status=0
# (A login shell, as a new user's; its /etc/profile sets PATH, so the toolchain is added after.)
chroot "$run" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI=true \
    /bin/bash -lc "export PATH=$toolchain/usr/bin:\$PATH && cd /root/credfile && $command" || status=$?
end=$(date +%s)
# A daemon a test left running in the root would hold its mounts: stop it (by PID).
for proc in /proc/[0-9]*; do
    if [ "$(readlink "$proc/root" 2>/dev/null)" = "$run" ]; then
        echo "fresh-machine: stopping ${proc#/proc/}, left running: $(tr '\0' ' ' <"$proc/cmdline" | cut -c1-80)" >&2
        kill -KILL "${proc#/proc/}" 2>/dev/null || true
    fi
done
echo "fresh-machine: exit $status after $(((end - start) / 60)) min $(((end - start) % 60)) s" >&2
exit "$status"
