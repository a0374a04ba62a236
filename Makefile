# tabbard — the two commands a newcomer needs are `make run` and `make test`.
# Both install what is missing (Debian packages, via apt) before they build.

PREFIX  ?= /usr/local
DESTDIR ?=
SWIFT   ?= swift
ARGS    ?=
# Every build passes the same diagnostics flag: SwiftPM otherwise adds -color-diagnostics only
# when stdout is a terminal, and that changed flag recompiles everything (`make run` in a
# terminal, then `make install` from a script, then `make run` again: three full builds).
SWIFT_BUILD = $(SWIFT) build --no-color-diagnostics
# Release builds (run, install, deb, bench) carry the Swift runtime inside: they run where no
# toolchain is (no libswift*.so NEEDED, no RUNPATH into /opt/swift). docs/PERFORMANCE.md.
RELEASE_FLAGS = -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now -Xlinker -z -Xlinker relro
BINDIR   = $(DESTDIR)$(PREFIX)/bin
SHAREDIR = $(DESTDIR)$(PREFIX)/share/tabbard
DOCDIR   = $(DESTDIR)$(PREFIX)/share/doc/tabbard
MANDIR   = $(DESTDIR)$(PREFIX)/share/man
BASHCOMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# systemd, sysusers.d and tmpfiles.d all search PREFIX/lib/… for /usr/local as for /usr.
# (The .deb puts the system units in /lib/systemd/system, Debian 12's place: SYSTEMUNITDIR.)
UNITDIR  = $(DESTDIR)$(PREFIX)/lib/systemd
SYSTEMUNITDIR = $(UNITDIR)/system
SYSUSERSDIR = $(DESTDIR)$(PREFIX)/lib/sysusers.d
TMPFILESDIR = $(DESTDIR)$(PREFIX)/lib/tmpfiles.d

# Debian packages the build, the tests and the benchmarks use.
APT_PACKAGES = pkg-config libasound2-dev libsndfile1-dev libsystemd-dev libsoxr-dev libglib2.0-dev gsettings-desktop-schemas alsa-utils sox socat systemd sound-theme-freedesktop python3 procps strace
# What the man pages, completions and the .deb need (make man, make deb, make test-package).
PACKAGING_APT_PACKAGES = scdoc man-db groff-base dpkg-dev file lintian bash-completion zsh fish
# Only `make bench` needs these: the feedbackd reference (and the private session bus it runs on).
BENCH_APT_PACKAGES = feedbackd dbus-daemon libcanberra-dev libcanberra-pulse valgrind
# The real sound path (tests/pipewire, tests/rtkit, the bench's click at the sink; rig/ holds what they share): a
# private headless PipeWire, PipeWire's and PulseAudio's ALSA plugins, the pulse clients, the probe's headers.
# RTKit as a desktop user meets it (tests/rtkit): Debian's rtkit-daemon, polkitd, a private system bus.
RTKIT_APT_PACKAGES = rtkit polkitd dbus-daemon dbus-bin util-linux
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

.PHONY: all deps test-examples packaging-deps bench-deps build release run test test-swift test-contract test-units test-sandbox test-package man deb test-pipewire pipewire-deps test-desktop desktop-deps test-rtkit rtkit-deps install uninstall bench fuzz fuzz-build fuzz-smoke fuzz-merge fuzz-socket fuzz-socket-smoke clean test-harness web web-deps web-test-deps test-web bench-web python-deps test-python gtk-deps test-gtk bench-python openrpc-deps openrpc test-openrpc

all: build

## deps: install missing Debian packages (apt-get; uses sudo when not root)
deps:
	$(call apt_install,$(APT_PACKAGES))
	@command -v $(SWIFT) >/dev/null || { echo "swift is not on PATH: install Swift 6 (https://swift.org/install) first"; exit 1; }

## packaging-deps: scdoc, man-db, dpkg-dev, lintian, the shells (man pages, completions, .deb)
packaging-deps:
	$(call apt_install,$(PACKAGING_APT_PACKAGES))

build: deps
	$(SWIFT_BUILD)

release: deps
	$(SWIFT_BUILD) $(RELEASE_FLAGS)

## run: the daemon in the foreground on the default user socket and the built-in bar
run: release
	.build/release/tabbard --audio auto --sounds Sounds $(ARGS)

