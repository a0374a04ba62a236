#!/usr/bin/env bash
# Check tabbard's systemd files. Works without systemd as PID 1 and without
# the "tabbard" user existing (nothing on the host is changed).
#
#   systemd/check-units.sh [EXECUTABLE]
#
# 1. Renders the *.in templates (render.sh) into a temp dir with a prefix
#    whose bin/tabbard is a symlink to EXECUTABLE (default /bin/true):
#    `systemd-analyze verify` refuses an ExecStart= binary that does not
#    exist. Pass .build/release/tabbard to check against the real build.
# 2. `systemd-analyze verify --man=no` on the system pair and (with --user
#    and a temporary XDG_RUNTIME_DIR, which the user manager needs) the user
#    pair and the per-application templates tabbard@.socket/tabbard@.service
#    (as instance "mail", through symlinks tabbard@mail.* → tabbard@.*). Fails if verify exits non-zero or prints anything at all: verify
#    only *warns* (exit 0) about unknown keys and bad values.
# 3. Applies sysusers.d/ and tmpfiles.d/ to a temporary --root and fails on
#    any error or unexpected output.
# 4. `systemd-analyze security --offline=yes` on the system service; fails if
#    the overall exposure is above MAX_EXPOSURE (default 1.5). Prints the
#    score (and, for information only, the user service's).
set -euo pipefail
export LC_ALL=C SYSTEMD_COLORS=0 SYSTEMD_PAGER= SYSTEMD_LOG_COLOR=0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exe="${1:-/bin/true}"
max="${MAX_EXPOSURE:-1.5}"

command -v systemd-analyze >/dev/null || { echo "check-units: systemd-analyze not found (apt-get install systemd)" >&2; exit 1; }
[ -x "$exe" ] && [ -f "$exe" ] || { echo "check-units: not an executable file: $exe" >&2; exit 1; }
exe="$(readlink -f "$exe")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# 1. render
mkdir -p "$tmp/prefix/bin" "$tmp/xdg"
chmod 0700 "$tmp/xdg"
ln -s "$exe" "$tmp/prefix/bin/tabbard"
ln -s "$here/../web/tabbard-web" "$tmp/prefix/bin/tabbard-web"
"$here/render.sh" "$tmp/prefix" "$tmp/units"

# ExecReload=/bin/kill comes from procps, which every host running systemd as
# PID 1 has but a minimal container may lack; verify would then report the
# missing binary. Substitute a stand-in in the temp copy only, and say so.
if [ ! -x /bin/kill ]; then
    echo "note: /bin/kill (package procps) is missing here; verifying with /bin/true in its place"
    sed -i 's|^ExecReload=/bin/kill |ExecReload=/bin/true |' "$tmp"/units/*/tabbard.service
fi

# 2. verify
verify() { # LABEL DIR "UNIT..." [systemd-analyze options...]
    local label="$1" dir="$2" units="$3" out rc=0
    shift 3
    # shellcheck disable=SC2086 # $units is a list of plain unit names
    out="$(cd "$dir" && systemd-analyze "$@" verify --man=no $units 2>&1)" || rc=$?
    if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
        fail "systemd-analyze verify ($label: $units) exit=$rc:"
        printf '%s\n' "$out" | sed 's/^/    /'
    else
        echo "ok: systemd-analyze verify --man=no $label: $units (no output, exit 0)"
    fi
}
verify system "$tmp/units/system" "tabbard.socket tabbard.service"
XDG_RUNTIME_DIR="$tmp/xdg" verify user "$tmp/units/user" "tabbard.socket tabbard.service" --user
ln -s tabbard@.socket "$tmp/units/user/tabbard@mail.socket"
ln -s tabbard@.service "$tmp/units/user/tabbard@mail.service"
XDG_RUNTIME_DIR="$tmp/xdg" verify user "$tmp/units/user" "tabbard@mail.socket tabbard@mail.service" --user
# The template starts tabbard through /bin/sh (for its optional config): verify checks
# /bin/sh, so check the path after `exec` here.
inner="$(sed -n 's/^ExecStart=.* exec \([^ ]*\) .*/\1/p' "$tmp/units/user/tabbard@.service")"
if [ -z "$inner" ] || [ ! -x "$inner" ]; then
    fail "user/tabbard@.service: the program after exec (\"$inner\") is not an executable"
