#!/usr/bin/env bash
# Synthesize tabbard's click effects with sox. No samples are used: every
# sound is built from sine sweeps and (seeded) pink noise, so the files are
# the project's own work under the project's licence.
#
# Output: 48 kHz, mono, 16-bit signed PCM WAV, written next to this script.
# Deterministic: -D (no dither) and -R (repeatable: fixed RNG seed), so two
# runs produce byte-identical files (see README.md for the sha256 sums).
#
# Usage: Sounds/make-sounds.sh        (needs sox 14.4)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v sox >/dev/null || { echo "make-sounds.sh: sox not found (apt-get install sox)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# -D: no dither, -R: repeatable (seeded noise), -V2: errors and warnings
# (a clipping warning is a bug in this script).
SOX=(sox -D -R -V2)
RATE=48000
OUT=(-r "$RATE" -c 1 -b 16 -e signed-integer)   # final files
TMP=(-r "$RATE" -c 1 -b 32 -e floating-point)   # intermediate parts

# tone NAME SYNTH-ARGS... : one full-scale component into $tmp/NAME.wav (float).
tone() { local name="$1"; shift; "${SOX[@]}" -n "${TMP[@]}" "$tmp/$name.wav" synth "$@"; }

# An exponential decay envelope over LEN seconds: synth's `exp` waveform with
# one cycle per LEN, peak at phase 0, falling by DB2*2 dB, applied with amod
# (-n: no automatic headroom, so the final `gain -n` sets the exact peak).
# Usage: $(decay LEN DB2)  -> the synth arguments
decay() { awk -v len="$1" -v db2="$2" 'BEGIN { printf "synth -n exp amod %.6f 0 0 0 %s\n", 1/len, db2 }'; }

# Components are mixed with `-m -v` at 0.5 or below (no clipping), then the
# envelope is applied and `gain -n DB` normalizes the peak to DB dBFS.
# Most tones start at phase 25 % (a cosine), so the very first sample is at
# full level: no leading silence (latency is measured to the first frame).

# click.wav — tab select: 12 ms, 2.6 kHz with a quieter 4.1 kHz partial,
# 40 dB exponential decay, 2 ms linear tail to zero, peak -6 dBFS.
tone k1 0.012 sine 2600 0 25
tone k2 0.012 sine 4100 0 25
"${SOX[@]}" -m -v 0.5 "$tmp/k1.wav" -v 0.25 "$tmp/k2.wav" "${OUT[@]}" "$tmp/click.wav" \
    $(decay 0.012 20) \
    fade t 0 0.012 0.002 \
    gain -n -6
mv "$tmp/click.wav" "$here/click.wav"

# reselect.wav — tapping the selected tab again: a softer double tick,
# 1.9 kHz then 1.7 kHz (quieter), 8 ms each, 22 ms apart; 40 ms; peak -12 dBFS.
tone r1 0.008 sine 1900 0 25 $(decay 0.008 16) fade t 0 0.008 0.0015 vol 0.5 pad 0 0.014
tone r2 0.008 sine 1700 0 25 $(decay 0.008 16) fade t 0 0.008 0.0015 vol 0.35 pad 0 0.010
"${SOX[@]}" "$tmp/r1.wav" "$tmp/r2.wav" "${OUT[@]}" "$tmp/reselect.wav" gain -n -12
mv "$tmp/reselect.wav" "$here/reselect.wav"

# center.wav — the raised center ("post") button: a rising two-tone pop,
# 620->700 Hz for 30 ms then 930->1050 Hz (a fifth up) for 50 ms, each with
# a quieter octave; 80 ms; peak -6 dBFS.
tone c1a 0.030 sine 620:700 0 25
tone c1b 0.030 sine 1240:1400 0 25
tone c2a 0.050 sine 930:1050
tone c2b 0.050 sine 1860:2100
"${SOX[@]}" -m -v 0.5 "$tmp/c1a.wav" -v 0.2 "$tmp/c1b.wav" "${TMP[@]}" "$tmp/c1.wav" \
    $(decay 0.030 4) fade t 0 0.030 0.003
"${SOX[@]}" -m -v 0.5 "$tmp/c2a.wav" -v 0.2 "$tmp/c2b.wav" "${TMP[@]}" "$tmp/c2.wav" \
    $(decay 0.050 14) fade t 0.002 0.050 0.008
"${SOX[@]}" "$tmp/c1.wav" "$tmp/c2.wav" "${OUT[@]}" "$tmp/center.wav" gain -n -6
mv "$tmp/center.wav" "$here/center.wav"

# action.wav — operation buttons (record, photo): a low "thock", a
# falling sweep 260->140 Hz with a quieter second harmonic, 30 dB decay;
# 40 ms; peak -6 dBFS.
tone a1 0.040 sine 260+140 0 25
tone a2 0.040 sine 520+280 0 25
"${SOX[@]}" -m -v 0.5 "$tmp/a1.wav" -v 0.2 "$tmp/a2.wav" "${OUT[@]}" "$tmp/action.wav" \
    $(decay 0.040 15) \
    fade t 0 0.040 0.004 \
    gain -n -6
mv "$tmp/action.wav" "$here/action.wav"

# badge.wav — a badge appeared or changed: a gentle high ping, 1760 Hz with
# a quieter octave, 2 ms soft attack, 30 dB decay; 80 ms; peak -10 dBFS.
tone b1 0.080 sine 1760
tone b2 0.080 sine 3520
"${SOX[@]}" -m -v 0.5 "$tmp/b1.wav" -v 0.15 "$tmp/b2.wav" "${OUT[@]}" "$tmp/badge.wav" \
    $(decay 0.080 15) \
    fade h 0.002 0.080 0.012 \
    gain -n -10
mv "$tmp/badge.wav" "$here/badge.wav"

# slide.wav — the bar slides in or out: a soft swoosh, seeded pink noise
# band-limited to ~400 Hz-3 kHz, half-sine swell (60 ms up, 90 ms down);
# 150 ms; peak -14 dBFS. (This one fades in from silence on purpose.)
tone s1 0.150 pinknoise vol 0.5
"${SOX[@]}" "$tmp/s1.wav" "${OUT[@]}" "$tmp/slide.wav" \
    highpass 400 lowpass 3000 lowpass 3000 \
    fade h 0.060 0.150 0.090 \
    gain -n -14
mv "$tmp/slide.wav" "$here/slide.wav"

for f in click reselect center action badge slide; do
    printf '%-13s %s\n' "$f.wav" "$(soxi -r "$here/$f.wav") Hz, $(soxi -c "$here/$f.wav") ch, $(soxi -b "$here/$f.wav") bit, $(soxi -D "$here/$f.wav") s"
done