## test: every test — Swift unit and end-to-end tests, the contract client, the OpenRPC document and its generated requests, the harness example, the systemd units, the real sound path through a private PipeWire, the package, a short fuzz run in-process and over the socket, the web page
test: deps test-swift test-contract test-openrpc test-units test-sandbox test-pipewire test-desktop test-rtkit test-harness test-package fuzz-smoke fuzz-socket-smoke test-web test-python test-gtk

test-swift:
	$(SWIFT_BUILD) --build-tests
	TABBARD_BIN_DIR="$$($(SWIFT) build --show-bin-path)" $(SWIFT) test --skip-build

## test-contract: the contract client (tests/contract), docs/PROTOCOL.md's "What a client must know" examples run
## as written, tabbarctl's topics against the daemon's
test-contract: openrpc-deps
	$(SWIFT_BUILD) --product tabbard
	$(SWIFT_BUILD) --product tabbarctl
	$(OPENRPC_VENV)/bin/python tests/contract/test_contract.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds" \
	  --openrpc "$(CURDIR)/docs/openrpc.json"

## openrpc-deps: jsonschema, Hypothesis, hypothesis-jsonschema, openrpc and openrpcclientgenerator (PyPI) in $(OPENRPC_VENV)
OPENRPC_VENV = .build/openrpc-venv
OPENRPC_PIP = jsonschema==4.26.0 hypothesis==6.112.0 hypothesis-jsonschema==0.23.1 openrpc==10.5.0 openrpcclientgenerator==0.51.7
openrpc-deps: deps
	$(call apt_install,python3-venv)
	@HYPOTHESIS_STORAGE_DIRECTORY="$(CURDIR)/.build/hypothesis" \
	  $(OPENRPC_VENV)/bin/python -c 'import jsonschema, hypothesis, hypothesis_jsonschema, openrpc, openrpcclientgenerator' 2>/dev/null || { \
	  echo "Installing $(OPENRPC_PIP) into $(OPENRPC_VENV)"; \
	  python3 -m venv $(OPENRPC_VENV) && $(OPENRPC_VENV)/bin/pip install -q $(OPENRPC_PIP); }

## openrpc: docs/openrpc.json, written from what the daemon's rpc.discover answers (test-openrpc checks they are equal)
openrpc:
	$(SWIFT_BUILD) --product tabbard
	python3 tests/openrpc/discover.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds" \
	  --write docs/openrpc.json

## test-openrpc: the OpenRPC document (tests/openrpc): docs/openrpc.json is what rpc.discover answers, its methods are
## hello.features, it loads into the openrpc package's model, openrpcclientgenerator makes a client of it, PROTOCOL.md's
## method and event tables name what it names; then Hypothesis requests generated from each method's schema (seeded, 40 per method, ~15 s)
test-openrpc: openrpc-deps
	$(SWIFT_BUILD) --product tabbard
	$(OPENRPC_VENV)/bin/python tests/openrpc/test_openrpc.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds"
	HYPOTHESIS_STORAGE_DIRECTORY="$(CURDIR)/.build/hypothesis" $(OPENRPC_VENV)/bin/python tests/openrpc/test_properties.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds"

## test-harness: docs/HARNESS.md's shell example, a front end's test on virtual time (tabbarctl advance/wait);
## and test-examples
test-harness: test-examples
	$(SWIFT_BUILD) --product tabbard
	$(SWIFT_BUILD) --product tabbarctl
	sh tests/harness/front-end-test.sh "$$($(SWIFT) build --show-bin-path)/tabbard" "$$($(SWIFT) build --show-bin-path)/tabbarctl" "$(CURDIR)/Sounds" "$(CURDIR)/examples"

## test-examples: every Swift example of docs/CLIENT.md and docs/HARNESS.md, as written, in a new package that
## depends on tabbard by path (Swift 6 mode, a user's and a system's config present): tests/examples/run.py
test-examples:
	$(SWIFT_BUILD) --product tabbard
	SWIFT="$(SWIFT)" python3 tests/examples/run.py "$(CURDIR)" "$$($(SWIFT) build --show-bin-path)"

test-units:
	bash systemd/check-units.sh

