#!/usr/bin/env bash
# rig.sh — a private headless PipeWire (what a Debian desktop runs) for tests and benchmarks.
#
#   rig.sh env   DIR [options]   create DIR's layout and print the environment to export (starts nothing)
#   rig.sh start DIR [options]   start dbus-daemon, pipewire, wireplumber, pipewire-pulse; wait for the sink
#                                to exist and be the default; print the environment to export
#   rig.sh stop  DIR             stop exactly the processes `start` recorded in DIR/pids
#   rig.sh wait  DIR [--timeout S] wait until the sink is the default sink again (after a restart)
#
# Options (start/env):
#   --quantum N          default.clock.quantum (frames)
#   --min-quantum N      default.clock.min-quantum (1024 is what PipeWire sets on a VM it detects)
#   --max-quantum N      default.clock.max-quantum
#   --force-quantum N    the settings metadata's clock.force-quantum: the graph runs at exactly N
#   --no-wireplumber     no session manager (streams open but are linked to nothing)
#   --no-pulse           no pipewire-pulse
#   --file-sink          the sink is an ALSA device, not a null sink: an api.alsa.pcm.sink node on the pcm
#                        rig_file_sink (type file, slave null, S16_LE stereo 48 kHz), which appends every frame
#                        PipeWire hands the device to DIR/sink.raw — a probe outside PipeWire's scheduling
#   --timeout SECONDS    how long `start` waits for the sink (default 30)
#
# RIG_SERVER_DEBUG in rig.sh's environment becomes the pipewire server's PIPEWIRE_DEBUG (e.g. pw.node:4 logs the
# cycles the driver completed without a follower, "graph not finished", at most one each 2 s).
#
# Everything lives under DIR (give each run its own, e.g. `mktemp -d`): XDG_RUNTIME_DIR=DIR/run (0700),
# XDG_CONFIG_HOME=DIR/config and XDG_STATE_HOME=DIR/state for the servers, a private session bus at
# DIR/run/bus, logs in DIR/log/, and DIR/asound.conf, which defines ALSA pcms that reach this server
# without relying on /etc/alsa/conf.d:
#   pcm.rig        type pipewire (PipeWire's ALSA plugin, package pipewire-alsa)
#   pcm.rig_pulse  type pulse    (PulseAudio's ALSA plugin, libasound2-plugins, via pipewire-pulse)
# The printed environment sets ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:DIR/asound.conf, so a client
# opens them as `rig` / `rig_pulse` (tabbard: --alsa-device rig). The sink is RIG_SINK (a 48 kHz stereo
# support.null-audio-sink, driven by a CLOCK_MONOTONIC timer); its monitor is what a probe captures.
# Several rigs (several users, several tests) run side by side: nothing is shared but the binaries.
set -u

RIG_SINK=tabbard_rig_sink
die() { echo "rig.sh: $*" >&2; exit 2; }

[ $# -ge 2 ] || die "usage: rig.sh start|stop|env|wait DIR [options]"
cmd=$1; dir=$2; shift 2
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac

quantum=""; min_quantum=""; max_quantum=""; force_quantum=""; wireplumber=1; pulse=1; timeout=30; file_sink=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quantum) quantum=$2; shift 2 ;;
        --min-quantum) min_quantum=$2; shift 2 ;;
        --max-quantum) max_quantum=$2; shift 2 ;;
        --force-quantum) force_quantum=$2; shift 2 ;;
        --no-wireplumber) wireplumber=0; shift ;;
        --no-pulse) pulse=0; shift ;;
        --file-sink) file_sink=1; shift ;;
        --timeout) timeout=$2; shift 2 ;;
        *) die "unknown option $1" ;;
    esac
done

run="$dir/run"; conf="$dir/config"; logs="$dir/log"; pids="$dir/pids"

print_env() {
    cat <<EOF
export XDG_RUNTIME_DIR='$run'
export PIPEWIRE_RUNTIME_DIR='$run'
export PULSE_RUNTIME_PATH='$run/pulse'
export PULSE_SERVER='unix:$run/pulse/native'
export DBUS_SESSION_BUS_ADDRESS='unix:path=$run/bus'
export ALSA_CONFIG_PATH='/usr/share/alsa/alsa.conf:$dir/asound.conf'
export RIG_DIR='$dir'
export RIG_SINK='$RIG_SINK'
EOF
}

