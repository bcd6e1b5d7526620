#!/usr/bin/env bash
# Builds the Debian package .build/credfile_VERSION_ARCH.deb: the release binary (Swift's
# runtime linked in statically, so Depends names only Debian libraries), credfile(1), the
# bash, zsh and fish completions, the example systemd units (not enabled) and the system
# user they run as (sysusers.d, made by the postinst as dh_installsysusers does), and in
# /usr/share/doc/credfile the copyright (DEP-5), NOTICE, changelog, README,
# Documentation/ and the examples. VERSION is the binary's own
# (`credfile --version`: one constant, CredFileCLI.version); Depends comes from the linked
# libraries and those opened at first use through dpkg-shlibdeps. Needs dpkg-dev
# (dpkg-shlibdeps), gcc (a stand-in for the libraries opened at first use) and, to
# check, lintian.
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

# The licence (DEP-5): credfile is Apache-2.0; the built-in blocklist compiled into the
# binary is Django's, BSD-3-clause, whose clause 2 asks for its notice here. Its folder is
# wherever its LICENSE.django is (Sources/CredFileBlocklist/).
django_license="$(find Sources -name LICENSE.django)"
[ "$(printf '%s\n' "$django_license" | wc -l)" = 1 ] && [ -f "$django_license" ] ||
    { echo "deb.sh: expected one Sources/**/LICENSE.django, found: ${django_license:-none}" >&2; exit 1; }