## test-sandbox: the real daemon inside the system unit's sandbox (needs root; says SKIP otherwise), with the
## machine's ALSA configuration and with a plain one (as without pipewire-alsa)
test-sandbox:
	$(SWIFT_BUILD) --product tabbard
	$(SWIFT_BUILD) --product tabbarctl
	bash systemd/check-sandbox.sh "$$($(SWIFT) build --show-bin-path)/tabbard" "$$($(SWIFT) build --show-bin-path)/tabbarctl"
	SANDBOX_ALSA=plain bash systemd/check-sandbox.sh "$$($(SWIFT) build --show-bin-path)/tabbard" "$$($(SWIFT) build --show-bin-path)/tabbarctl"

# The at-the-sink probe of tests/pipewire and the bench: a capture stream on the null sink's monitor (rig/pwmonitor/).
.build/rig/pwmonitor: rig/pwmonitor/pwmonitor.c rig/pwmonitor/late.c rig/pwmonitor/late.h | pipewire-deps
	@mkdir -p $(@D)
	cc -O2 -Wall -Wextra -o $@ rig/pwmonitor/pwmonitor.c rig/pwmonitor/late.c $$(pkg-config --cflags --libs libpipewire-0.3)

## pipewire-deps: what the real sound path needs (PipeWire, WirePlumber, pipewire-pulse, the ALSA plugins)
pipewire-deps: deps
	$(call apt_install,$(PIPEWIRE_APT_PACKAGES))

## test-pipewire: the real daemon through ALSA → PipeWire's ALSA plugin → a private headless PipeWire
## (rig/rig.sh, WirePlumber, a null sink): clicks bit-exact at the sink's monitor at quantum 256
## and at min-quantum 1024, no accepted click lost without sound.failed across a server restart, `auto`
## switching over once the server is up, and through PulseAudio's ALSA plugin (rig_pulse → pipewire-pulse)
## no click with silence inserted into it, no hang when no session manager links its stream, and every click
## heard or reported when the session manager dies. Two probes judge each click (tests/pipewire/test_judge.py: the rule itself), and
## a probe reports the cycles PipeWire completed without it (ProbeLate).
PW_TEST = python3 tests/pipewire/test_pipewire.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" \
  --sounds "$(CURDIR)/Sounds" --rig "$(CURDIR)/rig/rig.sh" --monitor "$(CURDIR)/.build/rig/pwmonitor"
test-pipewire: pipewire-deps .build/rig/pwmonitor
	$(SWIFT_BUILD) --product tabbard
	python3 tests/pipewire/test_judge.py
	$(PW_TEST) Quantum256 MinQuantum1024 ServerRestart AutoBeforeServer IdleAfterStart PluginThread PulsePlugin PulseNoSessionManager ProbeLate

## desktop-deps: pulsectl (PyPI) in $(DESKTOP_VENV): libpulse's ext-stream-restore, to set the alert volume as GNOME does
DESKTOP_VENV = .build/desktop-venv
DESKTOP_PIP = pulsectl==24.12.0
desktop-deps: pipewire-deps
	$(call apt_install,python3-venv)
	@$(DESKTOP_VENV)/bin/python -c 'import pulsectl' 2>/dev/null || { \
	  echo "Installing $(DESKTOP_PIP) into $(DESKTOP_VENV)"; \
	  python3 -m venv $(DESKTOP_VENV) && $(DESKTOP_VENV)/bin/pip install -q $(DESKTOP_PIP); }

## test-desktop: the click as the desktop sees it. GNOME's sound settings through GSettings' keyfile backend, changed
## live (tests/desktop: event-sounds off silences clicks and says why, input-feedback-sounds, theme-name); on the rig of
## test-pipewire, the stream's role and names in pw-dump and pactl through PipeWire's and PulseAudio's ALSA plugins, the
## event role's volume at 50 % (module-stream-restore, as GNOME writes it) makes the click at the sink 18.06 ± 1 dB
## quieter, alerts muted leave nothing at the sink, and clicks that restart the graph are intact in what the sink wrote to
## its device (rig.sh --file-sink) or reported
test-desktop: desktop-deps .build/rig/pwmonitor
	$(SWIFT_BUILD) --product tabbard
	python3 tests/desktop/test_gsettings.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds"
	$(DESKTOP_VENV)/bin/python tests/pipewire/test_desktop.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" \
	  --sounds "$(CURDIR)/Sounds" --rig "$(CURDIR)/rig/rig.sh" --monitor "$(CURDIR)/.build/rig/pwmonitor"

