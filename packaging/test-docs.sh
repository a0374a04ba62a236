#!/usr/bin/env bash
# Man pages and shell completions, against the real binaries.
#
#   packaging/test-docs.sh BINDIR MANDIR
#
# 1. Every man page renders without a warning (`man --warnings -l`), and says
#    what the binaries say: every command of `tabbarctl --help` is in
#    tabbarctl(1), every option of `tabbard --help` in tabbard(8), every
#    config key the daemon accepts (docs/CONFIG.md's table) in tabbard.conf(5).
# 2. bash completion, for real: the script is sourced, COMP_WORDS/COMP_CWORD
#    set, _tabbarctl called, COMPREPLY checked — commands, options, topics,
#    and item ids and sound names from a running daemon.
# 3. fish completion, for real (`complete -C`); zsh: `zsh -n` (syntax only).
set -uo pipefail
export LC_ALL=C.UTF-8
bindir="$(cd "$1" && pwd)"; mandir="$(cd "$2" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

tmp="$(mktemp -d)"
daemon=""
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# 1. man pages
for page in "$mandir"/tabbard.8 "$mandir"/tabbarctl.1 "$mandir"/tabbard.conf.5 "$mandir"/tabbard-web.1; do
    warnings="$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)"
    if [ -n "$warnings" ]; then fail "man --warnings -l $(basename "$page"):"; printf '    %s\n' "$warnings"
    else ok "man --warnings -l $(basename "$page") renders clean"; fi
done
# The pages as text, once (grep -q on a pipe from man would end man with SIGPIPE).
for page in tabbard.8 tabbarctl.1 tabbard.conf.5; do
    MANWIDTH=200 man -l "$mandir/$page" 2>/dev/null | sed 's/‐//g' > "$tmp/$page.txt"
