#!/usr/bin/env bash
# Builds the Debian package .build/credfile_VERSION_ARCH.deb: the release binary (Swift's
# runtime linked in statically, so Depends names only Debian libraries), credfile(1), the
# bash, zsh and fish completions, copyright and changelog. VERSION is the binary's own
# (`credfile --version`: one constant, CredFileCLI.version); Depends comes from the linked
# libraries through dpkg-shlibdeps. Needs dpkg-dev (dpkg-shlibdeps) and, to check, lintian.
#
#   bash Scripts/deb.sh            # prints the path of the .deb
#   lintian .build/credfile_*.deb  # no errors
set -euo pipefail
cd "$(dirname "$0")/.."

# A build folder of its own: `swift test` holds .build's lock while the package test runs this.
swift build -c release --static-swift-stdlib --scratch-path .build/release-static --product credfile >&2
bin="$(swift build -c release --static-swift-stdlib --scratch-path .build/release-static --show-bin-path)/credfile"
version="$("$bin" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
out=".build/credfile_${version}_${arch}.deb"

work="$(mktemp -d "${TMPDIR:-/tmp}/credfile-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"
doc="$root/usr/share/doc/credfile"
install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$doc" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d"

install -m 0755 "$bin" "$root/usr/bin/credfile"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/credfile"
"$bin" --generate-man | gzip -9n > "$root/usr/share/man/man1/credfile.1.gz"
"$bin" --generate-completion bash > "$root/usr/share/bash-completion/completions/credfile"
"$bin" --generate-completion zsh > "$root/usr/share/zsh/vendor-completions/_credfile"
"$bin" --generate-completion fish > "$root/usr/share/fish/vendor_completions.d/credfile.fish"
chmod 0644 "$root/usr/share/bash-completion/completions/credfile" \
    "$root/usr/share/zsh/vendor-completions/_credfile" "$root/usr/share/fish/vendor_completions.d/credfile.fish" \
    "$root/usr/share/man/man1/credfile.1.gz"

maintainer="credfile maintainers <maintainers@users.noreply.a-seed-a4bcadb5.example>"
cat > "$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: credfile
Upstream-Contact: $maintainer

Files: *
Copyright: 2026 the credfile authors
License: unspecified
 The authors have not yet published a license for credfile; until they do, this
 package may be used but carries no grant of further rights.
COPYRIGHT
chmod 0644 "$doc/copyright"

# A native package's changelog, in Debian's format, from the release date of this build.
date="$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
cat <<CHANGELOG | gzip -9n > "$doc/changelog.gz"
credfile ($version) unstable; urgency=medium

  * Release $version: see the README and Documentation/SPEC.md of this version.

 -- $maintainer  $date
CHANGELOG
chmod 0644 "$doc/changelog.gz"

# dpkg-shlibdeps reads a source package's debian/control: give it a minimal one.
mkdir -p "$work/src/debian"
printf 'Source: credfile\n\nPackage: credfile\nArchitecture: any\n' > "$work/src/debian/control"
depends="$(cd "$work/src" && dpkg-shlibdeps -O "$root/usr/bin/credfile" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"

size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat > "$root/DEBIAN/control" <<CONTROL
Package: credfile
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Section: admin
Priority: optional
Description: hardened manager for username,password credential files
 credfile keeps the files of username,password lines that small apps use for
 their logins, and fixes what such apps get wrong: exact comparisons, salted
 PBKDF2 hashes through OpenSSL, atomic rewrites under a lock, and verification
 of the hashes written by htpasswd, Django, Werkzeug, mosquitto, Dovecot,
 OpenLDAP and crypt(3). It also answers PAM (pam_exec), checkpassword and Squid
 login checks from such a file.
CONTROL
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >&2
echo "$out"
