#!/usr/bin/env python3
"""The GTK 4 front end (frontends/gtk/tabbar-gtk) under Xvfb, against a real daemon: every
example bar drawn at the daemon's frames, real pointer clicks (xdotool) on each kind of item, the
raised center button above the bar's edge, badges, hide/show with the slide, scroll, following
the daemon only, and — beside the browser page (Playwright; tabbard-web as tests/web starts it) — a tap in
either front end shown in the other. What the window painted is read from its `--report` lines
(one JSON line per painted change) and from its snapshots (`snapshot PATH`). Waits are for
conditions with deadlines, never fixed sleeps. Saves docs/images/gtk-*.png (--screenshots DIR).

Run under xvfb-run with the web venv's Python and PYTHONPATH=clients/python/src (make test-gtk).
Usage: test_gtk.py --bin DIR --sounds DIR --root REPO [--screenshots DIR] [--measure N]
Prints `ok …`/`FAIL …` per check and a closing `N passed, N failed`.
"""
import argparse
import json
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import threading

import tabbard  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "web"))
from rig import Lines as weblines, deadline_loop  # noqa: E402  (the browser tests' rig)
WAIT = 20.0  # seconds: generous, the machine may be loaded
WAIT_MS = int(WAIT * 1000)
ACCENT = (0x0A, 0x84, 0xFF)
BADGE_RED = (0xFF, 0x3B, 0x30)


class Lines(weblines):
    """A process's stdout lines (tests/web/rig.py's), taken one after the other by `first`."""

    def first(self, predicate, what):
        end = time.monotonic() + WAIT
        while True:
            try:
                line = self.q.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                line = ""
            if line is None:
                raise AssertionError(f"the process ended before {what}")
            if line and predicate(line):
                return line
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}")