layout() {
    mkdir -p "$dir" "$run" "$logs" "$dir/state" "$conf/pipewire/pipewire.conf.d" \
        "$conf/wireplumber/bluetooth.lua.d" "$conf/wireplumber/main.lua.d" || die "cannot create $dir"
    chmod 0700 "$run"
    # The sink; WirePlumber makes the highest priority.session sink the default.
    if [ "$file_sink" = 1 ]; then
        cat >"$conf/pipewire/pipewire.conf.d/50-rig-sink.conf" <<EOF
context.objects = [
    { factory = adapter
      args = {
          factory.name     = api.alsa.pcm.sink
          node.name        = $RIG_SINK
          node.description = "tabbard test rig file sink"
          media.class      = Audio/Sink
          api.alsa.path    = rig_file_sink
          audio.format     = S16LE
          audio.rate       = 48000
          audio.channels   = 2
          audio.position   = [ FL FR ]
          object.linger    = true
          priority.driver  = 2000
          priority.session = 2000
      }
    }
]
EOF
    else
        cat >"$conf/pipewire/pipewire.conf.d/50-rig-sink.conf" <<EOF
context.objects = [
    { factory = adapter
      args = {
          factory.name     = support.null-audio-sink
          node.name        = $RIG_SINK
          node.description = "tabbard test rig null sink"
          media.class      = Audio/Sink
          audio.position   = [ FL FR ]
          audio.rate       = 48000
          object.linger    = true
          priority.driver  = 2000
          priority.session = 2000
      }
    }
]
EOF
    fi
    {
        echo "context.properties = {"
        [ -n "$quantum" ] && echo "    default.clock.quantum = $quantum"
        [ -n "$min_quantum" ] && echo "    default.clock.min-quantum = $min_quantum"
        [ -n "$max_quantum" ] && echo "    default.clock.max-quantum = $max_quantum"
        echo "}"
    } >"$conf/pipewire/pipewire.conf.d/60-rig-clock.conf"
    # No system bus here: no BlueZ.
    echo 'bluez_monitor.enabled = false' >"$conf/wireplumber/bluetooth.lua.d/90-rig.lua"
    # No cards, no cameras: nothing for these monitors to find.
    printf 'alsa_monitor.enabled = false\nv4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n' \
        >"$conf/wireplumber/main.lua.d/90-rig.lua"
    cat >"$dir/asound.conf" <<EOF
# Written by rig/rig.sh: pcms that reach the rig's PipeWire (XDG_RUNTIME_DIR=$run).
pcm.rig {
    type pipewire
    playback_node "-1"
    capture_node "-1"
}
ctl.rig { type pipewire }
pcm.rig_pulse {
    type pulse
    server "unix:$run/pulse/native"
}
EOF
    # The file sink's device (--file-sink): what PipeWire writes to it is appended to sink.raw, raw S16_LE stereo.
    # truncate false: the server closes and reopens the device (suspend), and the file keeps what came before.
    cat >>"$dir/asound.conf" <<EOF
pcm.rig_file_sink {
    type file
    slave.pcm "null"
    file "$dir/sink.raw"
    format "raw"
    truncate false
}
EOF
    cat >"$dir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$run/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
}

# The servers' environment (an array, so that `spawn` can background `env` itself and record its PID).
server_vars=(XDG_RUNTIME_DIR="$run" PIPEWIRE_RUNTIME_DIR="$run" XDG_CONFIG_HOME="$conf" XDG_STATE_HOME="$dir/state"
    DBUS_SESSION_BUS_ADDRESS="unix:path=$run/bus" PULSE_RUNTIME_PATH="$run/pulse" DISPLAY= WAYLAND_DISPLAY=)
server_env() { env "${server_vars[@]}" "$@"; }

# spawn NAME COMMAND…: start in the background, detached from our stdio; record "PID STARTTIME NAME".
spawn() {
    local name=$1; shift
    local extra=() limit=""
    if [ "$name" = pipewire ]; then
        [ -n "${RIG_SERVER_DEBUG:-}" ] && extra=(PIPEWIRE_DEBUG="$RIG_SERVER_DEBUG")
        # The file sink: the server opens rig_file_sink from DIR/asound.conf and writes its output, each file at
        # most 64 MiB (~5.8 min of a running graph; the server gets SIGXFSZ past it), so that a graph left running
        # cannot fill the disk.
        if [ "$file_sink" = 1 ]; then
            extra+=(ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$dir/asound.conf")
            limit=65536
        fi
    fi
    ( [ -z "$limit" ] || ulimit -f "$limit"; exec env "${server_vars[@]}" "${extra[@]}" "$@" ) </dev/null >>"$logs/$name.log" 2>&1 &
    local pid=$!
    local start; start=$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null) || start=0
    echo "$pid $start $name" >>"$pids"
}

