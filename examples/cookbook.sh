#!/usr/bin/env bash
# Replays the scenarios of docs/COOKBOOK.md against a fresh daemon per example and
# prints each command, its output, and the events `tabbarctl monitor` saw.
# Usage: examples/cookbook.sh [BIN_DIR]   (default: .build/release, the build `make run` makes)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release}
[ -x "$BIN/tabbard" ] || { echo "cookbook.sh: no $BIN/tabbard; run \`make release\` (or \`make run\`) first, or pass a BIN_DIR" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

scenario() {  # NAME FILE then one command per line on stdin
  local name=$1 file=$2 sock="$WORK/$1.sock"
  "$BIN/tabbard" --socket "$sock" --state "$WORK/$1.state" --audio null --sounds Sounds 2>/dev/null &
  local daemon=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.02; done
  "$BIN/tabbarctl" --socket "$sock" configure "$file" >/dev/null
  "$BIN/tabbarctl" --socket "$sock" monitor > "$WORK/$1.events" &
  local monitor=$!
  sleep 0.2
  echo "### $name"
  echo '```console'
  while IFS= read -r cmd; do
    if [[ $cmd == wait* ]]; then
      sleep "${cmd#wait }"; echo "# … ${cmd#wait } s later"; continue
    fi
    echo "\$ tabbarctl $cmd"
    eval "\"$BIN/tabbarctl\" --socket \"$sock\" $cmd" || true
  done
  echo '```'
  sleep 0.7   # let animations and visibility phases end
  kill "$monitor"; wait "$monitor" 2>/dev/null || true
  kill "$daemon"; wait "$daemon" 2>/dev/null || true
  echo 'Events (`tabbarctl monitor`):'
  echo '```'
  tail -n +2 "$WORK/$1.events"
  echo '```'
  echo
}

scenario center-plus examples/center-plus.json <<'CMDS'
touch down 187.5 0 --id 1
touch up 187.5 0 --id 1
action post --finish
touch down 370 30 --id 2
touch up 370 30 --id 2
touch down 221.5 -20 --id 3
CMDS

scenario morphing-first-tab examples/morphing-first-tab.json <<'CMDS'
state
touch down 40 20 --id 1
touch up 40 20 --id 1
select discover
touch down 40 20 --id 2
touch up 40 20 --id 2
CMDS

scenario animated-with-sound examples/animated-with-sound.json <<'CMDS'
touch down 120 20 --id 1
touch up 120 20 --id 1
badge likes 3
call animation.begin '{"kind":"confetti","tab":"likes","duration_ms":300}'
CMDS

scenario hide-on-push examples/hide-on-push.json <<'CMDS'
push --hides-bar
show
wait 0.4
pop
wait 0.4
scroll 30
scroll 20
wait 0.4
select map
CMDS

scenario two-tabs-three-actions examples/two-tabs-three-actions.json <<'CMDS'
touch down 150 20 --id 1
touch up 150 20 --id 1
badge video 2
touch down 340 20 --id 2
touch up 10 20 --id 2
CMDS

scenario custom-five-buttons examples/custom-five-buttons.json <<'CMDS'
touch down 100 30 --id 1
touch up 100 30 --id 1
touch down 216 -12 --id 2
badge four 12
badge one --text hello
CMDS

scenario crossfade examples/crossfade.json <<'CMDS'
select week
select week
CMDS