class Rig:
    """A daemon (--no-config, null audio, a private socket and state) and tabbard-web on an
    ephemeral loopback port in front of it, as tests/web starts them."""

    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="tabbard-gtk-test.")
        os.chmod(self.tmp, 0o700)
        runtime = os.path.join(self.tmp, "run")
        os.mkdir(runtime, 0o700)
        self.sock = os.path.join(self.tmp, "s")
        self.state = os.path.join(self.tmp, "state.json")
        self.ctl = os.path.join(args.bin, "tabbarctl")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=runtime, TABBARCTL=self.ctl)
        self.env.pop("TABBARD_SOCKET", None)
        self.daemon = None
        self.web = None

    def start_daemon(self):
        log = open(os.path.join(self.tmp, "daemon.log"), "a")
        self.daemon = subprocess.Popen(
            [os.path.join(self.args.bin, "tabbard"), "--no-config", "--socket", self.sock, "--state", self.state,
             "--audio", "null", "--sounds", self.args.sounds], stdout=log, stderr=log, env=self.env)
        for _ in deadline_loop(30, "the daemon to answer"):
            if self.daemon.poll() is not None:
                raise AssertionError(f"the daemon exited with {self.daemon.returncode}")
            try:
                tabbard.Client(self.sock).close()
                return
            except tabbard.ConnectError:
                pass

    def stop_daemon(self):
        self.daemon.terminate()
        self.daemon.wait(timeout=30)

    def start_web(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.web = subprocess.Popen(
            [os.path.join(self.args.root, "web", "tabbard-web"), "--socket", self.sock, "--port", str(port)],
            stdout=subprocess.PIPE, stderr=open(os.path.join(self.tmp, "web.log"), "a"), text=True, env=self.env)
        line = Lines(self.web).first(lambda l: l.startswith("web: "), "tabbard-web's address line")
        self.url = line.split(" ", 1)[1]

    def close(self):
        for p in (self.web, self.daemon):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        if self.args.keep:
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def open_page(browser, rig):
    """The page, once connected (the stable hook body[data-connection])."""
    page = browser.new_page(viewport={"width": 420, "height": 640})
    page.on("pageerror", lambda e: print("  page error:", e))
    page.goto(rig.url)
    page.wait_for_function("document.body.dataset.connection === 'open'", timeout=WAIT_MS)
    return page


class Gtk:
    """tabbar-gtk in a subprocess: its report lines, its X window, clicks and screenshots."""

    def __init__(self, rig, root):
        env = dict(os.environ, GTK_A11Y="none")
        self.proc = subprocess.Popen(
            [os.path.join(root, "frontends", "gtk", "tabbar-gtk"), "--socket", rig.sock, "--undecorated",
             "--report", "--width", "420", "--height", "640", "--examples", os.path.join(root, "examples")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(os.path.join(rig.tmp, "gtk.log"), "a"),
            text=True, env=env)
        self.lines = Lines(self.proc)
        self.pos = 0
        self.last = None
        self.last_view = [0, 0, 0, 0]
        self.window = subprocess.run(["xdotool", "search", "--sync", "--name", "^tabbar-gtk$"], capture_output=True,
                                     text=True, timeout=WAIT, check=True).stdout.split()[0]
        self.wait(lambda r: r.get("status") == "open" and r.get("items"), "the window connected and painted")

    def _drain(self):
        while True:
            try:
                line = self.lines.q.get_nowait()
            except queue.Empty:
                return
            if line is None:
                raise AssertionError("tabbar-gtk ended")
            self.lines.seen.append(line)

    @staticmethod
    def _holds(predicate, r):
        try:
            return bool(predicate(r))
        except (KeyError, TypeError, StopIteration):
            return False

    def wait(self, predicate, what):
        """The next report (after the last one a wait returned) that satisfies `predicate`."""
        end = time.monotonic() + WAIT
        while True:
            while self.pos < len(self.lines.seen):
                line = self.lines.seen[self.pos]
                self.pos += 1
                if line.startswith("{"):
                    r = json.loads(line)
                    if "view" in r:
                        self.last_view = r["view"]
                    if self._holds(predicate, r):
                        self.last = r
                        return r
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; the last reports: {self.lines.seen[-3:]}")
            try:
                line = self.lines.q.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"tabbar-gtk ended before {what}")
            self.lines.seen.append(line)

    def painted(self, predicate, what):
        """What the window shows now satisfies `predicate` (now, or after more paints)."""
        self._drain()
        bars = [json.loads(l) for l in self.lines.seen if l.startswith("{") and '"items"' in l]
        if bars:
            self.last_view = bars[-1]["view"]
        if bars and self._holds(predicate, bars[-1]):
            self.pos = len(self.lines.seen)
            self.last = bars[-1]
            return bars[-1]
        return self.wait(lambda r: "items" in r and predicate(r), what)

    def item(self, tab, report=None):
        r = report or self.painted(lambda r: True, "a painted bar")
        return next(i for i in r["items"] if i["id"] == tab)

    def click(self, x, y):
        subprocess.run(["xdotool", "mousemove", "--window", self.window, "--sync", str(int(x)), str(int(y)),
                        "click", "1"], check=True, timeout=WAIT)

    def click_item(self, tab):
        i = self.item(tab)
        self.click(i["x"] + i["w"] / 2, i["y"] + i["h"] / 2)

    def key(self, name):
        subprocess.run(["xdotool", "windowfocus", "--sync", self.window, "key", name], check=True, timeout=WAIT)

    def scroll_down(self, times):
        view = self.painted(lambda r: True, "a painted bar")["view"]  # over the content, below the controls
        subprocess.run(["xdotool", "mousemove", "--window", self.window, "--sync", str(int(view[0] + 200)),
                        str(int(view[1] + 60)),
                        "click", "--repeat", str(times), "5"], check=True, timeout=WAIT)

    def screenshot(self, path):
        """The device screen (content and bar) drawn by the window's own cairo code for what it
        last reported: an X screenshot could still hold the frame before. Pixel coordinates in
        it are the view's: a report's window x, y minus `view[0]`, `view[1]`."""
        if os.path.exists(path):
            os.unlink(path)
        self.proc.stdin.write(f"snapshot {path}\n")
        self.proc.stdin.flush()
        self.wait(lambda r: r.get("snapshot") == path, f"the snapshot {path}")

    def pixel(self, png, x, y):
        """The colour at window point (x, y) of a snapshot."""
        view = self.last_view
        x, y = x - view[0], y - view[1]
        out = subprocess.run(["convert", png, "-format", f"%[fx:int(255*p{{{int(x)},{int(y)}}}.r)],"
                              f"%[fx:int(255*p{{{int(x)},{int(y)}}}.g)],%[fx:int(255*p{{{int(x)},{int(y)}}}.b)]",
                              "info:"], capture_output=True, text=True, check=True, timeout=WAIT).stdout
        return tuple(int(v) for v in out.split(","))

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def near(c, want, tol=40):
    return all(abs(a - b) <= tol for a, b in zip(c, want))


def next_of(events, names):
    """The next event named one of `names` (others, e.g. tab.highlighted, are passed over)."""
    for method, params in events:
        if method in names:
            return method, params
    raise AssertionError("the events ended")


def daemon_state(rig):
    with tabbard.Client(rig.sock) as c:
        return c.state_get()


def configure(rig, example):
    with tabbard.Client(rig.sock) as c:
        with open(os.path.join(rig.args.root, "examples", example + ".json")) as f:
            return c.call("bar.configure", json.load(f))


# MARK: the checks

def check_every_example(rig, gtk, ctx):
    """Each example: the daemon's items in order, at its frames (scaled to the window's width), titled
    with their presentation; a screenshot."""
    names = sorted(f[:-5] for f in os.listdir(os.path.join(rig.args.root, "examples")) if f.endswith(".json"))
    assert len(names) >= 7, names
    for name in names:
        r = configure(rig, name)
        st, seq = r["state"], r["seq"]
        rep = gtk.painted(lambda p: p.get("seq") == seq, f"the {name} bar painted")
        want = [(i["id"], i["presentation"]["title"]) for i in st["items"]]
        assert [(i["id"], i["title"]) for i in rep["items"]] == want, f"{name}: {rep['items']} != {want}"
        s = rep["scale"]
        assert abs(s - 420 / st["layout"]["width"]) < 1e-3, (name, s)
        for i, item in zip(rep["items"], st["items"]):
            f = item["frame"]
            assert abs(i["x"] - f["x"] * s) < 0.5 and abs(i["y"] - (rep["bar_top"] + f["y"] * s)) < 0.5, (name, i, f)
            assert abs(i["w"] - f["w"] * s) < 0.5 and abs(i["h"] - f["h"] * s) < 0.5, (name, i, f)
        if ctx.get("screenshots"):
            gtk.painted(lambda p: p.get("seq") == seq and not p["animating"], f"{name}: its cues played out")
            gtk.screenshot(os.path.join(ctx["screenshots"], f"gtk-{name}.png"))


def check_click_tab(rig, gtk, ctx):
    seq = configure(rig, "center-plus")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "center-plus painted")
    gtk.click_item("chat")
    rep = gtk.painted(lambda p: p["selected"] == "chat", "chat selected in the window")
    assert daemon_state(rig)["state"]["selected"] == "chat"
    assert gtk.item("chat", rep)["icon"] == "bubble.fill"  # the selected icon, from presentation