done
commands="$("$bindir/tabbarctl" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" {print $1}')"
[ -n "$commands" ] || fail "no commands in tabbarctl --help"
missing=""
for c in $commands; do grep -qE "^ +$c( |$)" "$tmp/tabbarctl.1.txt" || missing="$missing $c"; done
[ -z "$missing" ] && ok "tabbarctl(1) describes every command of tabbarctl --help" || fail "tabbarctl(1) lacks:$missing"
missing=""
for o in $("$bindir/tabbarctl" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do grep -q -- "$o" "$tmp/tabbarctl.1.txt" || missing="$missing $o"; done
[ -z "$missing" ] && ok "tabbarctl(1) has every option of tabbarctl --help" || fail "tabbarctl(1) lacks:$missing"
missing=""
for o in $("$bindir/tabbard" --help | grep -oE -- '(^| )--[a-z][a-z-]*' | sort -u); do grep -q -- "$o" "$tmp/tabbard.8.txt" || missing="$missing $o"; done
[ -z "$missing" ] && ok "tabbard(8) has every option of tabbard --help" || fail "tabbard(8) lacks:$missing"
missing=""
keys="$(sed -n '/^| key | default/,/^$/p' "$here/docs/CONFIG.md" | sed -n 's/^| \([^|]*\)|.*/\1/p' | grep -oE '`[a-z_]+`' | tr -d '`' | sort -u)"
[ -n "$keys" ] || fail "found no config keys in docs/CONFIG.md"
for k in $keys; do
    grep -qw -- "$k" "$tmp/tabbard.conf.5.txt" || missing="$missing $k"
done
[ -z "$missing" ] && ok "tabbard.conf(5) has every key of docs/CONFIG.md" || fail "tabbard.conf(5) lacks:$missing"

# A daemon with a bar of our own ids, for the completions that ask it.
sock="$tmp/socket"
cat > "$tmp/bar.json" <<'JSON'
{"bar": {"items": [{"id": "inbox"}, {"id": "outbox"}, {"id": "settings"}], "selected": "inbox"}}
JSON
"$bindir/tabbard" --audio null --socket "$sock" --state "$tmp/state.json" --config "$tmp/bar.json" \
    --sounds "$here/Sounds" --log-level warning &
daemon=$!
for _ in $(seq 300); do "$bindir/tabbarctl" --socket "$sock" --timeout 1000 ping >/dev/null 2>&1 && break; sleep 0.1; done
"$bindir/tabbarctl" --socket "$sock" ping >/dev/null || fail "the daemon for the completion tests did not answer"

# 2. bash: complete LINE (the last word may be empty) → COMPREPLY, one per line
bash_complete() {
    PATH="$bindir:$PATH" bash -c '
        source /usr/share/bash-completion/bash_completion 2>/dev/null
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _tabbarctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$here/completions/tabbarctl.bash" "$@"
}
expect_bash() { # DESCRIPTION "EXPECTED WORDS" WORDS...
    local what="$1" want="$2"; shift 2
    local got; got="$(bash_complete "$@" | sort | tr '\n' ' ' | sed 's/ $//')"
    if [ "$got" = "$want" ]; then ok "bash: $what → $got"; else fail "bash: $what: want [$want], got [$got]"; fi
}
all="$(printf '%s\n' $commands | sort | tr '\n' ' ' | sed 's/ $//')"
got="$(bash_complete tabbarctl "" | sort | tr '\n' ' ' | sed 's/ $//')"
missing=""; for c in $commands; do [[ " $got " == *" $c "* ]] || missing="$missing $c"; done
[ -z "$missing" ] && ok "bash: tabbarctl <TAB> offers every command ($all)" || fail "bash: tabbarctl <TAB> lacks:$missing (got $got)"
expect_bash "tabbarctl mon<TAB>" "monitor" tabbarctl mon
expect_bash "tabbarctl --js<TAB>" "--json" tabbarctl --js
expect_bash "select <TAB> (ids from the daemon)" "inbox outbox settings" tabbarctl --socket "$sock" select ""
expect_bash "badge o<TAB>" "outbox" tabbarctl --socket "$sock" badge o
expect_bash "badge inbox <TAB> (no second id)" "" tabbarctl --socket "$sock" badge inbox ""
expect_bash "play <TAB> (sounds from the daemon)" "$("$bindir/tabbarctl" --socket "$sock" --json sounds | grep -o '"name":"[^"]*"' | cut -d'"' -f4 | sort | tr '\n' ' ' | sed 's/ $//')" tabbarctl --socket "$sock" play ""
expect_bash "monitor --topics tab,ba<TAB>" "tab,badge tab,badge.changed tab,bar tab,bar.configured tab,bar.visibility" tabbarctl monitor --topics tab,ba
expect_bash "monitor --f<TAB>" "--follow" tabbarctl monitor --f
expect_bash "feedback --profile <TAB>" "full quiet silent" tabbarctl feedback --profile ""
expect_bash "touch <TAB>" "cancel down up" tabbarctl touch ""
t0=$(date +%s%N)
expect_bash "select <TAB> with no daemon (nothing, no error)" "" tabbarctl --socket "$tmp/none" select ""
echo "info: completing ids with no daemon took $(( ($(date +%s%N) - t0) / 1000000 )) ms"

# 3. fish (for real) and zsh (syntax)
if fish -n "$here/completions/tabbarctl.fish"; then ok "fish -n completions/tabbarctl.fish"; else fail "fish -n"; fi
if zsh -n "$here/completions/_tabbarctl"; then ok "zsh -n completions/_tabbarctl"; else fail "zsh -n"; fi
fish_complete() {
    PATH="$bindir:$PATH" fish --no-config -c "source '$here/completions/tabbarctl.fish'; complete -C '$1'" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'
}
got="$(fish_complete "tabbarctl --socket $sock select ")"
[ "$got" = "inbox outbox settings" ] && ok "fish: select <TAB> → $got" || fail "fish: select <TAB>: got [$got]"
got="$(fish_complete "tabbarctl res")"
[ "$got" = "reset" ] && ok "fish: tabbarctl res<TAB> → $got" || fail "fish: tabbarctl res<TAB>: got [$got]"

[ "$status" -eq 0 ] && echo "PASS (man pages, completions)" || echo "FAILED"
exit "$status"
