#!/usr/bin/env bash
# Run the real daemon inside the system unit's sandbox, as far as that can be built
# without systemd as PID 1, and check it still does its whole job.
#
#   systemd/check-sandbox.sh TABBARD TABBARCTL
#
# The daemon is socket-activated (systemd-socket-activate binds the socket, as systemd
# would), then, with the same pid so LISTEN_PID still matches:
#   unshare --mount --net --ipc --uts      PrivateNetwork= PrivateMounts= ProtectHostname= (and IPC)
#     mounts:  every mount read-only        ProtectSystem=strict
#              the state and runtime dirs   StateDirectory= RuntimeDirectory= (writable)
#              empty /home /root /run/user  ProtectHome=yes
#              private /tmp and /var/tmp    PrivateTmp=yes
#              /proc/sys and /sys read-only ProtectKernelTunables= ProtectControlGroups=
#              /proc with hidepid=invisible,subset=pid   ProtectProc= ProcSubset=
#              /dev with only null zero full random urandom (+ /dev/snd)   DevicePolicy=closed DeviceAllow=char-alsa
#   setpriv    an unprivileged uid, group audio, no capabilities, no new privileges
#              User= SupplementaryGroups=audio CapabilityBoundingSet= NoNewPrivileges=
#   umask 0077                              UMask=
#   sandbox-exec.py (seccomp)               SystemCallFilter= SystemCallErrorNumber= SystemCallArchitectures=
#                                           MemoryDenyWriteExecute= RestrictAddressFamilies= RestrictNamespaces=
#                                           LockPersonality= RestrictRealtime= RestrictSUIDSGID=
# The seccomp filters are built from the rendered unit itself, so they follow its edits.
#
# Then it drives the daemon (hello, state changes, subscribe, sounds, sound.reload, stats),
# sends SIGHUP and SIGTERM, and fails unless: every request works, the notify socket saw
# READY=1, WATCHDOG=1, RELOADING=1…READY=1 and STOPPING=1, tabbard exits 0, the state
# was saved in the state directory, and (when strace is installed, which traces the whole
# run) no system call of the daemon was refused by the sandbox except the expected ones.
#
# Not reproduced (checked by reading, see docs/SYSTEMD.md): PrivateUsers=, KeyringMode=,
# RemoveIPC=, IPAddressDeny= (BPF), ProtectKernelModules=/ProtectKernelLogs=/ProtectClock=
# beyond the system calls they remove (already outside the allow-list).
#
# Needs root and permission to create namespaces; prints SKIP and exits 0 otherwise
# (set SANDBOX_REQUIRED=1 to make that a failure).
#
# ALSA: by default the daemon sees the machine's ALSA configuration (on a Debian desktop with
# pipewire-alsa, `default` is PipeWire's ALSA plugin, which asks for SCHED_FIFO). With
# SANDBOX_ALSA=plain it gets ALSA_CONFIG_PATH pointing at a copy of alsa.conf without the conf.d
# hooks: what a machine without pipewire-alsa (or any ALSA plugin package) has. `make test-sandbox`
# runs both.
set -euo pipefail
export LC_ALL=C

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 2 ] || { echo "usage: $0 TABBARD TABBARCTL" >&2; exit 2; }
tabbard="$(readlink -f "$1")"
tabbarctl="$(readlink -f "$2")"
sounds="$(readlink -f "$here/../Sounds")"
sandbox_uid="${SANDBOX_UID:-61234}"

skip() {
    echo "SKIP: $* (the sandbox check needs root, unshare, mount and setpriv)"
    [ "${SANDBOX_REQUIRED:-0}" = 1 ] && exit 1
    exit 0
}
[ "$(id -u)" = 0 ] || skip "not root"
for tool in unshare setpriv systemd-socket-activate systemd-analyze /usr/bin/python3; do
    command -v "$tool" >/dev/null || skip "$tool is missing"
done
unshare --mount --net --ipc --uts true 2>/dev/null || skip "cannot create namespaces here"
/usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libseccomp.so.2")' 2>/dev/null || skip "libseccomp2 is missing"

# Everything the sandboxed daemon needs is copied under one directory in /run: /tmp and
# /var/tmp are private inside, and /root and /home are hidden (where a checkout may live).
work="$(mktemp -d /run/tabbard-sandbox.XXXXXX)"
chmod 0755 "$work"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "${KEEP_SANDBOX:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