def check_center_protrudes_and_is_hit_above_the_bar(rig, gtk, ctx):
    seq = configure(rig, "center-plus")["seq"]
    rep = gtk.painted(lambda p: p.get("seq") == seq, "center-plus painted")
    c = gtk.item("post", rep)
    top = rep["bar_top"]
    assert c["y"] < top - 15, f"the center button's top {c['y']} is not above the bar's edge {top}"
    png = os.path.join(rig.tmp, "center.png")
    gtk.screenshot(png)
    cx, above = c["x"] + c["w"] / 2, (c["y"] + top) / 2
    assert near(gtk.pixel(png, cx, above), ACCENT), f"above the edge at the center: {gtk.pixel(png, cx, above)}"
    assert not near(gtk.pixel(png, 20, above), ACCENT), "the accent colour is not only the button's"
    # A click there, above the bar's top edge, is judged by the daemon: the center's action.
    before = daemon_state(rig)["seq"]
    with tabbard.Client(rig.sock) as watch:
        events = watch.events(["action"], timeout=WAIT)
        gtk.click(cx, c["y"] + 6 * rep["scale"])
        method, params = next(events)
    assert (method, params["tab"], params["action"]) == ("action.triggered", "post", "compose")
    assert params["seq"] > before
    gtk.painted(lambda p: p["active_action"] == "post", "the active action painted")
    with tabbard.Client(rig.sock) as c2:
        c2.finish_action("post")


