#!/usr/bin/env bash
# Install the .deb on this machine, use it as a person would, remove it, and check
# that nothing is left behind. Needs root (says SKIP otherwise); CI runs as root.
#
#   packaging/test-deb.sh .build/deb/tabbard.deb
#
# 1. Refuses if tabbard is installed already (from a package or by hand in /usr).
# 2. Records the file list of /usr /etc /lib /var/lib and the users and groups.
# 3. dpkg -i: the maintainer scripts create the user and directories (sysusers,
#    tmpfiles, without systemd as PID 1 here).
# 4. In a mount namespace where /opt/swift (the toolchain) is an empty tmpfs, with
#    PATH and LD_LIBRARY_PATH free of it: ldd shows nothing from /opt/swift;
#    /usr/bin/tabbard starts and /usr/bin/tabbarctl gets answers from it; the
#    per-application template (the installed tabbard@.service's own ExecStart,
#    under systemd-socket-activate on tabbard@.socket's path) serves instance
#    "mail" with its own config and state, reached by `tabbarctl --instance mail`;
#    `man tabbarctl` works and the installed pages render without warnings.
# 5. dpkg -r (the conffile stays), dpkg -P; then the file list, users and groups
#    are what they were, and none of the package's paths remains.
# A trap purges the package and stops the daemons even when a step fails.
set -uo pipefail
export LC_ALL=C.UTF-8
deb="$(readlink -f "$1")"
[ -f "$deb" ] || { echo "test-deb: no package at $1 (make deb)"; exit 1; }
if [ "$(id -u)" != 0 ]; then echo "SKIP: test-deb needs root (dpkg -i); CI runs as root"; exit 0; fi

exec 9>/run/lock/tabbard-test-deb.lock
flock 9
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

if dpkg-query -W -f='${Status}' tabbard 2>/dev/null | grep -q 'installed\|config-files'; then
    echo "test-deb: the tabbard package is installed on this machine already; not touching it"; exit 1
fi
for f in /usr/bin/tabbard /usr/bin/tabbarctl /etc/tabbard /usr/share/tabbard; do
    [ -e "$f" ] && { echo "test-deb: $f exists already; not touching it"; exit 1; }
done

tmp="$(mktemp -d)"
installed=0
cleanup() {
    if [ "$installed" = 1 ]; then dpkg -P tabbard >/dev/null 2>&1 || echo "cleanup: dpkg -P tabbard failed"; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

snapshot() { # FILE: paths under the trees a package touches, and the users and groups
    { find /usr /etc /lib /var/lib -xdev \( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/systemd/deb-systemd-helper-enabled \) -prune -o -print 2>/dev/null
      getent passwd | cut -d: -f1 | sed 's/^/user:/'
      getent group | cut -d: -f1,4 | sed 's/^/group:/'; } | LC_ALL=C sort > "$1"
}
snapshot "$tmp/before"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$' > "$tmp/package-paths"
# Paths that existed before (shared directories such as /usr/bin) must still exist after.
while read -r p; do [ -e "$p" ] && echo "$p"; done < "$tmp/package-paths" > "$tmp/preexisting"

# 3. install
if out="$(dpkg -i "$deb" 2>&1)"; then installed=1; ok "dpkg -i $(basename "$deb")"
else installed=1; fail "dpkg -i:"; printf '    %s\n' "$out"; exit 1; fi
getent passwd tabbard >/dev/null && ok "postinst created the system user tabbard (systemd-sysusers)" || fail "no user tabbard after dpkg -i"
id -nG tabbard 2>/dev/null | grep -qw audio && ok "tabbard is in group audio" || fail "tabbard is not in group audio"
[ "$(stat -c %U:%a /var/lib/tabbard 2>/dev/null)" = "tabbard:750" ] && ok "postinst created /var/lib/tabbard (systemd-tmpfiles)" || fail "/var/lib/tabbard: $(stat -c %U:%a /var/lib/tabbard 2>&1)"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -d "$src/web" ]; then  # the web front end, when the tree has one
    missing=""
    for f in $(cd "$src" && find web -type f ! -name tabbard-web); do [ -f "/usr/share/tabbard/$f" ] || missing="$missing $f"; done
    [ -f "$src/web/tabbard-web" ] && [ ! -x /usr/bin/tabbard-web ] && missing="$missing /usr/bin/tabbard-web"
    [ -z "$missing" ] && ok "the web front end is installed (/usr/share/tabbard/web)" || fail "not installed from web/:$missing"
