#!/usr/bin/env bash
# Holes put into sounds by pipewire-pulse, counted where they happen: N sound.play of SOUND (one every
# 250-500 ms) from BINARY through PulseAudio's ALSA plugin (rig_pulse) into a private rig whose
# pipewire-pulse logs each cycle it played with less than a quantum held ("underrun read:BYTES ...",
# PIPEWIRE_DEBUG=W,mod.protocol-pulse:D). An underrun after the stream read some but not all of the
# sound (0 < read < the sound's bytes at 4 bytes a frame) is a cycle of silence inside the sound: a
# hole. Prints how many of the server's streams (one per sound: each standby makes a new one) had one,
# and where (frames). docs/AUDIO.md, "PulseAudio's ALSA plugin".
# usage: bench/sink/pulseholes.sh BINARY N SOUND   (load the machine yourself to see late refills)
set -u
bin=$1; n=$2; snd=$3
here=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d /tmp/ph.XXXX)
export PIPEWIRE_DEBUG="W,mod.protocol-pulse:D"
eval "$(bash $here/tests/pipewire/rig.sh start $d/rig 2>/dev/null | grep '^export')"
unset PIPEWIRE_DEBUG
$bin --no-config --socket $d/s --state $d/st.json --sounds $here/Sounds --audio alsa --alsa-device rig_pulse > $d/log 2>&1 & p=$!
for _ in $(seq 100); do [ -S $d/s ] && break; sleep 0.05; done
sleep 1
python3 - "$d/s" "$n" "$snd" <<'PY'
import socket, sys, time, json, random
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
for i in range(int(sys.argv[2])):
    f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "sound.play", "params": {"name": sys.argv[3]}}) + "\n"); f.flush()
    f.readline()
    time.sleep(0.25 + random.random() * 0.25)
PY
sleep 1
kill $p; wait $p
lg=$d/rig/log/pipewire-pulse.log
python3 - "$lg" "$snd" "$here" <<'PY'
import re, sys, wave
frames = wave.open("%s/Sounds/%s.wav" % (sys.argv[3], sys.argv[2])).getnframes()
holes, streams = {}, set()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"(0x[0-9a-f]+): \[ALSA plug-in.*underrun read:(\d+) avail:(\d+)", line)
    if m:
        streams.add(m.group(1))
        if 0 < int(m.group(2)) < frames * 4:
            holes.setdefault(m.group(1), []).append(int(m.group(2)) // 4)
print("streams with underruns: %d; streams with a hole inside the sound: %d %s" % (len(streams), len(holes), list(holes.values())[:5]))
PY
bash $here/tests/pipewire/rig.sh stop $d/rig
rm -rf $d
