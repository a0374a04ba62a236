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
BENCH_APT_PACKAGES = feedbackd dbus-daemon

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

.PHONY: all deps bench-deps build release run test test-swift test-contract test-units test-sandbox install uninstall bench fuzz clean

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

## test: every test — Swift unit and end-to-end tests, the contract client, the systemd units
test: deps test-swift test-contract test-units test-sandbox

test-swift:
	$(SWIFT) build --build-tests
	TABBARD_BIN_DIR="$$($(SWIFT) build --show-bin-path)" TABBARD_SOUNDS_DIR="$(CURDIR)/Sounds" $(SWIFT) test --skip-build

test-contract:
	$(SWIFT) build --product tabbard
	python3 tests/contract/test_contract.py --daemon "$$($(SWIFT) build --show-bin-path)/tabbard" --sounds "$(CURDIR)/Sounds"

test-units:
	bash systemd/check-units.sh

## test-sandbox: the real daemon inside the system unit's sandbox (needs root; says SKIP otherwise)
test-sandbox:
	$(SWIFT) build --product tabbard
	$(SWIFT) build --product tabbarctl
	bash systemd/check-sandbox.sh "$$($(SWIFT) build --show-bin-path)/tabbard" "$$($(SWIFT) build --show-bin-path)/tabbarctl"

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
bench: release bench-deps .build/bench/floor .build/bench/libclickshim.so .build/bench/fbdclient
	.build/release/tabbard-bench --daemon .build/release/tabbard --sounds Sounds \
	  --floor .build/bench/floor --shim .build/bench/libclickshim.so --fbdclient .build/bench/fbdclient $(ARGS)

## bench-deps: what only the benchmark needs (the feedbackd reference); not part of `make test`
bench-deps: deps
	$(call apt_install,$(BENCH_APT_PACKAGES))

.build/bench/floor: bench/floor/floor.c
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $<

.build/bench/libclickshim.so: bench/preload/clickshim.c
	@mkdir -p $(@D)
	$(BENCH_CC) -shared -fPIC -o $@ $< -ldl

.build/bench/fbdclient: bench/fbdclient/fbdclient.c | bench-deps
	@mkdir -p $(@D)
	$(BENCH_CC) -o $@ $< -lsystemd

clean:
	$(SWIFT) package clean