fi
cmp -s /usr/share/tabbard/openrpc.json "$src/docs/openrpc.json" && ok "the OpenRPC document is installed (/usr/share/tabbard/openrpc.json)" \
  || fail "/usr/share/tabbard/openrpc.json is missing or not docs/openrpc.json"
dpkg-query -W -f='${Conffiles}\n' tabbard | grep -q /etc/tabbard/config.json && ok "/etc/tabbard/config.json is a conffile" || fail "/etc/tabbard/config.json is not a conffile"

# 4. use it without the toolchain
cat > "$tmp/use.sh" <<'USE'
set -uo pipefail
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
mount --make-rprivate / && mount -t tmpfs none /opt/swift || { echo "FAIL: cannot hide /opt/swift"; exit 1; }
[ -z "$(ls -A /opt/swift)" ] && ok "/opt/swift is an empty tmpfs in this namespace"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LD_LIBRARY_PATH= HOME="$T/home" XDG_RUNTIME_DIR="$T/run" XDG_CONFIG_HOME="$T/home/.config"
unset XDG_STATE_HOME TABBARD_SOCKET TABBARD_INSTANCE TABBARD_SOUNDS
mkdir -p "$HOME" && mkdir -m 0700 "$XDG_RUNTIME_DIR"
for b in /usr/bin/tabbard /usr/bin/tabbarctl; do
    libs="$(ldd "$b")"
    if grep -q '/opt/swift\|not found\|libswift' <<<"$libs"; then fail "ldd $b:"; printf '    %s\n' "$libs"
    else ok "ldd $b: nothing from /opt/swift, nothing missing"; fi
done
wait_for() { # SOCKET: until tabbarctl gets an answer there (30 s)
    for _ in $(seq 300); do tabbarctl --socket "$1" --timeout 1000 ping >/dev/null 2>&1 && return 0; sleep 0.1; done
    return 1
}
tabbard --audio null --log-level warning 2>"$T/daemon.log" & d=$!
if wait_for "$XDG_RUNTIME_DIR/tabbard/socket"; then ok "installed tabbard answers on \$XDG_RUNTIME_DIR/tabbard/socket"
else fail "installed tabbard did not answer; its log:"; sed 's/^/    /' "$T/daemon.log"; fi
# (Output into a variable first: grep -q would close the pipe early under pipefail.)
out="$(tabbarctl sounds 2>&1)"
grep -q '^click .*/usr/share/tabbard/sounds/click.wav' <<<"$out" && ok "it loaded the installed sounds (/usr/share/tabbard/sounds)" || fail "tabbarctl sounds: $out"
out="$(tabbarctl select chat 2>&1)"
grep -q '^selected chat' <<<"$out" && ok "tabbarctl select chat" || fail "tabbarctl select chat: $out"
out="$(tabbarctl reset 2>&1)"
grep -q 'selected home' <<<"$out" && ok "tabbarctl reset: back to the configured bar" || fail "tabbarctl reset: $out"
[ -f "$HOME/.local/state/tabbard/state.json" ] || [ -f "$HOME/.local/state/tabbard/state.json.journal" ] \
    && ok "its state is in ~/.local/state/tabbard/" || fail "no state in ~/.local/state/tabbard: $(ls -R "$HOME" 2>&1)"
kill "$d"; wait "$d"
out="$(tabbarctl state 2>&1)"
case "$out" in *"make run"*) fail "the installed tabbarctl suggests make run: $out" ;;
               *"systemctl --user start tabbard.socket"*) ok "with no daemon, the installed tabbarctl says: ${out#tabbarctl: }" ;;
               *) fail "unexpected: $out" ;; esac