def check_action_and_morph_items(rig, gtk, ctx):
    seq = configure(rig, "two-tabs-three-actions")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "two-tabs-three-actions painted")
    gtk.click_item("photo")
    gtk.painted(lambda p: p["active_action"] == "photo", "the photo action active")
    st = daemon_state(rig)["state"]
    assert st["active_action"] == "photo" and st["selected"] == "library"  # an operation button selects nothing
    seq = configure(rig, "morphing-first-tab")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "morphing-first-tab painted")
    rep = gtk.painted(lambda p: gtk.item("feed", p)["title"] == "Refresh", "the first tab morphed")
    with tabbard.Client(rig.sock) as watch:
        events = watch.events(["tab"], timeout=WAIT)
        gtk.click_item("feed")
        method, params = next_of(events, ("tab.selected", "tab.reselected"))
    assert (method, params["tab"]) == ("tab.reselected", "feed"), (method, params)
    gtk.click_item("inbox")
    rep = gtk.painted(lambda p: p["selected"] == "inbox", "inbox selected")
    assert gtk.item("feed", rep)["title"] == "Feed" and gtk.item("feed", rep)["icon"] == "house"


def check_cues_play(rig, gtk, ctx):
    """animation.cue drives the drawing: a bounce grows the tapped item and settles back; the
    selection indicator of a sliding bar ends under the new tab."""
    seq = configure(rig, "animated-with-sound")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq and not p["animating"], "animated-with-sound settled")
    gtk.click_item("search")
    gtk.wait(lambda p: p["selected"] == "search" and gtk.item("search", p)["scale"] > 1.1, "the bounce growing the tab")
    gtk.wait(lambda p: not p["animating"] and gtk.item("search", p)["scale"] == 1, "the bounce settled")


def check_badges(rig, gtk, ctx):
    seq = configure(rig, "center-plus")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "center-plus painted")
    with tabbard.Client(rig.sock) as c:
        c.configure(settings={"max_count": 99, "max_chars": 16})  # an earlier example set 9 and 4
        c.set_badge("chat", 120)
        c.set_badge("me", dot=True)
        r = c.set_badge("nearby", text="new")
    rep = gtk.painted(lambda p: p["seq"] == r["seq"], "the badges painted")
    got = [gtk.item(t, rep)["badge"] for t in ("chat", "me", "nearby", "home")]
    assert got == ["99+", "", "new", None], got
    gtk.painted(lambda p: p["seq"] == r["seq"] and not p["animating"], "the badges' cues played out")
    png = os.path.join(ctx.get("screenshots") or rig.tmp, "gtk-badges.png")
    gtk.screenshot(png)
    s = rep["scale"]
    for tab, dx, dy in (("chat", 8.5, 12), ("me", 13, 11)):  # the pill's left end; the dot's centre
        i = gtk.item(tab, rep)
        x, y = i["x"] + i["w"] / 2 + dx * s, i["y"] + dy * s
        assert near(gtk.pixel(png, x, y), BADGE_RED), (tab, gtk.pixel(png, x, y))
    with tabbard.Client(rig.sock) as c:
        for t in ("chat", "me", "nearby"):
            r = c.clear_badge(t)
    gtk.painted(lambda p: p["seq"] == r["seq"] and all(i["badge"] is None for i in p["items"]), "badges cleared")


