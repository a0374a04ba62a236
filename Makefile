# tabbard — the two commands a newcomer needs are `make run` and `make test`.
# Both install what is missing (Debian packages, via apt) before they build.

PREFIX  ?= /usr/local
DESTDIR ?=
SWIFT   ?= swift
ARGS    ?=
BINDIR   = $(DESTDIR)$(PREFIX)/bin
SHAREDIR = $(DESTDIR)$(PREFIX)/share/tabbard
DOCDIR   = $(DESTDIR)$(PREFIX)/share/doc/tabbard
# systemd, sysusers.d and tmpfiles.d all search PREFIX/lib/… for /usr/local as for /usr.
UNITDIR  = $(DESTDIR)$(PREFIX)/lib/systemd
SYSUSERSDIR = $(DESTDIR)$(PREFIX)/lib/sysusers.d
TMPFILESDIR = $(DESTDIR)$(PREFIX)/lib/tmpfiles.d

# Debian packages the build, the tests and the benchmarks use.
APT_PACKAGES = pkg-config libasound2-dev libsndfile1-dev libsystemd-dev libsamplerate0 alsa-utils sox socat systemd sound-theme-freedesktop python3 procps strace
# Only `make bench` needs these: the feedbackd reference (and the private session bus it runs on).
BENCH_APT_PACKAGES = feedbackd dbus-daemon libcanberra-dev libcanberra-pulse
# The real sound path (tests/pipewire, the bench's click at the sink): a private headless PipeWire,
# PipeWire's and PulseAudio's ALSA plugins, the pulse clients, the probe's headers.
PIPEWIRE_APT_PACKAGES = pipewire pipewire-bin pipewire-alsa wireplumber pipewire-pulse dbus-daemon pulseaudio-utils \
  libpipewire-0.3-dev libasound2-plugins alsa-utils

# $(call apt_install,PACKAGES): install those of PACKAGES that are missing (apt-get; sudo when not root)
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

.PHONY: all deps bench-deps build release run test test-swift test-contract test-units test-sandbox test-pipewire test-pipewire-engine pipewire-deps install uninstall bench fuzz fuzz-build fuzz-smoke fuzz-merge clean

all: build

## deps: install missing Debian packages (apt-get; uses sudo when not root)
deps:
	$(call apt_install,$(APT_PACKAGES))
	@command -v $(SWIFT) >/dev/null || { echo "swift is not on PATH: install Swift 6 (https://swift.org/install) first"; exit 1; }

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## run: the daemon in the foreground on the default user socket and the built-in bar
run: release
	.build/release/tabbard --audio auto --sounds Sounds $(ARGS)

## test: every test — Swift unit and end-to-end tests, the contract client, the systemd units, a short fuzz run
test: deps test-swift test-contract test-units test-sandbox test-pipewire fuzz-smoke test-pipewire-engine

test-swift:
	$(SWIFT) build --build-tests
	TABBARD_BIN_DIR="$$($(SWIFT) build --show-bin-path)" TABBARD_SOUNDS_DIR="$(CURDIR)/Sounds" $(SWIFT) test --skip-build

test-contract:
	$(SWIFT) build --product tabbard
	python3 tests/contract/test_contract.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds"

test-units:
	bash systemd/check-units.sh

## test-sandbox: the real daemon inside the system unit's sandbox (needs root; says SKIP otherwise), with the
## machine's ALSA configuration and with a plain one (as without pipewire-alsa)
test-sandbox:
	$(SWIFT) build --product tabbard
	$(SWIFT) build --product tabbarctl
	bash systemd/check-sandbox.sh "$$($(SWIFT) build --show-bin-path)/tabbard" "$$($(SWIFT) build --show-bin-path)/tabbarctl"
	SANDBOX_ALSA=plain bash systemd/check-sandbox.sh "$$($(SWIFT) build --show-bin-path)/tabbard" "$$($(SWIFT) build --show-bin-path)/tabbarctl"