## rtkit-deps: what tests/rtkit needs (rtkit-daemon, polkitd, dbus-daemon, dbus-send, setpriv/prlimit/unshare)
rtkit-deps: deps
	$(call apt_install,$(RTKIT_APT_PACKAGES))

## test-rtkit: the audio thread's realtime scheduling through a real rtkit-daemon and polkitd on a private
## system bus, tabbard running as nobody with RLIMIT_RTPRIO 0 (as root: it starts those daemons); with a
## private PipeWire run as nobody too, the PipeWire ALSA plugin's thread in tabbard raised through RTKit
test-rtkit: rtkit-deps pipewire-deps
	$(SWIFT_BUILD) --product tabbard
	python3 tests/rtkit/test_rtkit.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard"

## man: the man pages (man/*.scd → .build/man/*.[158], with scdoc)
MAN_PAGES = .build/man/tabbard.8 .build/man/tabbarctl.1 .build/man/tabbard.conf.5 .build/man/tabbard-web.1
man: $(MAN_PAGES)
.build/man/%: man/%.scd | packaging-deps
	@mkdir -p $(@D)
	@command -v scdoc >/dev/null || { echo "scdoc is missing: make packaging-deps"; exit 1; }
	scdoc < $< > $@.tmp && mv $@.tmp $@