# The per-application template, as systemd would run it: specifiers filled in.
unit=/usr/lib/systemd/user/tabbard@.service
listen="$(sed -n 's/^ListenStream=//p' /usr/lib/systemd/user/tabbard@.socket)"
listen="${listen//%t/$XDG_RUNTIME_DIR}"; listen="${listen//%i/mail}"
exec_start="$(sed -n 's/^ExecStart=//p' "$unit")"
exec_start="${exec_start//%h/$HOME}"; exec_start="${exec_start//%E/$XDG_CONFIG_HOME}"; exec_start="${exec_start//%i/mail}"
exec_start="${exec_start//\$\$/\$}"
mkdir -p "$XDG_CONFIG_HOME/tabbard"
echo '{"bar": {"items": [{"id": "inbox"}, {"id": "sent"}], "selected": "inbox"}, "audio": "null"}' > "$XDG_CONFIG_HOME/tabbard/mail.json"
eval "set -- $exec_start"
systemd-socket-activate --listen="$listen" "$@" 2>"$T/mail.log" & m=$!
if wait_for "$listen"; then ok "tabbard@.service serves instance mail on $listen (socket-activated)"
else fail "instance mail did not answer; its log:"; sed 's/^/    /' "$T/mail.log"; fi
out="$(tabbarctl --instance mail state 2>&1)"
grep -q 'selected inbox' <<<"$out" && ok "tabbarctl --instance mail: its own config (mail.json: inbox, sent)" || fail "tabbarctl --instance mail state: $out"
out="$(TABBARD_INSTANCE=mail tabbarctl select sent 2>&1)"
grep -q 'selected sent' <<<"$out" && ok "TABBARD_INSTANCE=mail tabbarctl select sent" || fail "TABBARD_INSTANCE=mail: $out"
# ExecStart= passes no --audio/--sounds (flags would win over the config file):
# the instance's "audio": "null" is in force, and the sounds are the installed ones.
out="$(tabbarctl --instance mail stats 2>&1)"
grep -qx 'audio.sink: null' <<<"$out" && ok "instance mail: its config's \"audio\": \"null\" is in force" || fail "instance mail: its config's audio is not in force: $(grep '^audio.sink' <<<"$out")"
out="$(tabbarctl --instance mail sounds 2>&1)"
grep -q '^click .*/usr/share/tabbard/sounds/click.wav' <<<"$out" && ok "instance mail: the installed sounds (no --sounds)" || fail "instance mail sounds: $out"
ls "$HOME/.local/state/tabbard/mail/" 2>/dev/null | grep -q '^state.json' && ok "its own state: ~/.local/state/tabbard/mail/" || fail "no state in ~/.local/state/tabbard/mail"
kill "$m"; wait "$m" 2>/dev/null

# Man pages, installed
out="$(MANPAGER=cat MANWIDTH=80 man tabbarctl 2>&1)"
grep -q -- '--instance' <<<"$out" && ok "man tabbarctl" || fail "man tabbarctl: $(head -3 <<<"$out")"
for p in /usr/share/man/man1/tabbarctl.1.gz /usr/share/man/man5/tabbard.conf.5.gz /usr/share/man/man8/tabbard.8.gz; do
    w="$(man --warnings -l "$p" 2>&1 >/dev/null)"
    [ -z "$w" ] && ok "man --warnings -l $p: clean" || fail "man --warnings -l $p: $w"
done
exit "$status"
USE
mkdir -p "$tmp/ns"
T="$tmp/ns" unshare -m bash "$tmp/use.sh" || status=1

# 5. remove, purge, compare
if out="$(dpkg -r tabbard 2>&1)"; then ok "dpkg -r tabbard"; else fail "dpkg -r:"; printf '    %s\n' "$out"; fi
[ ! -e /usr/bin/tabbard ] && [ -f /etc/tabbard/config.json ] && ok "after dpkg -r: binaries gone, the conffile kept" || fail "after dpkg -r: $(ls -d /usr/bin/tabbard /etc/tabbard/config.json 2>&1)"
if out="$(dpkg -P tabbard 2>&1)"; then installed=0; ok "dpkg -P tabbard"; else fail "dpkg -P:"; printf '    %s\n' "$out"; fi
snapshot "$tmp/after"
left="$(comm -13 "$tmp/before" "$tmp/after")"
gone="$(comm -23 "$tmp/before" "$tmp/after")"
ours="$(printf '%s\n' "$left" | grep -i 'tabbar' || true)"
remaining=""
while read -r p; do
    [ -e "$p" ] && ! grep -qxF "$p" "$tmp/preexisting" && remaining="$remaining $p"
done < "$tmp/package-paths"
if [ -n "$ours" ] || [ -n "$remaining" ]; then
    fail "left behind after dpkg -P:"; printf '    %s\n' $ours $remaining
else
    ok "after dpkg -P nothing of the package is left (files under /usr /etc /lib /var/lib, users, groups)"
fi
others="$(printf '%s\n' "$left" "$gone" | grep -v '^$' | grep -vi tabbar || true)"
[ -n "$others" ] && echo "info: changed meanwhile by something else on this machine (not tabbard): $(printf '%s\n' "$others" | wc -l) path(s), e.g. $(printf '%s\n' "$others" | head -3 | tr '\n' ' ')"

[ "$status" -eq 0 ] && echo "PASS (the .deb installs, runs without the toolchain, uninstalls cleanly)" || echo "FAILED"
exit "$status"
