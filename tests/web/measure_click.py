#!/usr/bin/env python3
"""Tap → the look that shows it, painted, and touch down → click at the sink, in headless
Chromium (docs/WEB.md, "Latency").

Starts a daemon (null audio) on a temporary socket and tabbard-web on an ephemeral
port, and opens pages in one browser, each 390×844 with touch:
  - tabbard: the web front end on the daemon's built-in bar (it commits on touch up),
             once per --variants entry (where the page reads its WebSocket), with the
             bar's default `click_on: "commit"` (the click at the commit, on touch up);
  - press:   the --press-variant page again, tapped with the bar set to `click_on:
             "press"` (the click when the finger lands; the commit still on touch up);
  - self:    a page that draws its own selected look and plays its own Web Audio click
             on touchstart (no daemon), the floor of what a page can do.
The pages share the daemon: before each tap, the bar's click_on is set to that page's
(`tabbarctl call bar.configure`, between taps). Taps are real touch input (CDP
Input.dispatchTouchEvent: touchStart, touchEnd --hold-ms later, 80 by default: a
person's tap holds the finger down ~50–150 ms) on two tabs in turn, the pages
interleaved, 150–500 ms apart (seeded). Each page records, from the input event's timeStamp (pointerup for
tabbard, touchstart for self), the requestAnimationFrame callback after the look
was drawn (the frame that paints it); tabbard also when the tab.selected frame is
read and when the state that shows it is drawn (tests/web/instrument.js, loaded
into the page by this script only). Then `ping` and `tab.select` round trips
from the tabbard page.

Usage: measure_click.py --bin DIR --sounds DIR --root REPO [--taps N]
"""
import argparse
import json
import os
import queue
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rig import Rig, open_page, WAIT_MS  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

PHONE = {"width": 390, "height": 844}

# A page that changes its own look on touchstart: what a page that decides by itself can do.
SELF_PAINT = """<!doctype html><meta name=viewport content="width=device-width">
<style>body{margin:0} .t{position:absolute;bottom:0;width:50%;height:49px;background:#f8f8fa;color:#636366}
.t.on{color:#0060c8;font-weight:600} #a{left:0} #b{left:50%}</style>
<div class=t id=a data-tab=a>A</div><div class=t id=b data-tab=b>B</div>
<script>
const L = window.selfLatency = { painted: [] };
// Its own click, played with Web Audio on touchstart (heard only with --sink).
const audio = new AudioContext({ latencyHint: 'interactive' });
const click = audio.createBuffer(1, 480, 48000);
click.getChannelData(0).forEach((_, i, d) => { d[i] = (i < 240 ? 0.8 : -0.8) * (1 - i / 480); });
for (const t of document.querySelectorAll('.t')) t.addEventListener('touchstart', (e) => {
  e.preventDefault();
  const s = audio.createBufferSource(); s.buffer = click; s.connect(audio.destination); s.start();
  const started = e.timeStamp;
  for (const u of document.querySelectorAll('.t')) u.classList.toggle('on', u === t);
  requestAnimationFrame(() => L.painted.push(performance.now() - started));
}, { passive: false });
</script>"""


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def line(name, v):
    return (f"{name}, {len(v)}: p50 {pct(v, 50):.1f} ms, p90 {pct(v, 90):.1f} ms, p99 {pct(v, 99):.1f} ms, "
            f"max {max(v):.1f} ms, mean {statistics.mean(v):.1f} ms")


def center(page, sel):
    return page.eval_on_selector(sel, "e => { const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] }")


def tap(cdp, xy, hold_s):
    """A touch start and end; returns when each was dispatched (CLOCK_MONOTONIC ns)."""
    point = [{"x": xy[0], "y": xy[1], "id": 1}]
    t0 = time.monotonic_ns()
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point})
    time.sleep(hold_s)
    t1 = time.monotonic_ns()
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    return t0, t1