mkdir -p "$work/prefix/bin" "$work/prefix/share/tabbard" "$work/state" "$work/runtime"
install -m 0755 "$tabbard" "$work/prefix/bin/tabbard"
cp -r "$sounds" "$work/prefix/share/tabbard/sounds"
install -m 0755 "$here/sandbox-exec.py" "$work/sandbox-exec.py"
"$here/render.sh" "$work/prefix" "$work/units" >/dev/null
unit="$work/units/system/tabbard.service"
chown "$sandbox_uid:$sandbox_uid" "$work/state" "$work/runtime"
chmod 0750 "$work/state" "$work/runtime"
chmod -R a+rX "$work/prefix" "$work/units" "$work/sandbox-exec.py"

alsa_env=()
case "${SANDBOX_ALSA:-machine}" in
    machine) echo "info: ALSA: the machine's configuration ($(ls /etc/alsa/conf.d 2>/dev/null | grep -c pipewire-default || true) pipewire-default hook(s) in /etc/alsa/conf.d)" ;;
    plain)
        # alsa.conf without its @hooks (conf.d directories, asound.conf, ~/.asoundrc): no plugin routes `default`.
        awk 'BEGIN { skip = 0 } /^@hooks \[/ { skip = 1 } skip && /^\]/ { skip = 0; next } !skip' \
            /usr/share/alsa/alsa.conf > "$work/alsa.conf"
        chmod 0644 "$work/alsa.conf"
        alsa_env=(-E ALSA_CONFIG_PATH="$work/alsa.conf")
        echo "info: ALSA: plain alsa.conf without conf.d hooks (as without pipewire-alsa): ALSA_CONFIG_PATH=$work/alsa.conf" ;;
    *) echo "SANDBOX_ALSA must be machine or plain" >&2; exit 2 ;;
esac

# The ExecStart= of the rendered unit, with the daemon's paths.
exec_start="$(sed -n 's/^ExecStart=//p' "$unit")"
[[ "$exec_start" == "$work/prefix/bin/tabbard" || "$exec_start" == "$work/prefix/bin/tabbard "* ]] || fail "unexpected ExecStart=$exec_start"

# The notify socket, read by a small listener (systemd's is 0777 too).
/usr/bin/python3 - "$work/notify" "$work/notify.log" <<'EOF' &
import socket, sys, time, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
s.settimeout(60)
with open(sys.argv[2], "w") as log:
    try:
        while True:
            msg = s.recv(65536).decode()
            log.write(msg.replace("\n", " ") + "\n"); log.flush()
            if "STOPPING=1" in msg: break
    except socket.timeout:
        pass
EOF
pids+=($!)
for _ in $(seq 100); do [ -S "$work/notify" ] && break; sleep 0.05; done

# The mount namespace, set up as root inside `unshare`, then the privilege drop and seccomp.
cat > "$work/enter.sh" <<'EOF'
#!/bin/sh
# $1 = work dir, $2 = uid, $3 = unit, then the daemon's command line
set -e
work="$1"; uid="$2"; unit="$3"; shift 3
mount --make-rprivate /
# DevicePolicy=closed + DeviceAllow=char-alsa rw: only the standard pseudo devices and ALSA's.
mkdir "$work/dev"
mount -t tmpfs -o mode=0755,nosuid,noexec tmpfs "$work/dev"
for d in null zero full random urandom; do
    touch "$work/dev/$d"; mount --bind "/dev/$d" "$work/dev/$d"
done
if [ -d /dev/snd ]; then mkdir "$work/dev/snd"; mount --rbind /dev/snd "$work/dev/snd"; fi
mkdir "$work/dev/shm"; mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$work/dev/shm"
mount --move "$work/dev" /dev
# ProtectProc=invisible, ProcSubset=pid (a fresh proc mount with those options, if allowed here).
if mount -t proc -o hidepid=invisible,subset=pid,nosuid,nodev,noexec proc /proc 2>/dev/null; then
    echo "sandbox: /proc mounted with hidepid=invisible,subset=pid" >&2
else
    echo "sandbox: note: cannot remount /proc with hidepid/subset here; ProtectProc= not reproduced" >&2
fi
# ProtectHome=yes, PrivateTmp=yes.
for d in /home /root /run/user; do
    [ -d "$d" ] && mount -t tmpfs -o ro,mode=0755,nosuid,nodev,noexec tmpfs "$d"