## install: binaries, sounds, web front end (if web/ exists), docs, man pages, completions, units
install: release man
	install -d $(BINDIR) $(SHAREDIR)/sounds $(DOCDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man8 \
	  $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0755 .build/release/tabbard .build/release/tabbarctl $(BINDIR)/
	install -d $(SHAREDIR)/examples $(DOCDIR)/images
	install -m 0644 examples/*.json $(SHAREDIR)/examples/
	install -m 0644 docs/images/*.png $(DOCDIR)/images/
	install -m 0644 Sounds/*.wav $(SHAREDIR)/sounds/
	install -m 0644 docs/*.md README.md $(DOCDIR)/
	install -m 0644 docs/openrpc.json $(SHAREDIR)/openrpc.json
	install -m 0644 .build/man/tabbarctl.1 $(MANDIR)/man1/
	if [ -f web/tabbard-web ]; then install -m 0644 .build/man/tabbard-web.1 $(MANDIR)/man1/; fi
	install -m 0644 .build/man/tabbard.conf.5 $(MANDIR)/man5/
	install -m 0644 .build/man/tabbard.8 $(MANDIR)/man8/
	install -m 0644 completions/tabbarctl.bash $(BASHCOMPDIR)/tabbarctl
	install -m 0644 completions/_tabbarctl $(ZSHCOMPDIR)/_tabbarctl
	install -m 0644 completions/tabbarctl.fish $(FISHCOMPDIR)/tabbarctl.fish
	if [ -d web ]; then \
	  find web -type f ! -name tabbard-web | while read -r f; do install -D -m 0644 "$$f" "$(SHAREDIR)/$$f" || exit 1; done && \
	  if [ -f web/tabbard-web ]; then install -m 0755 web/tabbard-web $(BINDIR)/; fi; \
	fi
	rm -rf .build/systemd && systemd/render.sh $(PREFIX) .build/systemd
	install -d $(UNITDIR)/user $(SYSTEMUNITDIR) $(SYSUSERSDIR) $(TMPFILESDIR)
	install -m 0644 .build/systemd/user/* $(UNITDIR)/user/
	install -m 0644 .build/systemd/system/* $(SYSTEMUNITDIR)/
	install -m 0644 .build/systemd/sysusers.d/tabbard.conf $(SYSUSERSDIR)/
	install -m 0644 .build/systemd/tmpfiles.d/tabbard.conf $(TMPFILESDIR)/

uninstall:
	rm -f $(BINDIR)/tabbard $(BINDIR)/tabbarctl $(BINDIR)/tabbard-web
	rm -rf $(SHAREDIR) $(DOCDIR)
	rm -f $(MANDIR)/man1/tabbarctl.1 $(MANDIR)/man1/tabbard-web.1 $(MANDIR)/man5/tabbard.conf.5 $(MANDIR)/man8/tabbard.8 \
	  $(BASHCOMPDIR)/tabbarctl $(ZSHCOMPDIR)/_tabbarctl $(FISHCOMPDIR)/tabbarctl.fish
	rm -f $(UNITDIR)/user/tabbard.socket $(UNITDIR)/user/tabbard.service \
	  $(UNITDIR)/user/tabbard@.socket $(UNITDIR)/user/tabbard@.service $(UNITDIR)/user/tabbard-web.service \
	  $(SYSTEMUNITDIR)/tabbard.socket $(SYSTEMUNITDIR)/tabbard.service \
	  $(SYSUSERSDIR)/tabbard.conf $(TMPFILESDIR)/tabbard.conf

## deb: a Debian package of the release build (.build/deb/tabbard_VERSION_ARCH.deb), then lintian
deb: packaging-deps release man
	packaging/build-deb.sh

## test-package: man pages render clean, completions work, the .deb installs, runs without
## the toolchain, answers, and uninstalls leaving nothing behind (needs root; SKIP otherwise)
test-package: deb
	bash packaging/test-docs.sh .build/release .build/man
	bash packaging/test-deb.sh .build/deb/tabbard.deb

## web: the browser front end (docs/WEB.md) on http://127.0.0.1:$(WEB_PORT)/ — starts a daemon on
## the default socket first if none answers there; prints the address (with its token) to open.
WEB_PORT ?= 8765
# Fonts: the built-in bar's titles are CJK (首頁, 附近, 聊天, 我的); DejaVu covers Arabic and Hebrew.
WEB_FONT_PACKAGES = fonts-wqy-zenhei fonts-dejavu-core
WEB_APT_PACKAGES = websocketd $(WEB_FONT_PACKAGES)
WEB_TEST_APT_PACKAGES = websocketd chromium python3-venv $(WEB_FONT_PACKAGES)
# Playwright for Python and axe-core (axe-playwright-python bundles axe-core 4.12) from PyPI in a
# project-local venv; Playwright's own browser download is not used.
WEB_VENV = .build/web-venv
PLAYWRIGHT_VERSION = 1.65.2
AXE_PLAYWRIGHT_VERSION = 0.1.8

web-deps: deps
	$(call apt_install,$(WEB_APT_PACKAGES))

web: release web-deps
	@ctl=.build/release/tabbarctl; daemon=""; \
	if ! $$ctl ping >/dev/null 2>&1; then \
	  echo "no tabbard answers on the default socket: starting one"; \
	  .build/release/tabbard --audio auto --sounds Sounds & daemon=$$!; \
	  for i in $$(seq 300); do $$ctl ping >/dev/null 2>&1 && break; kill -0 $$daemon 2>/dev/null || exit 1; sleep 0.1; done; \
	fi; \
	trap '[ -z "$$daemon" ] || kill $$daemon' EXIT; \
	TABBARCTL=$$ctl web/tabbard-web --port $(WEB_PORT) $(ARGS)

web-test-deps: deps
	$(call apt_install,$(WEB_TEST_APT_PACKAGES))
	@$(WEB_VENV)/bin/python -c 'import playwright, axe_playwright_python' 2>/dev/null || { \
	  echo "Installing Playwright for Python $(PLAYWRIGHT_VERSION) and axe-playwright-python $(AXE_PLAYWRIGHT_VERSION) into $(WEB_VENV)"; \
	  python3 -m venv $(WEB_VENV) && $(WEB_VENV)/bin/pip install -q playwright==$(PLAYWRIGHT_VERSION) \
	    axe-playwright-python==$(AXE_PLAYWRIGHT_VERSION); }

## test-web: the page in headless Chromium against a daemon and its bridge (tests/web/); saves docs/images/*.png
test-web: web-test-deps
	$(SWIFT_BUILD) --product tabbard
	$(SWIFT_BUILD) --product tabbarctl
	$(WEB_VENV)/bin/python tests/web/test_web.py --bin "$$($(SWIFT) build --show-bin-path)" --sounds "$(CURDIR)/Sounds" \
	  --root "$(CURDIR)" --screenshots "$(CURDIR)/docs/images"

## bench-web: tap → click at a private PipeWire sink's monitor and tap → look painted, in headless Chromium
## with real touch input, beside a page that plays its own click with Web Audio and paints by itself
## (docs/WEB.md, "Latency"); ARGS="--taps N --variants main,worker,shared&settle=12"
bench-web: release web-test-deps pipewire-deps .build/rig/pwmonitor
	$(WEB_VENV)/bin/python tests/web/measure_click.py --bin .build/release --sounds "$(CURDIR)/Sounds" --root "$(CURDIR)" \
	  --sink "$(CURDIR)/.build/rig/pwmonitor" $(ARGS)

## python-deps: the Python client's test tools (pytest, mypy from PyPI) in $(PY_VENV), and the package
## (clients/python) installed there as a user installs it, so its pytest plugin registers itself
PY_VENV = .build/python-venv
PYTEST_VERSION = 9.2.0
MYPY_VERSION = 2.4.1
SETUPTOOLS_VERSION = 84.2.1
WHEEL_VERSION = 0.48.0
python-deps: deps
	$(call apt_install,python3-venv)
	@$(PY_VENV)/bin/python -c 'import pytest, mypy, setuptools, wheel' 2>/dev/null || { \
	  echo "Installing pytest $(PYTEST_VERSION) and mypy $(MYPY_VERSION) into $(PY_VENV)"; \
	  python3 -m venv $(PY_VENV) && $(PY_VENV)/bin/pip install -q pytest==$(PYTEST_VERSION) mypy==$(MYPY_VERSION) \
	    setuptools==$(SETUPTOOLS_VERSION) wheel==$(WHEEL_VERSION); }
	$(PY_VENV)/bin/pip install -q --no-build-isolation --no-deps --force-reinstall ./clients/python
	rm -rf clients/python/build clients/python/src/tabbard.egg-info

## test-python: the package typed (mypy --strict) and against the real daemon (sync, asyncio, reconnect, errors,
## the socket path as tabbarctl picks it), the pytest plugin, and every Python example of docs/PYTHON.md
test-python: python-deps
	$(SWIFT_BUILD) --product tabbard
	$(SWIFT_BUILD) --product tabbarctl
	$(PY_VENV)/bin/mypy --strict --cache-dir .build/mypy-cache clients/python/src/tabbard frontends/gtk/tabbar_gtk/model.py
	PATH="$$($(SWIFT) build --show-bin-path):$$PATH" $(PY_VENV)/bin/pytest -q -p no:cacheprovider tests/python

## gtk-deps: the GTK 4 front end's packages (PyGObject, GTK 4 from Debian) and what its tests need
## (Xvfb, xdotool, ImageMagick for screenshots, a font); the browser side comes from web-test-deps
GTK_APT_PACKAGES = python3-gi python3-gi-cairo gir1.2-gtk-4.0 xvfb xauth xdotool imagemagick fonts-dejavu-core
gtk-deps: deps
	$(call apt_install,$(GTK_APT_PACKAGES))

## test-gtk: frontends/gtk under Xvfb — every example bar, clicks on each kind of item, the raised center
## button, badges, hide/show, and the GTK window beside the browser page on one daemon (tests/gtk/);
## saves docs/images/gtk-*.png
test-gtk: gtk-deps web-test-deps
	$(SWIFT_BUILD) --product tabbard
	$(SWIFT_BUILD) --product tabbarctl
	PYTHONPATH="$(CURDIR)/clients/python/src" xvfb-run -a -s "-screen 0 1024x768x24" \
	  $(WEB_VENV)/bin/python tests/gtk/test_gtk.py --bin "$$($(SWIFT) build --show-bin-path)" \
	  --sounds "$(CURDIR)/Sounds" --root "$(CURDIR)" --screenshots "$(CURDIR)/docs/images"

## bench-python: the Python client's round trip beside tabbard-bench's raw client and a raw Python socket loop,
## daemon and clients pinned to CPUs 0 and 1 (figures in docs/PYTHON.md); ARGS=--n N --rounds R
bench-python: release python-deps
	$(SWIFT_BUILD) $(RELEASE_FLAGS) --product tabbard-bench
	$(PY_VENV)/bin/python tests/python/bench_roundtrip.py --daemon .build/release/tabbard --bench .build/release/tabbard-bench \
	  --sounds Sounds $(ARGS)

## bench: the benchmark suite against a release daemon (figures, not pass/fail);
## ARGS=--quick for a short run, ARGS=--json for JSON on stdout. Writes .bench/results.json.
BENCH_CC = cc -O2 -Wall -Wextra
bench: release bench-deps .build/bench/floor .build/bench/libclickshim.so .build/bench/fbdclient .build/rig/pwmonitor .build/bench/caclick
	@mkdir -p .bench
	python3 bench/sink/sinkbench.py --daemon .build/release/tabbard --sounds Sounds --rig rig/rig.sh \
	  --monitor .build/rig/pwmonitor --caclick .build/bench/caclick $(filter --quick,$(ARGS)) --out .bench/sink.json
	.build/release/tabbard-bench --daemon .build/release/tabbard --sounds Sounds \
	  --floor .build/bench/floor --shim .build/bench/libclickshim.so --fbdclient .build/bench/fbdclient \
	  --sink-json .bench/sink.json $(ARGS)
	@for r in select touch; do printf '%s: ' "$$r"; REQUEST=$$r bash bench/ir/ir.sh .build/release/tabbard 3; done

## bench-sounds: loading sounds off the loop (bench/sounds; docs/SOUNDS.md and PERFORMANCE.md, "Loading sounds"): libsamplerate
## against libsoxr's recipes, cost and quality; then tabbard on Debian's Lomiri ringtones (lomiri-sounds): the socket at start,
## pings on another connection during sound.reload and SIGHUP, the watchdog, the largest file the limits allow. Not part of `make test`.
.PHONY: bench-sounds
SOUNDS_BENCH_APT_PACKAGES = lomiri-sounds libsamplerate0
bench-sounds: release
	$(call apt_install,$(SOUNDS_BENCH_APT_PACKAGES))
	@mkdir -p .build/bench
	cc -O2 -o .build/bench/resample bench/sounds/resample.c -lsoxr -l:libsamplerate.so.0 -lm
	.build/bench/resample
	python3 bench/sounds/loadbench.py --daemon .build/release/tabbard --sounds /usr/share/sounds/lomiri/ringtones --limit-file

## bench-deps: what only the benchmark needs (the feedbackd reference); not part of `make test`
bench-deps: deps pipewire-deps
	$(call apt_install,$(BENCH_APT_PACKAGES))

.build/bench/floor: bench/floor/floor.c
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $<

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
	$(SWIFT_BUILD) -c release --product FuzzProtocol $(foreach s,$(subst $(comma), ,$(FUZZ_SANITIZE)),--sanitize=$(s)) \
	  -Xswiftc -sanitize=$(FUZZ_SANITIZE) --scratch-path $(FUZZ_SCRATCH)

## fuzz-smoke: the short bounded fuzz run of `make test` (FUZZ_SMOKE_SECONDS, default 20), from the seeds only
FUZZ_SMOKE_SECONDS ?= 20
fuzz-smoke: fuzz-build
	rm -rf .build/fuzz-smoke && mkdir -p .build/fuzz-smoke fuzz-artifacts
	$(FUZZ_ENV) $(FUZZ_BIN) $(FUZZ_OPTS) -max_total_time=$(FUZZ_SMOKE_SECONDS) .build/fuzz-smoke Fuzz/corpus

## fuzz-merge: adds to Fuzz/corpus a small set of inputs of .build/fuzz-corpus that reach new edges
fuzz-merge: fuzz-build
	$(FUZZ_ENV) $(FUZZ_BIN) -set_cover_merge=1 -use_counters=0 -max_len=2048 Fuzz/corpus .build/fuzz-corpus

## fuzz-socket: the outside fuzzer over the real socket (tests/fuzz-socket/fuzz.py, docs/ROBUSTNESS.md) for
## FUZZ_SOCKET_SECONDS (default 480) against the debug daemon; FUZZ_SOCKET_ARGS="--seed N" repeats a run.
FUZZ_SOCKET_SECONDS ?= 480
FUZZ_SOCKET_SMOKE_SECONDS ?= 45
FUZZ_SOCKET_ARGS ?=
FUZZ_SOCKET = python3 tests/fuzz-socket/fuzz.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds" \
	  --max-queued-bytes 65536 --compact-every 50 $(FUZZ_SOCKET_ARGS)
fuzz-socket:
	$(SWIFT) build --product tabbard
	$(FUZZ_SOCKET) --seconds $(FUZZ_SOCKET_SECONDS)

## fuzz-socket-smoke: the short run of `make test` (FUZZ_SOCKET_SMOKE_SECONDS, default 45)
fuzz-socket-smoke:
	$(SWIFT) build --product tabbard
	$(FUZZ_SOCKET) --seconds $(FUZZ_SOCKET_SMOKE_SECONDS)

clean:
	$(SWIFT) package clean