def check_hide_and_show(rig, gtk, ctx):
    configure(rig, "hide-on-push")
    with tabbard.Client(rig.sock) as c:  # a slow slide, so that a loaded machine paints it mid-way
        seq = c.configure(settings={"hide_duration_ms": 1500})["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "hide-on-push painted")
    height = daemon_state(rig)["state"]["layout"]["height"]
    with tabbard.Client(rig.sock) as c:
        c.nav_push(hides_bar=True)
    gtk.wait(lambda p: p.get("phase") == "hiding" and 0 < p["translation"] < height, "the bar sliding away")
    rep = gtk.wait(lambda p: p.get("phase") == "idle" and p.get("hidden"), "the bar hidden")
    assert rep["items"] == [], "a hidden bar is not drawn"
    if ctx.get("screenshots"):
        gtk.screenshot(os.path.join(ctx["screenshots"], "gtk-hidden.png"))
    gtk.click(200, rep["bar_top"] + 20)  # where the bar was: nothing is hit while it is hidden
    with tabbard.Client(rig.sock) as c:
        assert c.state_get()["state"]["selected"] == "list"
        c.nav_pop()
    gtk.wait(lambda p: p.get("phase") == "showing" and 0 < p["translation"] < height, "the bar sliding back")
    rep = gtk.wait(lambda p: p.get("phase") == "idle" and not p.get("hidden"), "the bar shown")
    assert rep["translation"] == 0 and len(rep["items"]) == 3


def check_scroll_hides(rig, gtk, ctx):
    seq = configure(rig, "hide-on-push")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq and p.get("phase") == "idle", "hide-on-push painted")
    gtk.scroll_down(3)  # 3 wheel steps = 120 points of content: more than the bar's scroll_threshold
    gtk.wait(lambda p: p.get("hidden") is True, "the bar hidden by scrolling")
    st = daemon_state(rig)["state"]
    assert "scroll" in st["visibility"]["reasons"], st["visibility"]
    with tabbard.Client(rig.sock) as c:
        c.select("map", source="program")  # selecting withdraws the scroll reason
    gtk.wait(lambda p: p.get("phase") == "idle" and p.get("hidden") is False, "the bar back")


def check_keyboard(rig, gtk, ctx):
    seq = configure(rig, "center-plus")["seq"]
    with tabbard.Client(rig.sock) as c:
        seq = c.select("home")["seq"]
    rep = gtk.painted(lambda p: p.get("seq") >= seq and p["selected"] == "home", "home selected")
    gtk.click(rep["view"][0] + 200, rep["view"][1] + 60)  # the content: the view takes the focus
    gtk.key("Right")
    gtk.painted(lambda p: p["focus"] == "nearby", "the focus on nearby")
    gtk.key("Return")
    gtk.painted(lambda p: p["selected"] == "nearby", "nearby selected from the keyboard")
    gtk.key("Right")
    gtk.key("space")  # the center: its action
    gtk.painted(lambda p: p["active_action"] == "post", "the center's action from the keyboard")
    gtk.key("End")
    gtk.painted(lambda p: p["focus"] == "me", "the focus on the last item")
    with tabbard.Client(rig.sock) as c:
        c.finish_action("post")


def check_follows_the_daemon_only(rig, gtk, ctx):
    seq = configure(rig, "center-plus")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "center-plus painted")
    with tabbard.Client(rig.sock) as c:
        c.select("home")
    gtk.painted(lambda p: p["selected"] == "home", "home selected")
    rig.stop_daemon()
    gtk.wait(lambda p: p.get("status") == "connecting", "the window to notice the daemon stopped")
    gtk.click_item("me")  # nobody judges this press: the window must not select anything itself
    gtk.wait(lambda p: p.get("dropped") == "touch", "the press's down dropped")
    gtk.wait(lambda p: p.get("dropped") == "touch", "the press's up dropped")
    rig.start_daemon()
    rep = gtk.wait(lambda p: p.get("status") == "open" and "items" in p, "the window reconnected")
    assert rep["selected"] == "home", "the window changed its own state"
    gtk.click_item("me")
    gtk.painted(lambda p: p["selected"] == "me", "me selected after the reconnect")
    assert daemon_state(rig)["state"]["selected"] == "me"