# until_deadline SECONDS COMMAND…: poll COMMAND (every 50 ms) until it succeeds; fail at the deadline.
until_deadline() {
    local secs=$1; shift
    local end=$(( $(date +%s%N) + secs * 1000000000 ))
    while ! "$@" >/dev/null 2>&1; do
        [ "$(date +%s%N)" -lt "$end" ] || return 1
        sleep 0.05
    done
}

alive() { # alive NAME: the recorded process NAME still runs
    local pid start name
    while read -r pid start name; do
        [ "$name" = "$1" ] || continue
        [ "$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$start" ] && return 0
    done <"$pids"
    return 1
}

sink_exists() { server_env pw-cli ls Node 2>/dev/null | grep -q "node.name = \"$RIG_SINK\""; }
sink_default() { server_env pw-metadata 0 default.audio.sink 2>/dev/null | grep -q "\"name\":\"$RIG_SINK\""; }
pulse_ready() { server_env env PULSE_SERVER="unix:$run/pulse/native" pactl info 2>/dev/null | grep -q "Default Sink: $RIG_SINK"; }

ready() {
    for n in dbus pipewire ${wp_name:-} ${pulse_name:-}; do
        alive "$n" || { echo "rig.sh: $n exited; its log:" >&2; tail -n 20 "$logs/$n.log" >&2; return 2; }
    done
    sink_exists || return 1
    [ "$wireplumber" = 1 ] && { sink_default || return 1; }
    [ "$pulse" = 1 ] && [ "$wireplumber" = 1 ] && { pulse_ready || return 1; }
    return 0
}

wait_ready() {
    local end=$(( $(date +%s%N) + timeout * 1000000000 )) rc
    while :; do
        ready; rc=$?
        [ $rc = 0 ] && return 0
        [ $rc = 2 ] && return 1
        [ "$(date +%s%N)" -lt "$end" ] || { echo "rig.sh: the sink $RIG_SINK was not ready within ${timeout}s (logs: $logs)" >&2; return 1; }
        sleep 0.05
    done
}

stop_all() {
    [ -f "$pids" ] || return 0
    local pid start name mine=()
    # Newest first: pulse and wireplumber before pipewire, the bus last.
    while read -r pid start name; do
        [ "$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$start" ] && mine=("$pid" "${mine[@]}")
    done <"$pids"
    for pid in "${mine[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    local end=$(( $(date +%s%N) + 10000000000 ))
    for pid in "${mine[@]}"; do
        while kill -0 "$pid" 2>/dev/null && [ "$(date +%s%N)" -lt "$end" ]; do sleep 0.05; done
        kill -0 "$pid" 2>/dev/null && { echo "rig.sh: $pid ignored SIGTERM; SIGKILL" >&2; kill -KILL "$pid" 2>/dev/null; }
    done
    rm -f "$pids"
}

case "$cmd" in
    env)
        layout; print_env ;;
    start)
        for b in pipewire dbus-daemon pw-cli pw-metadata; do command -v $b >/dev/null || die "$b is not installed"; done
        [ -f "$pids" ] && stop_all
        layout
        rm -f "$run/bus" "$run/pipewire-0" "$run/pipewire-0.lock"
        spawn dbus dbus-daemon --nofork --nopidfile --config-file="$dir/bus.conf"
        until_deadline "$timeout" test -S "$run/bus" || { stop_all; die "the session bus did not come up (logs: $logs)"; }
        spawn pipewire pipewire
        until_deadline "$timeout" test -S "$run/pipewire-0" || { stop_all; die "pipewire did not come up (logs: $logs)"; }
        wp_name=""; pulse_name=""
        if [ "$wireplumber" = 1 ]; then
            command -v wireplumber >/dev/null || die "wireplumber is not installed"
            spawn wireplumber wireplumber; wp_name=wireplumber
        fi
        if [ "$pulse" = 1 ]; then
            command -v pipewire-pulse >/dev/null || die "pipewire-pulse is not installed"
            spawn pipewire-pulse pipewire-pulse; pulse_name=pipewire-pulse
        fi
        wait_ready || { stop_all; exit 1; }
        if [ -n "$force_quantum" ]; then
            server_env pw-metadata -n settings 0 clock.force-quantum "$force_quantum" >/dev/null
        fi
        print_env ;;
    wait)
        [ -f "$pids" ] || die "no rig runs in $dir"
        wait_ready ;;
    stop)
        stop_all ;;
    *) die "unknown command $cmd (start|stop|env|wait)" ;;
esac