## pipewire-deps: what the real sound path needs (PipeWire, WirePlumber, pipewire-pulse, the ALSA plugins)
pipewire-deps: deps
	$(call apt_install,$(PIPEWIRE_APT_PACKAGES))

## test-pipewire: the real daemon through ALSA → PipeWire's ALSA plugin → a private headless PipeWire
## (tests/pipewire/rig.sh, WirePlumber, a null sink): clicks bit-exact at the sink's monitor at quantum 256.
## test-pipewire-engine: what needs issue 12's engine work (audio helper) — clicks bit-exact at min-quantum
## 1024, no accepted click lost without sound.failed across a server restart, `auto` switching over.
PW_TEST = python3 tests/pipewire/test_pipewire.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" \
  --sounds "$(CURDIR)/Sounds" --rig "$(CURDIR)/tests/pipewire/rig.sh" --monitor "$(CURDIR)/.build/bench/pwmonitor"
test-pipewire: pipewire-deps .build/bench/pwmonitor
	$(SWIFT) build --product tabbard
	$(PW_TEST) Quantum256

test-pipewire-engine: pipewire-deps .build/bench/pwmonitor
	$(SWIFT) build --product tabbard
	$(PW_TEST) MinQuantum1024 ServerRestart AutoBeforeServer

install: release
	install -d $(BINDIR) $(SHAREDIR)/sounds $(DOCDIR)
	install -m 0755 .build/release/tabbard .build/release/tabbarctl $(BINDIR)/
	install -m 0644 Sounds/*.wav $(SHAREDIR)/sounds/
	install -m 0644 docs/*.md README.md $(DOCDIR)/
	systemd/render.sh $(PREFIX) .build/systemd
	install -d $(UNITDIR)/user $(UNITDIR)/system $(SYSUSERSDIR) $(TMPFILESDIR)
	install -m 0644 .build/systemd/user/tabbard.service .build/systemd/user/tabbard.socket $(UNITDIR)/user/
	install -m 0644 .build/systemd/system/tabbard.service .build/systemd/system/tabbard.socket $(UNITDIR)/system/
	install -m 0644 .build/systemd/sysusers.d/tabbard.conf $(SYSUSERSDIR)/
	install -m 0644 .build/systemd/tmpfiles.d/tabbard.conf $(TMPFILESDIR)/

uninstall:
	rm -f $(BINDIR)/tabbard $(BINDIR)/tabbarctl
	rm -rf $(SHAREDIR) $(DOCDIR)
	rm -f $(UNITDIR)/user/tabbard.socket $(UNITDIR)/user/tabbard.service \
	  $(UNITDIR)/system/tabbard.socket $(UNITDIR)/system/tabbard.service \
	  $(SYSUSERSDIR)/tabbard.conf $(TMPFILESDIR)/tabbard.conf

## bench: the benchmark suite against a release daemon (figures, not pass/fail);
## ARGS=--quick for a short run, ARGS=--json for JSON on stdout. Writes .bench/results.json.
BENCH_CC = cc -O2 -Wall -Wextra
bench: release bench-deps .build/bench/floor .build/bench/libclickshim.so .build/bench/fbdclient .build/bench/pwmonitor .build/bench/caclick
	@mkdir -p .bench
	python3 bench/sink/sinkbench.py --daemon .build/release/tabbard --sounds Sounds --rig tests/pipewire/rig.sh \
	  --monitor .build/bench/pwmonitor --caclick .build/bench/caclick $(filter --quick,$(ARGS)) --out .bench/sink.json
	.build/release/tabbard-bench --daemon .build/release/tabbard --sounds Sounds \
	  --floor .build/bench/floor --shim .build/bench/libclickshim.so --fbdclient .build/bench/fbdclient \
	  --sink-json .bench/sink.json $(ARGS)

## bench-deps: what only the benchmark needs (the feedbackd reference); not part of `make test`
bench-deps: deps pipewire-deps
	$(call apt_install,$(BENCH_APT_PACKAGES))

.build/bench/floor: bench/floor/floor.c
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $<

# The at-the-sink probe: a capture stream on the null sink's monitor (bench/pwmonitor/pwmonitor.c).
.build/bench/pwmonitor: bench/pwmonitor/pwmonitor.c | pipewire-deps
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $< $$(pkg-config --cflags --libs libpipewire-0.3)

# libcanberra as an application uses it (one context, cached sample), for the click at the sink.
.build/bench/caclick: bench/canberra/caclick.c | bench-deps
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $< $$(pkg-config --cflags --libs libcanberra)

.build/bench/libclickshim.so: bench/preload/clickshim.c
	@mkdir -p $(@D)
	$(BENCH_CC) -shared -fPIC -o $@ $< -ldl

.build/bench/fbdclient: bench/fbdclient/fbdclient.c | bench-deps
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $< -lsystemd

## fuzz: the protocol fuzzer (libFuzzer + ASan, docs/ROBUSTNESS.md) for FUZZ_SECONDS or FUZZ_RUNS inputs
## (0 / -1: no limit). Seeds: Fuzz/corpus; what it learns goes to .build/fuzz-corpus; crashes to fuzz-artifacts/.
comma := ,
FUZZ_SANITIZE ?= fuzzer,address
FUZZ_SECONDS  ?= 600
FUZZ_RUNS     ?= -1
FUZZ_ARGS     ?=
FUZZ_SCRATCH   = .build/fuzz-$(subst $(comma),-,$(FUZZ_SANITIZE))
FUZZ_BIN       = $(FUZZ_SCRATCH)/release/FuzzProtocol
FUZZ_OPTS      = -max_len=2048 -dict=Fuzz/protocol.dict -artifact_prefix=fuzz-artifacts/ -print_final_stats=1
# SWIFT_BACKTRACE=enable=no: else a crash is caught by Swift's backtracer and libFuzzer saves no artifact.
FUZZ_ENV       = SWIFT_BACKTRACE=enable=no

fuzz: fuzz-build
	mkdir -p fuzz-artifacts .build/fuzz-corpus
	$(FUZZ_ENV) $(FUZZ_BIN) $(FUZZ_OPTS) -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) $(FUZZ_ARGS) .build/fuzz-corpus Fuzz/corpus

# SwiftPM passes each --sanitize value as its own -sanitize= flag, in no fixed order, and swiftc
# keeps only the last one: without the combined -Xswiftc flag a build is at random left
# without coverage instrumentation ("no interesting inputs were found").
fuzz-build:
	$(SWIFT) build -c release --product FuzzProtocol $(foreach s,$(subst $(comma), ,$(FUZZ_SANITIZE)),--sanitize=$(s)) \
	  -Xswiftc -sanitize=$(FUZZ_SANITIZE) --scratch-path $(FUZZ_SCRATCH)

## fuzz-smoke: the short bounded fuzz run of `make test` (FUZZ_SMOKE_SECONDS, default 20), from the seeds only
FUZZ_SMOKE_SECONDS ?= 20
fuzz-smoke: fuzz-build
	rm -rf .build/fuzz-smoke && mkdir -p .build/fuzz-smoke fuzz-artifacts
	$(FUZZ_ENV) $(FUZZ_BIN) $(FUZZ_OPTS) -max_total_time=$(FUZZ_SMOKE_SECONDS) .build/fuzz-smoke Fuzz/corpus

## fuzz-merge: adds to Fuzz/corpus a small set of inputs of .build/fuzz-corpus that reach new edges
fuzz-merge: fuzz-build
	$(FUZZ_ENV) $(FUZZ_BIN) -set_cover_merge=1 -use_counters=0 -max_len=2048 Fuzz/corpus .build/fuzz-corpus

clean:
	$(SWIFT) package clean