def check_two_front_ends(rig, gtk, ctx):
    seq = configure(rig, "center-plus")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "center-plus painted")
    page = ctx["page"]
    page.wait_for_selector('[data-tab="home"]', state="attached", timeout=WAIT_MS)
    with tabbard.Client(rig.sock) as c:
        c.select("home")
    page.wait_for_selector('[data-tab="home"][aria-selected="true"]', state="attached", timeout=WAIT_MS)
    # A tap in the GTK window shows in the page…
    gtk.click_item("chat")
    page.wait_for_selector('[data-tab="chat"][aria-selected="true"]', state="attached", timeout=WAIT_MS)
    # …and a tap in the page shows in the window, painted from that one event.
    with tabbard.Client(rig.sock) as watch:
        events = watch.events(["tab"], timeout=WAIT)
        page.click('[data-tab="me"]')
        method, params = next_of(events, ("tab.selected", "tab.reselected"))
    assert (method, params["tab"]) == ("tab.selected", "me")
    rep = gtk.painted(lambda p: p["selected"] == "me", "the page's tap painted in the window")
    assert rep["seq"] >= params["seq"]
    # A badge set from the window's own control row (a GTK button) shows in the page.
    with tabbard.Client(rig.sock) as c:
        c.set_badge("nearby", 120)
    page.wait_for_selector('[data-tab="nearby"] [data-badge]', state="attached", timeout=WAIT_MS)
    gtk.painted(lambda p: gtk.item("nearby", p)["badge"] == "99+", "the badge in the window")
    with tabbard.Client(rig.sock) as c:
        c.clear_badge("nearby")


def measure(rig, gtk, page, n):
    """A tap in the page → the GTK window's paint of it: the window's event arrival (its reader
    thread got the line) → its draw of that state, and the tap's tab.selected → paint."""
    seq = configure(rig, "center-plus")["seq"]
    gtk.painted(lambda p: p.get("seq") == seq, "center-plus painted")
    arrive_to_paint = []
    for k in range(n):
        tab = ("chat", "me")[k % 2]
        page.click(f'[data-tab="{tab}"]')
        rep = gtk.wait(lambda p: p.get("selected") == tab and "arrived_ms" in p, f"{tab} painted")
        arrive_to_paint.append(rep["painted_ms"] - rep["arrived_ms"])
    q = statistics.quantiles(arrive_to_paint, n=100)
    print(f"event arrival → painted in the GTK window, {n} taps in the page: median {statistics.median(arrive_to_paint):.2f} ms, "
          f"p90 {q[89]:.2f} ms, max {max(arrive_to_paint):.2f} ms; "
          f"{100 * sum(1 for v in arrive_to_paint if v <= 1000 / 60) / n:.0f} % within one frame at 60 Hz (16.67 ms)")


CHECKS = [check_every_example, check_click_tab, check_center_protrudes_and_is_hit_above_the_bar,
          check_action_and_morph_items, check_cues_play, check_badges, check_hide_and_show, check_scroll_hides, check_keyboard,
          check_follows_the_daemon_only, check_two_front_ends]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--screenshots")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--measure", type=int, default=0, help="only measure N taps (a figure, not a test)")
    ap.add_argument("--only", help="run only the checks whose names contain this")
    args = ap.parse_args()
    for tool in ("xdotool", "import", "convert"):
        if not shutil.which(tool):
            print(f"FAIL {tool} is missing (make gtk-deps)")
            return 1
    rig = Rig(args)
    passed = failed = 0
    gtk = None
    try:
        rig.start_daemon()
        rig.start_web()
        gtk = Gtk(rig, args.root)
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = open_page(browser, rig)
            if args.measure:
                measure(rig, gtk, page, args.measure)
                return 0
            ctx = {"screenshots": args.screenshots, "page": page}
            for check in CHECKS:
                if args.only and args.only not in check.__name__:
                    continue
                name = check.__name__[len("check_"):].replace("_", " ")
                try:
                    check(rig, gtk, ctx)
                    print("ok  ", name)
                    passed += 1
                except Exception:
                    print("FAIL", name)
                    traceback.print_exc()
                    failed += 1
                    try:
                        with open(os.path.join(rig.tmp, "gtk.log")) as f:
                            print("  gtk log tail:", f.read()[-800:])
                    except OSError:
                        pass
            browser.close()
    finally:
        if gtk:
            gtk.close()
        rig.close()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
