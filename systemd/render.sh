#!/usr/bin/env bash
# Render tabbard's systemd unit templates (*.in) for an install prefix.
#
#   systemd/render.sh PREFIX OUTDIR
#
# Replaces @bindir@ (PREFIX/bin), @pkgdatadir@ (PREFIX/share/tabbard) and
# @docdir@ (PREFIX/share/doc/tabbard) — each can be overridden with the
# environment variables BINDIR, PKGDATADIR, DOCDIR — and writes:
#   OUTDIR/system/tabbard.service  OUTDIR/system/tabbard.socket
#   OUTDIR/user/tabbard.service    OUTDIR/user/tabbard.socket
#   OUTDIR/user/tabbard@.service   OUTDIR/user/tabbard@.socket    (one daemon per app)
#   OUTDIR/user/tabbard-web.service
#   (every other system/*.in and user/*.in too)
#   OUTDIR/sysusers.d/tabbard.conf OUTDIR/tmpfiles.d/tabbard.conf   (copied)
# Example: systemd/render.sh /usr/local build/systemd
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PREFIX OUTDIR" >&2
    exit 2
fi
prefix="${1%/}"
out="$2"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

bindir="${BINDIR:-$prefix/bin}"
pkgdatadir="${PKGDATADIR:-$prefix/share/tabbard}"
docdir="${DOCDIR:-$prefix/share/doc/tabbard}"

for v in "$bindir" "$pkgdatadir" "$docdir"; do
    case "$v" in
        /*) ;;
        *) echo "$0: paths must be absolute: $v" >&2; exit 2 ;;
    esac
    case "$v" in
        *[%\|\&\\[:space:]]*) echo "$0: unsupported character in path: $v" >&2; exit 2 ;;
    esac
done

for scope in system user; do
    mkdir -p "$out/$scope"
    for in in "$src/$scope"/*.in; do
        unit="$(basename "$in" .in)"
        sed -e "s|@bindir@|$bindir|g" \
            -e "s|@pkgdatadir@|$pkgdatadir|g" \
            -e "s|@docdir@|$docdir|g" \
            "$in" > "$out/$scope/$unit.tmp"
        if grep -n '@[a-z]*@' "$out/$scope/$unit.tmp" >&2; then
            echo "$0: unrendered placeholder in $scope/$unit" >&2
            rm -f "$out/$scope/$unit.tmp"
            exit 1
        fi
        chmod 0644 "$out/$scope/$unit.tmp"
        mv "$out/$scope/$unit.tmp" "$out/$scope/$unit"
    done
done
for d in sysusers.d tmpfiles.d; do
    mkdir -p "$out/$d"
    install -m 0644 "$src/$d/tabbard.conf" "$out/$d/tabbard.conf"
done
