#!/bin/sh
# A front end's test in shell, on virtual time (docs/HARNESS.md): the hide-on-push bar
# slides away on a push in exactly its hide_duration_ms, and a tab select clicks at the
# frame the daemon names. No sleeps: time moves only by `tabbarctl advance`.
# Usage: front-end-test.sh TABBARD TABBARCTL SOUNDS_DIR EXAMPLES_DIR
set -u
TABBARD=$1 TABBARCTL=$2 SOUNDS=$3 EXAMPLES=$4
dir=$(mktemp -d)
passed=0 failed=0
ok()   { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else fail "$1"; fi; }

"$TABBARD" --socket "$dir/socket" --state "$dir/state.json" --audio null --clock manual \
  --capture "$dir/capture.wav" --sounds "$SOUNDS" 2>"$dir/tabbard.log" &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
ctl() { "$TABBARCTL" --socket "$dir/socket" "$@"; }
i=0; until ctl ping >/dev/null 2>&1; do
  i=$((i + 1)); [ $i -lt 500 ] || { echo "tabbard did not start: $(cat "$dir/tabbard.log")"; exit 1; }
  kill -0 "$pid" 2>/dev/null || { echo "tabbard exited: $(cat "$dir/tabbard.log")"; exit 1; }
  sleep 0.02   # waiting for the daemon to listen, not for time to pass
done

# 1. The hide-on-push bar, with a 500 ms slide.
ctl configure "$EXAMPLES/hide-on-push.json" >/dev/null
ctl call bar.configure '{"settings":{"hide_duration_ms":500}}' >/dev/null
# 2. Push a screen: the bar starts hiding; at 499 ms it still slides, at 500 ms it is hidden.
check "push starts the slide" "ctl wait bar.visibility --match phase=hiding,duration_ms=500 -- push --hides-bar >/dev/null"
check "still sliding after 499 ms" "! ctl wait bar.visibility --match phase=idle --timeout 300 -- advance 499 >/dev/null 2>&1"
check "the state says hiding at 499 ms" "ctl call state.get | grep -q '\"phase\":\"hiding\"'"
check "hidden after 1 ms more" "ctl wait bar.visibility --match phase=idle,hidden=true -- advance 1 >/dev/null"
# 3. Select a tab: the click starts at the frame sound.played names (500 ms × 48 + 32).
played=$(ctl --json wait sound.played --match name=click -- select map 2>&1 | tail -n 1)
frame=$(printf '%s' "$played" | sed -n 's/.*"frame":\([0-9]*\).*/\1/p')
check "click at frame 24032 (got: $played)" "[ \"$frame\" = 24032 ]"
ctl advance 100 >/dev/null
stop=$(ctl call capture.stop)
check "capture.stop names 600 ms of frames ($stop)" "printf '%s' '$stop' | grep -q '\"frames\":28832'"
# The capture is what the device would have played: the push's slide at frame 32
# (0 ms × 48 + 32), the click at its frame, each its file on both channels, silence between.
sox "$dir/capture.wav" -t raw "$dir/capture.raw"
# holds SOUND FRAME: the capture has Sounds/SOUND.wav (mono, duplicated per channel) at FRAME
holds() {
  sox "$SOUNDS/$1.wav" -t raw -e signed -b 16 -c 2 "$dir/$1.raw" remix 1 1
  n=$(wc -c < "$dir/$1.raw")
  dd if="$dir/capture.raw" of="$dir/at.raw" bs=4 skip="$2" count=$((n / 4)) 2>/dev/null
  cmp -s "$dir/$1.raw" "$dir/at.raw"
}
# silent FROM TO: frames FROM..<TO of the capture are all zero
silent() {
  dd if="$dir/capture.raw" of="$dir/gap.raw" bs=4 skip="$1" count=$(($2 - $1)) 2>/dev/null
  [ "$(wc -c < "$dir/gap.raw")" -eq $((($2 - $1) * 4)) ] && [ -z "$(tr -d '\000' < "$dir/gap.raw" | head -c 1)" ]
}
slide_end=$((32 + $(soxi -s "$SOUNDS/slide.wav")))
check "the slide at frame 32" "holds slide 32"
check "silence from the slide's end to the click" "silent 0 32 && silent $slide_end $frame"
check "the capture holds click.wav at frame $frame" "holds click $frame"
check "silence after the click" "silent $((frame + $(soxi -s "$SOUNDS/click.wav"))) 28832"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