blocklist_dir="$(dirname "$django_license")"
# A DEP-5 license paragraph's text: each line indented one space, an empty line as " .".
dep5_text() { sed -e 's/^[[:space:]]*$/./' -e 's/^/ /'; }
{
    cat <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: credfile
Upstream-Contact: $maintainer

Files: *
Copyright: 2026 the credfile authors
License: Apache-2.0

Files: $blocklist_dir/*
Copyright: Django Software Foundation and individual contributors
License: BSD-3-clause
Comment: The built-in password blocklist compiled into /usr/bin/credfile:
 django/contrib/auth/common-passwords.txt.gz of Django, Royce Williams' list of
 the 20,000 most common passwords of the Pwned Passwords corpus as Django ships
 it (version and sha256 in /usr/share/doc/credfile/NOTICE).

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy of
 the License at
 .
     http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations under
 the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can be
 found in "/usr/share/common-licenses/Apache-2.0".

License: BSD-3-clause
COPYRIGHT
    dep5_text < "$django_license"
} > "$doc/copyright"
install -m 0644 NOTICE "$doc/NOTICE"

# What users read, as dh_installdocs and dh_compress would lay it out: the README and
# Documentation/*.md (gzipped when over 4 KiB), and each example folder as it is (examples/
# is never compressed). A folder of Swift sources (a SwiftPM target of the library) is not
# an example for the command line.
install_doc() {  # install_doc FILE DEST: DEST or DEST.gz
    if [ "$(stat -c %s "$1")" -gt 4096 ]; then gzip -9n < "$1" > "$2.gz"; chmod 0644 "$2.gz"
    else install -m 0644 "$1" "$2"; fi
}
install_doc README.md "$doc/README.md"
for page in Documentation/*.md; do
    install -d -m 0755 "$doc/Documentation"
    install_doc "$page" "$doc/Documentation/$(basename "$page")"
done
for example in Examples/*/; do
    example="${example%/}"
    [ -n "$(find "$example" -name '*.swift' -print -quit)" ] && continue
    (cd Examples && find "$(basename "$example")" -type d -exec install -d -m 0755 "$doc/examples/{}" \; \
        -o -type f -exec install -m 0644 {} "$doc/examples/{}" \;)
done
# The example systemd units, installed where bookworm's dh_installsystemd puts them and
# not enabled (no maintainer script): `systemctl enable --now credfile.socket` is the
# admin's choice, after reading them.
for unit in Examples/systemd/*.service Examples/systemd/*.socket; do
    [ -f "$unit" ] || continue
    install -d -m 0755 "$root/lib/systemd/system"
    install -m 0644 "$unit" "$root/lib/systemd/system/$(basename "$unit")"
done
# The system user credfile the service runs as: a sysusers.d file, and a postinst that
# runs systemd-sysusers on it, as debhelper's dh_installsysusers writes them (its
# autoscript postinst-sysusers, and the Depends it adds). It makes the user and nothing
# else: no unit is enabled or started. (A static user, not DynamicUser=: the admin gives
# the service a credential file through the group credfile, and the guard database is
# shared with the admin's own commands; Documentation/systemd.md.)
sysusers=Examples/systemd/sysusers.d/credfile.conf
install -d -m 0755 "$root/usr/lib/sysusers.d"
install -m 0644 "$sysusers" "$root/usr/lib/sysusers.d/credfile.conf"
cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
# Makes the system user and group credfile (/usr/lib/sysusers.d/credfile.conf), which
# credfile-serve@.service runs as. Enables no unit.
set -e
if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] || [ "$1" = "abort-deconfigure" ] || [ "$1" = "abort-remove" ] ; then
   if [ -z "${DPKG_ROOT:-}" ] ; then
      systemd-sysusers credfile.conf
   fi
fi
exit 0
POSTINST
chmod 0755 "$root/DEBIAN/postinst"

# A native package's changelog is Debian's format: CHANGELOG.md's entries from this
# version down, each bullet one item; a version not in CHANGELOG.md yet gets its
# [Unreleased] section. The version built is dated from this build (the commit's time).
build_date="$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")"
awk -v version="$version" -v maintainer="$maintainer" -v build_date="$build_date" \
    -v released="$(grep -c "^## \[$version\]" CHANGELOG.md || true)" '
    function flush() {
        if (item == "") return
        # Debian wants lines of at most 80 columns: "  * " then "    " continuations.
        n = split(item, words, " "); line = "  *"
        for (i = 1; i <= n; i++) {
            if (length(line) + 1 + length(words[i]) > 78) { print line; line = "   " }
            line = line " " words[i]
        }
        print line; item = ""
    }
    function close_entry() { flush(); if (open) { print ""; print " -- " maintainer "  " date; print "" }; open = 0 }
    function rfc2822(day,   cmd, out) {
        cmd = "date -R -u -d " day; cmd | getline out; close(cmd); return out
    }
    /^## \[/ {
        close_entry()
        name = $2; gsub(/[][]/, "", name)
        if (name == "Unreleased") { if (released) next; name = version; date = build_date; started = 1 }
        else if (name == version) {
            # The version being built is dated when its commit was made: CHANGELOG.md gives
            # days only, and two releases on one day would give the newest entry no newer
            # date than the one before it (lintian: latest-changelog-entry-without-new-date).
            started = 1; date = build_date
        } else date = rfc2822($4)
        if (!started) next
        print "credfile (" name ") unstable; urgency=medium"; print ""; open = 1; section = ""
        next
    }
    !open { next }
    /^### / { flush(); section = substr($0, 5) ": "; next }
    /^- / { flush(); item = section substr($0, 3); next }
    /^[[:space:]]*$/ { flush(); next }
    /^  / && item != "" { sub(/^ +/, ""); item = item " " $0; next }
    { if (item == "") item = $0; else item = item " " $0 }
    END { close_entry() }
' CHANGELOG.md | sed '$d' | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
# The first line, read with the whole stream consumed: `zcat | head -1` under pipefail fails
# whenever head exits between two of zcat's writes (SIGPIPE), which a changelog of more
# than one write (4.0.0's, 43 KB) made happen on a loaded CI machine.
first_entry="$(zcat "$doc/changelog.gz" | sed -n 1p)"
[[ $first_entry == "credfile ($version) "* ]] ||
    { echo "deb.sh: CHANGELOG.md has neither a [$version] nor an [Unreleased] section" >&2; exit 1; }

# dpkg-shlibdeps reads a source package's debian/control: give it a minimal one.
mkdir -p "$work/src/debian"
printf 'Source: credfile\n\nPackage: credfile\nArchitecture: any\n' > "$work/src/debian/control"
# credfile opens libmicrohttpd and libsystemd (serve) and ICU (export --to ldif) at their
# first use (dlopen; Documentation/Decisions.md "Start-up"), so they are not in its ELF
# NEEDED and dpkg-shlibdeps cannot see them. A stand-in library that links them and takes
# the address of every function credfile calls in them (the MHD_/sd_ names its Swift
# objects leave undefined, the ICU names ldapprep.c looks up) lets dpkg-shlibdeps give
# their Depends, with versions, from the same symbols files.
objects="$(swift build -c release --static-swift-stdlib --scratch-path .build/release-static --show-bin-path)/credfile.build"
{
    printf '#include <stdarg.h>\n#include <sys/types.h>\n#include <sys/socket.h>\n#include <unistd.h>\n'
    printf '#include <microhttpd.h>\n#include <systemd/sd-daemon.h>\n#include <unicode/usprep.h>\n#include <unicode/ustring.h>\n'
    printf '#include <postgresql/libpq-fe.h>\n'
    echo 'void *credfile_opened_at_first_use[] = {'
    nm -u --format=just-symbols "$objects"/*.o | grep -E '^(MHD|sd)_' | sort -u | sed 's/.*/    (void *)\&&,/'
    grep -oE 'NAME\((u|usprep)_[A-Za-z0-9]+\)' Sources/CCredFile/ldapprep.c | sed -E 's/NAME\((.*)\)/    (void *)\&\1,/'
    # libpq (a PostgreSQL state, SPEC §15): the names postgresql.c looks up.
    grep -oE 'LOOK_UP\(PQ[A-Za-z]+\)' Sources/CCredFile/postgresql.c | sort -u | sed -E 's/LOOK_UP\((.*)\)/    (void *)\&\1,/'
    echo '};'
} > "$work/opened.c"
grep -q 'MHD_start_daemon_va' "$work/opened.c" || { echo "deb.sh: found no libmicrohttpd calls in $objects" >&2; exit 1; }
gcc -shared -fPIC -o "$work/src/opened.so" "$work/opened.c" -lmicrohttpd -lsystemd -licuuc -lpq
depends="$(cd "$work/src" && dpkg-shlibdeps -O "$root/usr/bin/credfile" opened.so 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
for package in libmicrohttpd12 libsystemd0 "libicu[0-9]" libpq5; do
    grep -q "$package" <<<"$depends" || { echo "deb.sh: Depends lacks $package: $depends" >&2; exit 1; }
done

size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat > "$root/DEBIAN/control" <<CONTROL
Package: credfile
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends, procps, systemd | systemd-standalone-sysusers | systemd-sysusers
Section: admin
Priority: optional
Description: hardened manager for username,password credential files
 credfile keeps the files of username,password lines that small apps use for
 their logins, and fixes what such apps get wrong: exact comparisons, salted
 PBKDF2 hashes through OpenSSL, atomic rewrites under a lock, and verification
 of the hashes written by htpasswd, Django, Werkzeug, mosquitto, Dovecot,
 OpenLDAP and crypt(3). It answers the login checks of other programs from
 such a file: web servers (credfile serve, for nginx auth_request, Caddy and
 Traefik), PAM (pam_exec), Dovecot (checkpassword) and Squid, each guarded
 against guessing by throttling and lockout per name.
CONTROL
(cd "$root" && find usr $([ -d lib ] && echo lib) -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >&2
echo "$out"