class Sink:
    """A private headless PipeWire (rig/rig.sh) and pwmonitor on its sink's monitor:
    the onsets of sounds as they reach the sink, in CLOCK_MONOTONIC ns."""

    def __init__(self, root, pwmonitor):
        self.dir = tempfile.mkdtemp(prefix="tabbard-web-sink.")
        self.rig = os.path.join(root, "rig", "rig.sh")
        out = subprocess.run(["bash", self.rig, "start", self.dir], capture_output=True, text=True, timeout=90)
        if out.returncode != 0:
            raise SystemExit(f"rig.sh start failed: {out.stderr.strip()}")
        self.env = {}
        for line in out.stdout.splitlines():
            if line.startswith("export "):
                k, v = line[7:].split("=", 1)
                self.env[k] = shlex.split(v)[0]
        self.onsets = queue.Queue()
        self.mon = subprocess.Popen([pwmonitor, "--target", self.env["RIG_SINK"]], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                    env=dict(os.environ, **self.env))
        ready = threading.Event()

        def read():
            for line in self.mon.stdout:
                w = line.split()
                if w and w[0] == "ready":
                    ready.set()
                elif w and w[0] == "onset":
                    self.onsets.put(int(w[1]))
        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(30):
            raise SystemExit("pwmonitor did not start")

    def onset_after(self, t_ns, seconds=1.0):
        """The first onset after t_ns (older ones are dropped), or None."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                o = self.onsets.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                break
            if o > t_ns:
                return o
        return None

    def close(self):
        self.mon.stdin.close()
        try:
            self.mon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.mon.kill()
        subprocess.run(["bash", self.rig, "stop", self.dir], capture_output=True, timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--taps", type=int, default=100, help="measured taps per page (after 10 to warm up)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--sink", metavar="PWMONITOR",
                    help="also time the clicks at a private PipeWire sink's monitor (rig/rig.sh; "
                         "the daemon plays through ALSA, Chromium through pipewire-pulse): the pwmonitor to use")
    ap.add_argument("--hold-ms", type=float, default=80, help="ms between touchStart and touchEnd (default 80)")
    ap.add_argument("--press-variant", default="worker",
                    help="the page (a --variants entry's form) also tapped with click_on \"press\"; \"\" for none")
    ap.add_argument("--variants", default="main,worker,shared&settle=12",
                    help="tabbard pages measured side by side, each ?socket=VARIANT: main (the WebSocket on the "
                         "page's thread), worker (in a dedicated Worker, the page's default), shared&settle=MS "
                         "(a Worker writing to shared memory that the pointerup handler reads until the state is in)")
    args = ap.parse_args()
    args.keep = False
    args.screenshots = None
    rig = Rig(args)
    rnd = random.Random(17)
    sink = None
    heard = {}
    try:
        launch = {}
        if args.sink:
            sink = Sink(args.root, args.sink)
            extra = {k: v for k, v in sink.env.items() if k != "XDG_RUNTIME_DIR"}
            rig.env.update(extra)
            rig.audio = ["--audio", "alsa", "--alsa-device", "rig"]
            launch = {"env": dict(os.environ, **sink.env), "ignore_default_args": ["--mute-audio"]}
        rig.start_daemon()
        rig.start_web()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, **launch,
                                         args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
            variants = args.variants.split(",")
            pages, targets, count, click_on = {}, {}, {}, {}
            for v in variants + (["press"] if args.press_variant else []):
                click_on[v] = "press" if v == "press" else "commit"
                q = args.press_variant if v == "press" else v
                page = open_page(browser, rig, viewport=PHONE, has_touch=True, query=f"&socket={q}")
                page.add_script_tag(path=os.path.join(HERE, "instrument.js"))
                page.wait_for_function("!!window.tabbardLatency", timeout=WAIT_MS)
                pages[v] = page
                targets[v] = [center(page, '[data-tab="nearby"]'), center(page, '[data-tab="chat"]')]
                count[v] = "window.tabbardLatency.painted.length"
            ref = browser.new_page(viewport=PHONE, has_touch=True)
            ref.set_content(SELF_PAINT)
            pages["self"] = ref
            targets["self"] = [center(ref, "#a"), center(ref, "#b")]
            count["self"] = "window.selfLatency.painted.length"
            cdps = {name: p.context.new_cdp_session(p) for name, p in pages.items()}
            bar_click_on = "commit"
            for i in range(args.taps + 10):
                for name in pages:
                    p = pages[name]
                    if name in click_on and click_on[name] != bar_click_on:
                        bar_click_on = click_on[name]
                        subprocess.run([rig.ctl, "--socket", rig.sock, "call", "bar.configure",
                                        json.dumps({"settings": {"click_on": bar_click_on}})],
                                       check=True, capture_output=True, env=rig.env, timeout=30)
                        p.wait_for_function(f"window.tabbard.client.state.settings.click_on === '{bar_click_on}'",
                                            timeout=WAIT_MS)
                    p.bring_to_front()
                    n = p.evaluate(count[name])
                    if name == "self":
                        k = i % 2
                    else:  # the tab that is not selected (the pages share the daemon's selection)
                        k = 0 if p.evaluate("window.tabbard.client.state.selected") != "nearby" else 1
                    t0, t1 = tap(cdps[name], targets[name][k], args.hold_ms / 1000)
                    p.wait_for_function(f"{count[name]} > {n}", timeout=WAIT_MS)
                    if sink and i >= 10:  # the first click after the touch went down (the only one of the tap)
                        o = sink.onset_after(t0)
                        heard.setdefault(name, []).append(None if o is None else ((o - t0) / 1e6, (o - t1) / 1e6))
                    time.sleep(rnd.uniform(0.15, 0.5))
            page = pages[variants[0]]
            rtt = page.evaluate("""async () => {
                const c = window.tabbard.client, out = {ping: [], select: []};
                for (let i = 0; i < 200; i++) {
                    let t = performance.now(); await c.request("ping"); out.ping.push(performance.now() - t);
                    t = performance.now(); await c.request("tab.select", {tab: i % 2 ? "chat" : "me"}); out.select.push(performance.now() - t);
                }
                return out; }""")
            got = {v: pages[v].evaluate("window.tabbardLatency") for v in pages if v != "self"}
            own = ref.evaluate("window.selfLatency")
            browser.close()
    finally:
        rig.close()
        if sink:
            sink.close()
    print(f"hold: {args.hold_ms:g} ms between touchStart and touchEnd")
    for name, v in heard.items():
        got_v = [x for x in v if x is not None]
        who = ("a page that plays its own Web Audio click on touchstart" if name == "self" else
               f"tabbard ({args.press_variant}), click_on press" if name == "press" else f"tabbard ({name}), click_on commit")
        if got_v:
            print(line(f"touch down (dispatched) → click's onset at the sink, {who} "
                       f"({len(v) - len(got_v)} of {len(v)} not heard)", [d for d, _ in got_v]))
            if name not in ("self", "press"):
                print(line("  touch up (dispatched) → click's onset at the sink (part of it)", [u for _, u in got_v]))
        else:
            print(f"touch down → click at the sink, {who}: none of {len(v)} heard")
    for v in variants + (["press"] if args.press_variant else []):
        label = f"{args.press_variant}, click_on press" if v == "press" else v
        print(line(f"tap (touch up) → selected look painted, tabbard ({label})", got[v]["painted"][10:]))
        print(line("  tap → the pointerup handler runs (part of it)", got[v]["handler"][10:]))
        print(line("  tap → tab.selected read by the page (part of it)", got[v]["event"][10:]))
        print(line("  tap → the state that shows it drawn (part of it)", got[v]["state"][10:]))
    print(line("tap (touch start) → own look painted, a page that paints by itself", own["painted"][10:]))
    for name, v in rtt.items():
        print(line(f"request → reply in the page, {name}", v))


if __name__ == "__main__":
    main()