else
    echo "ok: user/tabbard@.service execs $inner"
fi
rc=0  # the web front end's user unit (docs/WEB.md)
out="$(cd "$tmp/units/user" && XDG_RUNTIME_DIR="$tmp/xdg" systemd-analyze --user verify --man=no tabbard-web.service 2>&1)" || rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
    fail "systemd-analyze verify (user) tabbard-web.service exit=$rc:"
    printf '%s\n' "$out" | sed 's/^/    /'
else
    echo "ok: systemd-analyze verify --man=no user/tabbard-web.service (no output, exit 0)"
fi

# 3. sysusers + tmpfiles into a scratch root
root="$tmp/root"
mkdir -p "$root/etc"
rc=0
out="$(systemd-sysusers --root="$root" "$here/sysusers.d/tabbard.conf" 2>&1)" || rc=$?
unexpected="$(printf '%s\n' "$out" | grep -v -E "^(Creating (group|user) .*|)$" || true)"
if [ "$rc" -ne 0 ] || [ -n "$unexpected" ] \
   || ! grep -q '^tabbard:' "$root/etc/passwd" \
   || ! grep -q '^audio:.*[:,]tabbard\(,\|$\)' "$root/etc/group"; then
    fail "systemd-sysusers --root sysusers.d/tabbard.conf exit=$rc:"
    printf '%s\n' "$out" | sed 's/^/    /'
else
    echo "ok: systemd-sysusers (user tabbard, group tabbard, member of audio)"
fi
rc=0
out="$(systemd-tmpfiles --root="$root" --create "$here/tmpfiles.d/tabbard.conf" 2>&1)" || rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ] || [ ! -d "$root/run/tabbard" ] || [ ! -d "$root/var/lib/tabbard" ]; then
    fail "systemd-tmpfiles --root --create tmpfiles.d/tabbard.conf exit=$rc:"
    printf '%s\n' "$out" | sed 's/^/    /'
else
    echo "ok: systemd-tmpfiles (/run/tabbard, /var/lib/tabbard)"
fi

# 4. security score
score_of() { # prints X.Y from systemd-analyze security output on stdin
    sed -n 's/.*Overall exposure level for tabbard\.service: \([0-9][0-9]*\.[0-9]\).*/\1/p' | head -n 1
}
rc=0
out="$(cd "$tmp/units/system" && systemd-analyze security --offline=yes tabbard.service 2>&1)" || rc=$?
score="$(printf '%s\n' "$out" | score_of)"
if [ -z "$score" ]; then
    fail "systemd-analyze security --offline=yes system/tabbard.service: no score (exit=$rc)"
    printf '%s\n' "$out" | sed 's/^/    /'
elif awk -v s="$score" -v m="$max" 'BEGIN { exit !(s > m) }'; then
    fail "system/tabbard.service exposure $score > $max"
else
    echo "ok: systemd-analyze security --offline=yes system/tabbard.service: exposure $score (limit $max)"
fi
# The items that still add exposure ("-" marks them in the C locale).
printf '%s\n' "$out" | grep -E '^(- |✗ )' | sed -E 's/^(- |✗ )/    remaining: /; s/  +/  /g' || true
user_score="$(cd "$tmp/units/user" && XDG_RUNTIME_DIR="$tmp/xdg" systemd-analyze --user security --offline=yes tabbard.service 2>&1 | score_of || true)"
echo "info: user/tabbard.service exposure ${user_score:-?} (not gated: a user unit cannot use namespaces)"

if [ "$status" -eq 0 ]; then
    echo "PASS (system exposure $score)"
else
    echo "FAILED"
fi
exit "$status"
