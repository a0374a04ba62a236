#!/usr/bin/env bash
# Build the Debian package of the release build (make deb calls it after `make release man`).
#
#   packaging/build-deb.sh        → .build/deb/tabbard_VERSION_ARCH.deb (and .build/deb/tabbard.deb)
#
# Standard tools only: `make install DESTDIR=… PREFIX=/usr` stages the files,
# strip(1) and gzip -9n do what dh_strip and dh_compress would, dpkg-shlibdeps
# finds the Depends of the binaries, dpkg-gencontrol writes DEBIAN/control
# (with Installed-Size), dpkg-deb --root-owner-group builds it, lintian checks it.
# Lintian's findings and why each remaining one stays: docs/PACKAGING.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
src=packaging/debian
out=.build/deb
work="$out/work"
stage="$work/tabbard"
rm -rf "$work"
mkdir -p "$stage" "$work/debian"

version="$(.build/release/tabbarctl --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"

# 1. Files. Debian 12 keeps system units in /lib/systemd/system (user units, sysusers.d
#    and tmpfiles.d are under /usr/lib).
make -s install DESTDIR="$PWD/$stage" PREFIX=/usr SYSTEMUNITDIR="$PWD/$stage/lib/systemd/system" >/dev/null
install -D -m 0644 "$src/config.json" "$stage/etc/tabbard/config.json"
install -D -m 0644 "$src/copyright" "$stage/usr/share/doc/tabbard/copyright"
for f in "$stage"/usr/bin/*; do
    if file -b "$f" | grep -q '^ELF'; then
        strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"
    fi
done
gzip -9n "$stage"/usr/share/man/man*/*
# Debian's changelog of this native package (dpkg-gencontrol reads it too).
cat > "$work/debian/changelog" <<CHANGELOG
tabbard ($version) unstable; urgency=medium

  * Built from the tabbard source tree (make deb).

 -- tabbard maintainers <maintainers@users.noreply.a-seed-ac3e0b22.example>  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
CHANGELOG
gzip -9nc "$work/debian/changelog" > "$stage/usr/share/doc/tabbard/changelog.gz"
find "$stage" -type d -exec chmod 0755 {} +

# 2. Control: Depends from the binaries' NEEDED entries, Installed-Size from the files.
cp "$src/control" "$work/debian/control"
mkdir -p "$stage/DEBIAN"
install -m 0755 "$src/postinst" "$src/prerm" "$src/postrm" "$stage/DEBIAN/"
install -m 0644 "$src/conffiles" "$stage/DEBIAN/"
elves=()
for f in "$stage"/usr/bin/*; do file -b "$f" | grep -q '^ELF' && elves+=("$f"); done
(cd "$work" && dpkg-shlibdeps -Tdebian/substvars "${elves[@]#"$work/"}")
(cd "$work" && dpkg-gencontrol -ptabbard -Ptabbard -Tdebian/substvars -fdebian/files)
# md5sums, as dh_md5sums writes them
(cd "$stage" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\n' | LC_ALL=C sort | xargs md5sum > DEBIAN/md5sums)
chmod 0644 "$stage/DEBIAN/md5sums"

# 3. The package.
deb="$out/tabbard_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
ln -sf "$(basename "$deb")" "$out/tabbard.deb"
echo "built $deb ($(du -k "$deb" | cut -f1) KiB)"
grep '^Depends:' "$stage/DEBIAN/control"

# 4. lintian (findings are printed; docs/PACKAGING.md says why the remaining ones stay).
if command -v lintian >/dev/null; then
    lintian --info "$deb" || true
fi