done
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp
# ProtectSystem=strict (+ ProtectKernelTunables=, ProtectControlGroups=): everything
# read-only except /dev and /proc (the pseudo file systems handled above) ...
[ -d /proc/sys ] && mount --bind /proc/sys /proc/sys
awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r m; do
    case "$m" in /dev|/dev/*) continue ;; /proc) continue ;; esac
    mount -o remount,bind,ro "$m" 2>/dev/null || echo "sandbox: note: could not make $m read-only" >&2
done
# ... but the state and runtime directories (StateDirectory=, RuntimeDirectory=).
for d in "$work/state" "$work/runtime"; do mount --bind "$d" "$d"; mount -o remount,bind,rw "$d"; done
touch /usr/.sandbox-probe 2>/dev/null && { echo "sandbox: /usr is writable" >&2; exit 97; }
touch "$work/state/.probe" || { echo "sandbox: the state directory is not writable" >&2; exit 98; }
rm -f "$work/state/.probe"
audio_gid="$(getent group audio | cut -d: -f3)"
umask 0077
exec setpriv --reuid="$uid" --regid="$uid" --groups="${audio_gid:-29}" \
     --inh-caps=-all --bounding-set=-all --no-new-privs -- \
     /usr/bin/python3 "$work/sandbox-exec.py" "$unit" -- "$@"
EOF
chmod 0755 "$work/enter.sh"

trace=()
if command -v strace >/dev/null; then trace=(strace -f -qq -o "$work/trace"); fi
# shellcheck disable=SC2086  # ExecStart= is split like systemd splits it (no quoting in it)
"${trace[@]}" systemd-socket-activate --listen="$work/runtime/socket" \
    -E NOTIFY_SOCKET="$work/notify" -E WATCHDOG_USEC=1000000 -E STATE_DIRECTORY="$work/state" "${alsa_env[@]}" \
    unshare --mount --net --ipc --uts -- "$work/enter.sh" "$work" "$sandbox_uid" "$unit" $exec_start \
    2> "$work/stderr" &
outer=$!
pids+=($outer)
for _ in $(seq 100); do [ -S "$work/runtime/socket" ] && break; sleep 0.05; done

ctl() { timeout 10 "$tabbarctl" --socket "$work/runtime/socket" "$@"; }
step() { # LABEL COMMAND...: run a tabbarctl command, fail with its output if it fails
    local label="$1" out rc=0
    shift
    out="$("$@" 2>&1)" || rc=$?
    if [ "$rc" -ne 0 ]; then fail "$label (exit $rc): $out"; else echo "ok: $label"; fi
}
step "hello + ping (first connection starts the daemon)" ctl ping
daemon="$(pgrep -f -n -x "$work/prefix/bin/tabbard.*" || true)"
if [ -z "$daemon" ]; then
    fail "the daemon is not running"
    sed 's/^/    /' "$work/stderr"
    exit 1
fi
echo "ok: daemon pid $daemon, uid $(stat -c %u "/proc/$daemon"), $(grep -E '^(Seccomp|NoNewPrivs|CapBnd):' "/proc/$daemon/status" | tr -s '\t\n' '  ')"
[ "$(stat -c %u "/proc/$daemon")" = "$sandbox_uid" ] || fail "the daemon does not run as uid $sandbox_uid"
grep -q '^Seccomp:[[:space:]]*2' "/proc/$daemon/status" || fail "no seccomp filter on the daemon"
timeout 8 "$tabbarctl" --socket "$work/runtime/socket" monitor > "$work/monitor" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q . "$work/monitor" 2>/dev/null && break; sleep 0.05; done
step "tab.select" ctl select chat
step "badge.set" ctl badge chat 3
step "sound.play (thread + sink)" ctl play click
out="$(ctl sounds 2>&1)"  # no --sounds in ExecStart=: found next to the binary
if grep -q "^click .*$work/prefix/share/tabbard/sounds/click.wav" <<<"$out"; then echo "ok: sound.list: the installed sounds, PREFIX/share/tabbard/sounds"
else fail "sound.list: not the installed sounds: $out"; fi
step "sound.reload" ctl call sound.reload
step "stats.get" ctl stats
step "state.get" ctl state
kill -HUP "$daemon"
for _ in $(seq 100); do grep -q RELOADING=1 "$work/notify.log" 2>/dev/null && break; sleep 0.05; done
step "after SIGHUP" ctl ping
sleep 1.2  # at least one more watchdog period (WATCHDOG_USEC=1 s: a ping every 0.5 s)
kill -TERM "$daemon"
rc=0
wait "$outer" || rc=$?
[ "$rc" -eq 0 ] || fail "tabbard exited with $rc"
echo "ok: SIGTERM: exit $rc"

grep -q "tab.selected" "$work/monitor" || fail "the subscriber saw no tab.selected"
grep -q "server.stopping" "$work/monitor" || fail "the subscriber saw no server.stopping"
for m in "READY=1" "WATCHDOG=1" "RELOADING=1" "STOPPING=1"; do
    grep -q "$m" "$work/notify.log" || fail "no $m on the notify socket"
done
[ "$(grep -c 'READY=1' "$work/notify.log")" -ge 2 ] || fail "no READY=1 after the reload"
echo "ok: notify: $(cut -d' ' -f1 "$work/notify.log" | sort | uniq -c | tr -s ' \n' ' ')"
state_file="$work/state/state.json"
if [ -f "$state_file" ] && [ "$(stat -c '%u %a' "$state_file")" = "$sandbox_uid 600" ]; then
    echo "ok: state saved in the state directory ($(stat -c '%U:%G %a' "$state_file"))"
else
    fail "no state.json (owned by $sandbox_uid, mode 0600) in the state directory"; ls -la "$work/state"
fi
echo "info: audio: $(grep -E -m1 'No sound card|audio device open' "$work/stderr" | sed 's/^<[0-9]>//')"
if grep -E -i "not permitted|permission denied|denied|read-only file system" "$work/stderr" | grep -v "^sandbox: note" ; then
    fail "the daemon logged a refusal (above)"
fi

if [ -f "$work/trace" ]; then
    # System calls of the daemon (from its exec on) that failed with an error the sandbox
    # produces. Expected: clone3 → ENOSYS (RestrictNamespaces=; glibc falls back to clone),
    # and SO_SNDBUFFORCE → EPERM (sd_notify tries it; it needs CAP_NET_ADMIN, SO_SNDBUF is used).
    restrict_rt="$(sed -n 's/^RestrictRealtime=//p' "$unit" | tail -n 1)"
    refused="$(awk -v rt="$restrict_rt" '
        /execve\(".*\/prefix\/bin\/tabbard"/ { on = 1 }
        !on { next }
        # strace -f splits a call that another thread interrupts: join the two halves.
        / <unfinished \.\.\.>$/ { pending[$1] = $0; next }
        { line = $0 }
        /<\.\.\. [a-z0-9_]+ resumed>/ { line = pending[$1] " " $0; delete pending[$1] }
        line ~ /SO_SNDBUFFORCE/ { next }
        # RestrictRealtime=yes: a realtime policy is refused on purpose (PipeWire'"'"'s ALSA plugin asks for one).
        rt == "yes" && line ~ /sched_setscheduler\([0-9]+, SCHED_(FIFO|RR|DEADLINE)[^)]*\) = -1 EPERM/ { realtime++; next }
        END { if (realtime) print "realtime-refused " realtime > "/dev/stderr" }
        line ~ / = -1 (EPERM|EACCES|EAFNOSUPPORT|ENOSYS|EROFS) / {
            name = line; sub(/^[0-9]+ +/, "", name); sub(/^<\.\.\. /, "", name); sub(/[( ].*/, "", name)
            err = line; sub(/.* = -1 /, "", err); sub(/ .*/, "", err)
            print name " " err
        }' "$work/trace" 2>"$work/realtime" | sort | uniq -c | grep -v -E ' clone3 ENOSYS$' || true)"
    if [ -s "$work/realtime" ]; then
        echo "info: $(cut -d' ' -f2 "$work/realtime") realtime sched_setscheduler call(s) refused by RestrictRealtime=yes, as intended (PipeWire's ALSA plugin asks for SCHED_FIFO; its thread runs at normal priority)"
    fi
    used="$(awk '/execve\(".*\/prefix\/bin\/tabbard"/ { on = 1 } on { n = $2; sub(/\(.*/, "", n); if (n ~ /^[a-z0-9_]+$/) print n }' "$work/trace" | sort -u | tr '\n' ' ')"
    echo "info: system calls the daemon made: $used"
    if [ -n "$refused" ]; then
        fail "system calls refused inside the sandbox:"
        printf '%s\n' "$refused" | sed 's/^/    /'
    else
        echo "ok: no system call refused by the sandbox (strace; the expected clone3 ENOSYS and SO_SNDBUFFORCE EPERM aside)"
    fi
else
    echo "info: strace is not installed; refused system calls were not traced"
fi

if [ "$status" -ne 0 ]; then
    echo "--- daemon stderr"; sed 's/^/    /' "$work/stderr"
    echo "FAILED"
else
    grep '^sandbox:' "$work/stderr" || true
    echo "PASS (tabbard works inside the system unit's sandbox)"
fi
exit "$status"
