#!/usr/bin/env python3
"""The web front end in a real browser: Debian's headless Chromium driven by
Playwright, against a daemon on a temporary socket and its tabbard-web bridge on
an ephemeral port. Every check drives the page only through the DOM contract of
docs/WEB.md and reads the daemon with tabbarctl. Waits are for conditions, never
fixed sleeps. Saves a screenshot of every example bar (--screenshots DIR).

Usage: test_web.py --bin DIR --sounds DIR --root REPO [--screenshots DIR]
Prints `ok …`/`FAIL …` per check and a closing `N passed, N failed`.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import sync_playwright

from rig import WAIT_MS, Lines, Rig, deadline_loop, free_port, open_page

HERE = os.path.dirname(os.path.abspath(__file__))


# MARK: page helpers (the DOM contract only)

def selected_is(page, tab):
    page.wait_for_selector(f'[data-tab="{tab}"][aria-selected="true"]', state="attached", timeout=WAIT_MS)


def bar_is(page, hidden, phase):
    page.wait_for_selector(f'.bar[data-hidden="{str(hidden).lower()}"][data-phase="{phase}"]', state="attached", timeout=WAIT_MS)


def page_items(page):
    """The page's items as a person sees them, left to right (the tabs are in their tablist, the
    center and action buttons beside it)."""
    return page.eval_on_selector_all(
        "[data-tab]", "els => els.map(e => [e.getBoundingClientRect().left, e.dataset.tab, e.querySelector('.title').textContent])"
        ".sort((a, b) => a[0] - b[0]).map(x => x.slice(1))")


def settled(page):
    """No animation running on the bar and the bar idle."""
    page.wait_for_function(
        "document.querySelector('.bar').dataset.phase === 'idle' && "
        "document.querySelector('.bar').getAnimations({subtree: true}).length === 0", timeout=WAIT_MS)


# MARK: the checks

def check_items(rig, page, ctx):
    want = [[i["id"], i["presentation"]["title"]] for i in sorted(rig.state_now()["items"], key=lambda i: i["frame"]["x"])]
    assert page_items(page) == want, f"page {page_items(page)} != daemon {want}"


def check_click_selects(rig, page, ctx):
    page.click('[data-tab="chat"]')
    for _ in deadline_loop(WAIT_MS / 1000, "the daemon to select chat"):
        if rig.state_now()["selected"] == "chat":
            break
    selected_is(page, "chat")
    assert page.get_attribute('[data-tab="home"]', "aria-selected") == "false"


def check_badge(rig, page, ctx):
    subprocess.run([rig.ctl, "--socket", rig.sock, "badge", "chat", "120"], check=True, capture_output=True)
    page.wait_for_function(
        "document.querySelector('[data-tab=\"chat\"] [data-badge]')?.textContent === '99+'", timeout=WAIT_MS)
    subprocess.run([rig.ctl, "--socket", rig.sock, "badge", "me", "--dot"], check=True, capture_output=True)
    page.wait_for_selector('[data-tab="me"] [data-badge].dot', timeout=WAIT_MS)
    assert page.text_content('[data-tab="me"] [data-badge]') == ""


def check_raised_button(rig, page, ctx):
    bar_top = page.eval_on_selector(".bar-bg", "e => e.getBoundingClientRect().top")
    box = page.eval_on_selector('[data-tab="post"]', "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width] }")
    x, y = box[0] + box[2] / 2, box[1] + 6  # near the top of the circle, well above the bar
    assert y < bar_top - 5, f"the point {y} is not above the bar's top edge {bar_top}"
    page.mouse.click(x, y)
    rig.events.wait(lambda l: '"action.triggered"' in l and '"post"' in l, "action.triggered for post")
    page.wait_for_selector('[data-tab="post"].active', timeout=WAIT_MS)


def check_push_pop(rig, page, ctx):
    subprocess.run([rig.ctl, "--socket", rig.sock, "push", "--hides-bar"], check=True, capture_output=True)
    bar_is(page, True, "hiding")
    bar_is(page, True, "idle")
    screen_bottom = page.eval_on_selector("#screen", "e => e.getBoundingClientRect().bottom")
    bar_top = page.eval_on_selector(".bar-bg", "e => e.getBoundingClientRect().top")
    assert bar_top >= screen_bottom - 1, f"hidden bar's top {bar_top} is still on screen (bottom {screen_bottom})"
    subprocess.run([rig.ctl, "--socket", rig.sock, "pop"], check=True, capture_output=True)
    bar_is(page, False, "showing")
    bar_is(page, False, "idle")
    settled(page)
    bar_top = page.eval_on_selector(".bar-bg", "e => e.getBoundingClientRect().top")
    assert bar_top < screen_bottom - 20, f"shown bar's top {bar_top} is not on screen (bottom {screen_bottom})"


def check_keyboard(rig, page, ctx):
    selected = rig.state_now()["selected"]
    page.focus(f'[data-tab="{selected}"]')
    assert page.evaluate("document.activeElement.getAttribute('role')") == "tab"
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.dataset.tab")
    page.keyboard.press("Enter")
    for _ in deadline_loop(WAIT_MS / 1000, f"the daemon to select {focused}"):
        if rig.state_now()["selected"] == focused:
            break
    selected_is(page, focused)
    # The center is a button beside the tablist (a tablist owns only tabs), a tab stop of its own.
    assert page.get_attribute('[data-tab="post"]', "role") == "button"
    assert page.eval_on_selector('[data-tab="post"]', "e => !e.closest('[role=tablist]')")
    assert page.eval_on_selector_all('[role="tablist"] > *', "els => els.every(e => e.getAttribute('role') === 'tab')")


def check_second_page(rig, page, ctx):
    other = open_page(ctx["browser"], rig)
    ctx["second"] = other
    page.click('[data-tab="nearby"]')
    selected_is(other, "nearby")
    subprocess.run([rig.ctl, "--socket", rig.sock, "badge", "nearby", "7"], check=True, capture_output=True)
    for p in (page, other):
        p.wait_for_function(
            "document.querySelector('[data-tab=\"nearby\"] [data-badge]')?.textContent === '7'", timeout=WAIT_MS)


def check_restart(rig, page, ctx):
    before = page.evaluate("window.tabbard.client.reconnects")
    rig.stop_daemon()
    page.wait_for_function("document.body.dataset.connection !== 'open'", timeout=WAIT_MS)
    # At least two attempts while the daemon is down (the bridge answers, the daemon does not): it keeps trying.
    page.wait_for_function(f"window.tabbard.client.reconnects >= {before + 2}", timeout=WAIT_MS)
    rig.start_daemon()
    page.wait_for_function(f"document.body.dataset.connection === 'open' && window.tabbard.client.reconnects > {before}",
                           timeout=WAIT_MS)
    selected_is(page, "nearby")  # the restored selection
    assert page.text_content('[data-tab="chat"] [data-badge]') == "99+"
    rig.start_monitor()
    subprocess.run([rig.ctl, "--socket", rig.sock, "select", "me"], check=True, capture_output=True)
    selected_is(page, "me")  # subscribed again: it follows new changes
    selected_is(ctx["second"], "me")


def check_refused(rig, page, ctx):
    client = os.path.join(rig.tmp, "wsclient.py")
    shutil.copy(os.path.join(HERE, "wsclient.py"), client)
    os.chmod(client, 0o644)
    os.chmod(rig.tmp, 0o711)  # nobody may run the copied client, not list or read the rest
    ws = f"ws://127.0.0.1:{rig.port}/bridge"
    origin = f"http://127.0.0.1:{rig.port}"
    ping = '{"id":1,"method":"ping"}'

    def run(as_nobody, url, org=origin):
        cmd = ["/usr/bin/python3", client, url, org, ping]
        if as_nobody:
            cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + cmd
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)

    mine = run(False, f"{ws}?token={rig.token}")
    assert '"method":"hello"' in mine.stdout and '"id":1,"result"' in mine.stdout, mine.stdout
    # The token file: the daemon owner's alone.
    token_files = [os.path.join(d, f) for d, _, fs in os.walk(rig.runtime) for f in fs if f == "token"]
    assert token_files and all(os.stat(f).st_mode & 0o077 == 0 for f in token_files), token_files
    wrong_origin = run(False, f"{ws}?token={rig.token}", "http://evil.example")
    assert wrong_origin.stdout.startswith("HTTP 403"), wrong_origin.stdout
    if os.geteuid() != 0:
        print("  SKIP the other-user part: it needs root to run a client as nobody")
        return
    read = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "cat", token_files[0]],
                          capture_output=True, text=True)
    assert read.returncode != 0, "nobody could read the token file"
    for url in (ws, f"{ws}?token=guess", f"{ws}?token={rig.token}"):  # the last: even with a leaked token
        r = run(True, url)
        assert "permission_denied" in r.stdout and '"hello"' not in r.stdout, (url, r.stdout, r.stderr)


def check_looks(rig, page, ctx):
    """Highlighted while a finger is down, disabled items, the slide style's indicator."""
    ctl = lambda *w: subprocess.run([rig.ctl, "--socket", rig.sock, *w], check=True, capture_output=True)
    chat = next(i for i in rig.state_now()["items"] if i["id"] == "chat")["frame"]
    ctl("touch", "down", str(chat["x"] + 10), "20", "--id", "4242")
    page.wait_for_selector('[data-tab="chat"][data-highlighted="true"]', state="attached", timeout=WAIT_MS)
    ctl("touch", "cancel", str(chat["x"] + 10), "20", "--id", "4242")
    page.wait_for_selector('[data-tab="chat"][data-highlighted="false"]', state="attached", timeout=WAIT_MS)
    ctl("call", "bar.configure", json.dumps({
        "items": [{"id": "a", "title": "A"}, {"id": "b", "title": "B", "enabled": False}, {"id": "c", "title": "C"}],
        "selected": "a", "settings": {"animation": "slide"}}))
    page.wait_for_selector('[data-tab="b"][aria-disabled]', state="attached", timeout=WAIT_MS)
    page.focus('[data-tab="a"]')
    page.keyboard.press("ArrowRight")  # the disabled b is skipped
    assert page.evaluate("document.activeElement.dataset.tab") == "c"
    page.evaluate("window.tabbard.view.played = []")
    page.keyboard.press("Enter")
    selected_is(page, "c")
    wait_played(page, tab="c", trigger="select", target="indicator", property="position.x")
    settled(page)
    box = page.eval_on_selector(".indicator", "e => { const r = e.getBoundingClientRect(); return r.left + r.width / 2 }")
    c = page.eval_on_selector('[data-tab="c"]', "e => { const r = e.getBoundingClientRect(); return r.left + r.width / 2 }")
    assert abs(box - c) < 2, f"the indicator's centre {box} is not under c's {c}"


def check_styles(rig, page, ctx):
    """Each example through the style switcher; a screenshot of each bar."""
    names = sorted(f[:-5] for f in os.listdir(os.path.join(rig.args.root, "examples")) if f.endswith(".json"))
    phone = phone_page(rig, ctx)  # the screenshots: a phone, 390×844
    for name in names:
        example = json.load(open(os.path.join(rig.args.root, "examples", f"{name}.json")))
        page.click(f'#styles button[data-style="{name}"]')
        ids = [i["id"] for i in example["items"]]
        same_items(page, ids)
        selected_is(page, example["selected"])
        assert rig.state_now()["items"][0]["id"] == ids[0]
        if name == "morphing-first-tab":
            assert page.text_content(f'[data-tab="{ids[0]}"] .title') == "Refresh"
        if name == "center-plus":
            page.click("#badge-count")
            page.click("#badge-dot")
            page.wait_for_selector('[data-tab="nearby"] [data-badge]', timeout=WAIT_MS)
            page.wait_for_selector('[data-tab="me"] [data-badge].dot', timeout=WAIT_MS)
        settled(page)
        if rig.args.screenshots:
            same_items(phone, ids)
            if name == "center-plus":
                phone.wait_for_selector('[data-tab="me"] [data-badge].dot', timeout=WAIT_MS)
            settled(phone)
            shoot_phone(phone, os.path.join(rig.args.screenshots, f"{name}.png"))
        page.evaluate("window.tabbard.view.played = []")
        if name == "hide-on-push":
            page.click("#push")
            bar_is(page, True, "idle")
            assert played(page, target="bar", property="translation.y"), page.evaluate("window.tabbard.view.played")
            page.click("#back")
            bar_is(page, False, "idle")
            page.eval_on_selector("#content", "e => e.scrollBy(0, 400)")
            bar_is(page, True, "idle")
            rig.events.wait(lambda l: '"bar.visibility"' in l and '"scroll"' in l, "a bar.visibility with the scroll reason")
            page.eval_on_selector("#content", "e => e.scrollBy(0, -200)")
            bar_is(page, False, "idle")
        if name == "crossfade":
            page.click(f'[data-tab="{ids[1]}"]')
            selected_is(page, ids[1])
            wait_played(page, tab=ids[1], trigger="select", target="icon", property="bounds.size")
            wait_played(page, tab=ids[0], trigger="deselect", target="icon", property="bounds.size")
        if name == "animated-with-sound":
            page.click('[data-tab="search"]')
            selected_is(page, "search")
            wait_played(page, tab="search", trigger="select", target="item", property="transform.scale", keyframes=7)
            wait_played(page, tab="home", trigger="deselect", target="item", property="transform.scale", keyframes=7)
            subprocess.run([rig.ctl, "--socket", rig.sock, "badge", "likes", "3"], check=True, capture_output=True)
            wait_played(page, tab="likes", trigger="badge", target="badge", property="transform.scale", keyframes=2)


def played(page, **want):
    return any(all(c.get(k) == v for k, v in want.items()) for c in page.evaluate("window.tabbard.view.played"))


def wait_played(page, **want):
    """Waits until the page has played a cue with these members (an Element.animate() call)."""
    page.wait_for_function(
        "want => window.tabbard.view.played.some(c => Object.entries(want).every(([k, v]) => c[k] === v))",
        arg=want, timeout=WAIT_MS)


# MARK: a phone, real content, accessibility, one instance (docs/WEB.md)

PHONE = {"width": 390, "height": 844}
WIDTHS = (320, 390, 1280)
WEB = lambda rig: os.path.join(rig.args.root, "web", "tabbard-web")


def ctl(rig, *words):
    return subprocess.run([rig.ctl, "--socket", rig.sock, *words], check=True, capture_output=True, text=True).stdout


def configure(rig, params):
    ctl(rig, "call", "bar.configure", json.dumps(params))


def same_items(page, ids):
    page.wait_for_function(
        "ids => JSON.stringify([...document.querySelectorAll('[data-tab]')].map(e => e.dataset.tab).sort()) === JSON.stringify([...ids].sort())",
        arg=ids, timeout=WAIT_MS)


def phone_page(rig, ctx, width=PHONE["width"], height=PHONE["height"], **options):
    return open_page(ctx["browser"], rig, viewport={"width": width, "height": height}, has_touch=True, **options)


# Boxes as a person sees them: every item, title and badge inside the device screen and the
# viewport, every title and badge inside its item and on one line.
LAYOUT_JS = """() => {
  const out = [];
  const inside = (r, o) => r.left >= o.left - 0.5 && r.right <= o.right + 0.5 && r.top >= o.top - 0.5 && r.bottom <= o.bottom + 0.5;
  const screen = document.querySelector('#screen').getBoundingClientRect();
  const lines = (e) => { const r = document.createRange(); r.selectNodeContents(e);
                         return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; };
  const view = {left: 0, top: 0, right: document.documentElement.clientWidth, bottom: 1e9};
  for (const item of document.querySelectorAll('[data-tab]')) {
    const id = item.dataset.tab, r = item.getBoundingClientRect();
    if (!inside(r, screen) || !inside(r, view)) out.push(`${id}: the item leaves the screen`);
    const t = item.querySelector('.title');
    if (!item.classList.contains('kind-center')) {
      if (!inside(t.getBoundingClientRect(), r)) out.push(`${id}: its title leaves the item`);
      if (lines(t) > 1) out.push(`${id}: its title wraps`);
    }
    const b = item.querySelector('[data-badge]');
    if (b) {
      const br = b.getBoundingClientRect();
      if (!inside(br, r)) out.push(`${id}: its badge "${b.textContent}" (${br.left.toFixed(1)}…${br.right.toFixed(1)}) leaves the item (${r.left.toFixed(1)}…${r.right.toFixed(1)})`);
      if (lines(b) > 1 || b.offsetHeight > 18) out.push(`${id}: its badge "${b.textContent}" wraps`);
    }
  }
  return out;
}"""


def layout_ok(page, what):
    settled(page)  # boxes at rest, not mid-cue
    problems = page.evaluate(LAYOUT_JS)
    assert not problems, f"{what} at {page.viewport_size['width']} px: {problems}"


# Draws each character alone on a canvas in the titles' font: two different characters drawn
# alike are the missing-glyph box (what a person sees as an empty box).
GLYPHS_JS = """(text) => {
  const font = getComputedStyle(document.querySelector('.item .title')).fontFamily;
  const c = document.createElement('canvas'); c.width = 48; c.height = 48;
  const g = c.getContext('2d', {willReadFrequently: true});
  const seen = new Map(), same = [];
  for (const ch of new Set([...text].filter(ch => ch.trim()))) {
    g.clearRect(0, 0, 48, 48); g.font = `32px ${font}`; g.fillText(ch, 4, 38);
    const key = g.getImageData(0, 0, 48, 48).data.join();
    if (seen.has(key)) same.push(seen.get(key) + ch); else seen.set(key, ch);
  }
  return same;
}"""


def glyphs_drawn(page, text):
    # The method itself: two private-use characters no font has are drawn alike.
    assert page.evaluate(GLYPHS_JS, "\ue000\ue001"), "the missing-glyph check cannot tell a missing glyph"
    same = page.evaluate(GLYPHS_JS, text)
    assert not same, f"characters drawn as the same (missing) glyph: {same}"


def badge_shows(page, tab, display):
    try:
        page.wait_for_function(
            "([tab, d]) => document.querySelector(`[data-tab='${tab}'] [data-badge]`)?.textContent === d",
            arg=[tab, display], timeout=WAIT_MS)
    except Exception:
        shown = page.evaluate("[...document.querySelectorAll('[data-badge]')].map(e => e.closest('[data-tab]').dataset.tab + ': ' + e.textContent)")
        raise AssertionError(f"{tab}'s badge is not {display!r} on the page; it shows {shown}")


def check_builtin_phone(rig, page, ctx):
    """The built-in bar on a phone: its titles drawn, everything inside, a screenshot."""
    ctx["seeds"] = rig.state_now()
    phone = phone_page(rig, ctx)
    try:
        titles = "".join(i["presentation"]["title"] for i in ctx["seeds"]["items"])
        glyphs_drawn(phone, titles)
        layout_ok(phone, "the seeds")
        settled(phone)
        if rig.args.screenshots:
            shoot_phone(phone, os.path.join(rig.args.screenshots, "built-in.png"))
    finally:
        phone.close()


def axe_serious(page):
    results = Axe().run(page)
    bad = [v for v in results.response["violations"] if v["impact"] in ("critical", "serious")]
    return [f"{v['impact']} {v['id']}: " + "; ".join(
        n["target"][0] + " " + n.get("failureSummary", "").replace("\n", " ")[:160] for n in v["nodes"][:4]) for v in bad]


def seeds_params(state):
    keys = ("id", "title", "kind", "icon", "selected_icon", "action", "morph", "enabled", "sound", "animation")
    items = [{k: i[k] for k in keys if i.get(k) is not None} for i in state["items"]]
    layout = {k: v for k, v in state["layout"].items() if k != "rtl" or v}
    return {"items": items, "selected": state["selected"], "layout": layout}


def bars(rig, ctx):
    """(name, bar.configure params) of the seeds and every example."""
    out = [("seeds", seeds_params(ctx["seeds"]))]
    for name in sorted(f[:-5] for f in os.listdir(os.path.join(rig.args.root, "examples")) if f.endswith(".json")):
        out.append((name, json.load(open(os.path.join(rig.args.root, "examples", f"{name}.json")))))
    return out


def check_axe(rig, page, ctx):
    """axe-core on every bar (a count and a dot badge on it), light and dark: no critical or serious."""
    problems = []
    pages = {scheme: phone_page(rig, ctx, color_scheme=scheme) for scheme in ("light", "dark")}
    try:
        for name, params in bars(rig, ctx):
            # Each bar as it is on its own: a layout member an earlier bar set is not carried over.
            params.setdefault("layout", {}).setdefault("safe_bottom", 0)
            configure(rig, params)
            tabs = [i["id"] for i in rig.state_now()["items"] if i["kind"] == "tab"]
            ctl(rig, "badge", tabs[-2], "3")
            ctl(rig, "badge", tabs[-1], "--dot")
            for scheme, p in pages.items():
                same_items(p, [i["id"] for i in params["items"]])
                badge_shows(p, tabs[-2], "3")
                badge_shows(p, tabs[-1], "")
                settled(p)
                problems += [f"{name}, {scheme}: {v}" for v in axe_serious(p)]
                small = p.eval_on_selector_all("[data-tab]", "els => els.map(e => [e.dataset.tab, e.getBoundingClientRect()])"
                                               ".filter(([, r]) => r.width < 24 || r.height < 24).map(([t]) => t)")
                problems += [f"{name}, {scheme}: targets under 24×24 CSS px: {small}"] if small else []
    finally:
        for p in pages.values():
            p.close()
    assert not problems, "\n     ".join([""] + problems)


def check_badges_layout(rig, page, ctx):
    """Badges stay on one line inside their item, ellipsised and read in full, at 320/390/1280 px."""
    bar = json.load(open(os.path.join(rig.args.root, "examples", "center-plus.json")))
    bar["settings"].update(BADGE_LIMITS)
    configure(rig, bar)
    pages = [phone_page(rig, ctx, width=w, height=PHONE["height"] if w < 1000 else 800) for w in WIDTHS]
    try:
        for tab, title in (("me", "Me"), ("home", "Home"), ("chat", "Chat")):
            for args, display, label in ((["120"], "99+", f"{title}, 99+ unread"),
                                         (["--text", "3 new messages!!"], "3 new messages!!", f"{title}, 3 new messages!!"),
                                         (["--text", "新消息"], "新消息", f"{title}, 新消息"),
                                         (["--dot"], "", f"{title}, new")):
                ctl(rig, "badge", tab, *args)
                for p in pages:
                    badge_shows(p, tab, display)
                    layout_ok(p, f"badge {args} on {tab}")
                    got = p.get_attribute(f'[data-tab="{tab}"]', "aria-label")
                    assert got == label, f"{tab}'s label is {got!r}, not {label!r}"
            ctl(rig, "badge", tab, "--clear")
        glyphs_drawn(pages[1], "新消息")
    finally:
        for p in pages:
            p.close()


BADGE_LIMITS = {"max_count": 99, "max_chars": 16}  # the defaults (an example may have set others)

TITLES = {
    "cjk": [("home", "首頁"), ("nearby", "附近"), ("chat", "聊天"), ("me", "我的")],
    "rtl": [("home", "الرئيسية"), ("nearby", "بالقرب"), ("chat", "הודעות"), ("me", "אני")],
    "long": [("home", "Home and everything on it"), ("nearby", "Nearby places"), ("chat", "Conversations"),
             ("me", "My account and settings")],
}


def check_titles_layout(rig, page, ctx):
    """CJK, Arabic/Hebrew in a mirrored bar, and long titles: drawn, one line, inside, at 320/390/1280 px."""
    pages = [phone_page(rig, ctx, width=w, height=PHONE["height"] if w < 1000 else 800) for w in WIDTHS]
    try:
        for name, titles in TITLES.items():
            rtl = name == "rtl"
            items = [{"id": i, "title": t, "icon": i} for i, t in titles]
            items.insert(2, {"id": "post", "title": "Post", "kind": "center", "icon": "plus.circle.fill", "action": "compose"})
            configure(rig, {"items": items, "selected": "home", "settings": BADGE_LIMITS,
                            "layout": {"width": 375, "height": 49, "rtl": rtl,
                                       "center": {"width": 70, "height": 70, "raise": 21, "shape": "circle"}}})
            ctl(rig, "badge", "home", "--text", "3 new messages!!")
            ctl(rig, "badge", "me", "120")
            for p in pages:
                page_titles = lambda: p.eval_on_selector_all(".tabs [data-tab] .title", "els => els.map(e => e.textContent)")
                want = [t for _, t in titles]
                for _ in deadline_loop(WAIT_MS / 1000, f"the {name} titles"):
                    if page_titles() == want:
                        break
                badge_shows(p, "me", "99+")
                badge_shows(p, "home", "3 new messages!!")
                layout_ok(p, f"{name} titles")
                if rtl:
                    assert p.get_attribute(".bar", "dir") == "rtl"
                    xs = [p.eval_on_selector(f'[data-tab="{i}"]', "e => e.getBoundingClientRect().left") for i, _ in titles]
                    assert xs == sorted(xs, reverse=True), f"the mirrored bar is not right to left: {xs}"
            glyphs_drawn(pages[1], "".join(t for _, t in titles))
            if name in ("cjk", "rtl") and rig.args.screenshots:
                settled(pages[1])
                shoot_phone(pages[1], os.path.join(rig.args.screenshots, f"{name}-titles.png"))
    finally:
        for p in pages:
            p.close()


def check_reduced_motion(rig, page, ctx):
    """prefers-reduced-motion: a select's bounce is not played, the bar's slide is instant; the daemon's phases unchanged."""
    p = phone_page(rig, ctx, reduced_motion="reduce")
    try:
        configure(rig, json.load(open(os.path.join(rig.args.root, "examples", "animated-with-sound.json"))))
        selected_is(p, "home")
        p.evaluate("window.tabbard.view.played = []")
        ctl(rig, "select", "search")
        selected_is(p, "search")
        wait_played(p, tab="search", trigger="select", target="item", reduced=True)
        running = p.evaluate("document.querySelector('.bar').getAnimations({subtree: true}).filter(a => a.playState === 'running').length")
        assert running == 0, f"{running} animations run with reduced motion"
        configure(rig, json.load(open(os.path.join(rig.args.root, "examples", "hide-on-push.json"))))
        ctl(rig, "push", "--hides-bar")
        bar_is(p, True, "hiding")  # the daemon's phase, as before
        wait_played(p, target="bar", property="translation.y", reduced=True)
        bar_is(p, True, "idle")
        ctl(rig, "pop")
        bar_is(p, False, "idle")
    finally:
        p.close()


def check_sockets(rig, page, ctx):
    """Each place the page can read its WebSocket (docs/WEB.md, "Latency"): a tap selects, and the
    page shows the daemon's state."""
    configure(rig, json.load(open(os.path.join(rig.args.root, "examples", "center-plus.json"))))
    for query in ("&socket=main", "&socket=worker", "&socket=shared&settle=12"):
        p = open_page(ctx["browser"], rig, viewport=PHONE, has_touch=True, query=query)
        try:
            if "shared" in query:
                assert p.evaluate("crossOriginIsolated"), "the page is not cross-origin isolated (COOP/COEP)"
            for tab in ("chat", "nearby"):
                p.tap(f'[data-tab="{tab}"]')
                for _ in deadline_loop(WAIT_MS / 1000, f"the daemon to select {tab} ({query})"):
                    if rig.state_now()["selected"] == tab:
                        break
                selected_is(p, tab)
            ctl(rig, "badge", "me", "5")
            badge_shows(p, "me", "5")
            ctl(rig, "badge", "me", "--clear")
        finally:
            p.close()


def check_click_on(rig, page, ctx):
    """click_on: the seed bar that clicks on press shows it, the page's switch sets it in the daemon,
    and a tap on the page under "press" starts its click with the touch's down."""
    page.click('#styles button[data-style="custom-five-buttons"]')
    page.wait_for_function("document.querySelector('#click-on-press').checked", timeout=WAIT_MS)
    page.uncheck("#click-on-press")
    for _ in deadline_loop(WAIT_MS / 1000, "the daemon's click_on to become commit"):
        if rig.state_now()["settings"]["click_on"] == "commit":
            break
    page.check("#click-on-press")
    for _ in deadline_loop(WAIT_MS / 1000, "the daemon's click_on to become press"):
        if rig.state_now()["settings"]["click_on"] == "press":
            break
    p = open_page(ctx["browser"], rig, viewport=PHONE, has_touch=True)
    try:
        assert p.evaluate("document.querySelector('#click-on-press').checked"), "a second page does not show click_on press"
        seq0 = rig.ctl_json("state")["seq"]

        def event(method, **params):  # an event of this tap (newer than seq0) with these params
            def match(line):
                e = json.loads(line)
                p = e.get("params", {})
                return e.get("method") == method and p.get("seq", -1) > seq0 and all(p.get(k) == v for k, v in params.items())
            return json.loads(rig.events.wait(match, f"{method} {params}"))
        p.tap('[data-tab="two"]')
        begin = event("tab.highlighted", tab="two", phase="begin")
        assert begin["params"].get("sound") == "click", begin
        event("tab.selected", tab="two")
        selected_is(p, "two")
    finally:
        p.close()


def web_children(rig):
    """The tabbarctl pipes running under this rig's websocketd."""
    kids = lambda pid: [int(k) for t in os.listdir(f"/proc/{pid}/task")
                        for k in open(f"/proc/{pid}/task/{t}/children").read().split()]
    out = []
    for k in kids(rig.web.pid):
        try:
            if open(f"/proc/{k}/comm").read().strip() == "websocketd":
                out += kids(k)
        except OSError:
            pass
    return out


def check_close_quiet(rig, page, ctx):
    """Pages that open and close: their bridges end, and websocketd logs no ERROR line."""
    log = os.path.join(rig.tmp, "web.log")
    start = os.path.getsize(log)
    before = len(web_children(rig))
    for _ in range(6):
        p = phone_page(rig, ctx)
        p.close()
    for _ in deadline_loop(WAIT_MS / 1000, "the closed pages' bridges to end"):
        if len(web_children(rig)) <= before:
            break
    with open(log) as f:
        f.seek(start)
        errors = [l for l in f.read().splitlines() if "ERROR" in l or "FATAL" in l]
    assert not errors, errors


def check_one_instance(rig, page, ctx):
    """A second tabbard-web on the busy port: one line, non-zero, the first one untouched."""
    d = os.path.join(rig.runtime, "tabbard")
    urlfile = os.path.join(d, f"web-{rig.port}.url")
    url, listing = open(urlfile).read(), sorted(os.listdir(d))
    r = subprocess.run([WEB(rig), "--socket", rig.sock, "--port", str(rig.port)],
                       capture_output=True, text=True, timeout=60, env=rig.env)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and r.stdout == "", (r.returncode, r.stdout)
    assert len(lines) == 1 and f"port {rig.port}" in lines[0] and "in use by websocketd (pid" in lines[0] \
        and "--port" in lines[0], r.stderr
    assert open(urlfile).read() == url and sorted(os.listdir(d)) == listing, (os.listdir(d), open(urlfile).read())
    p = open_page(ctx["browser"], rig)  # the first one still serves its page with its token
    p.close()


def check_cleanup(rig, page, ctx):
    """tabbard-web leaves nothing behind when stopped (TERM, INT) or when its websocketd dies."""
    d = os.path.join(rig.runtime, "tabbard")
    before = sorted(os.listdir(d))
    for how in ("TERM", "INT", "websocketd"):
        port = free_port()
        # SIGINT as a terminal's Ctrl-C delivers it, even when this test runs with it ignored (a
        # background job): a shell cannot trap a signal that was ignored when it started.
        web = subprocess.Popen([WEB(rig), "--socket", rig.sock, "--port", str(port)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=rig.env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            Lines(web).wait(lambda l: l.startswith("web: "), "the address line", 30)
            assert f"web-{port}.url" in os.listdir(d)
            if how == "websocketd":
                ws = [k for k in open(f"/proc/{web.pid}/task/{web.pid}/children").read().split()
                      if open(f"/proc/{k}/comm").read().strip() == "websocketd"]
                os.kill(int(ws[0]), signal.SIGKILL)
            else:
                web.send_signal(getattr(signal, "SIG" + how))
            web.wait(timeout=30)
        finally:
            if web.poll() is None:
                web.kill()
                web.wait()
        assert sorted(os.listdir(d)) == before, f"after {how}: {sorted(os.listdir(d))} (was {before})"


def shoot_phone(page, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    page.screenshot(path=path, animations="disabled")


CHECKS = [
    ("the built-in bar on a phone: titles drawn (no empty boxes), inside the screen", check_builtin_phone),
    ("the page shows the daemon's items in order, with their titles", check_items),
    ("a click on chat selects it in the daemon and the page shows it", check_click_selects),
    ("tabbarctl badge chat 120 shows 99+; a dot shows as an empty red dot", check_badge),
    ("a click on the raised button above the bar's top edge triggers its action", check_raised_button),
    ("nav.push slides the bar away and nav.pop brings it back", check_push_pop),
    ("keyboard: arrow to the next tab, Enter selects it; the center is a button", check_keyboard),
    ("a second page follows the first", check_second_page),
    ("a daemon restart: the pages reconnect, show the restored state and follow again", check_restart),
    ("another user (and a wrong Origin) is refused", check_refused),
    ("looks: highlighted while down, disabled skipped, the slide indicator follows", check_looks),
    ("the style switcher applies every example (screenshots)", check_styles),
    ("axe: no critical or serious violation on any bar, light and dark; every target ≥ 24×24", check_axe),
    ("badges: one line, inside their item, ellipsised and read in full, at 320/390/1280 px", check_badges_layout),
    ("CJK, Arabic/Hebrew (mirrored) and long titles: drawn, one line, inside, at 320/390/1280 px", check_titles_layout),
    ("reduced motion: cues skipped or instant, the daemon's phases unchanged", check_reduced_motion),
    ("touch taps select with the socket read on the page, in a Worker, and through shared memory", check_sockets),
    ("click_on: the press seed shows it, the page's switch sets it, a tap clicks on its down", check_click_on),
    ("pages that close leave no ERROR line", check_close_quiet),
    ("a second tabbard-web on the busy port: one line, non-zero, the first untouched", check_one_instance),
    ("tabbard-web leaves nothing behind on TERM, INT, or when websocketd dies", check_cleanup),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--screenshots")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", help="run only the checks whose function name contains this (and the first)")
    args = ap.parse_args()
    rig = Rig(args)
    passed = failed = 0
    try:
        rig.start_daemon()
        rig.start_web()
        rig.start_monitor()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = open_page(browser, rig)
            ctx = {"browser": browser}
            for n, (name, check) in enumerate(CHECKS):
                if args.only and n and not any(o in check.__name__ for o in args.only.split(",")):
                    continue
                started = time.monotonic()
                try:
                    check(rig, page, ctx)
                    passed += 1
                    print(f"ok   {name} ({time.monotonic() - started:.1f} s)", flush=True)
                except Exception as e:  # noqa: BLE001 — one check's failure is reported, the rest run
                    failed += 1
                    print(f"FAIL {name}: {e}", flush=True)
                    where = traceback.extract_tb(e.__traceback__)
                    print("     at " + " ← ".join(f"line {f.lineno} ({f.name})" for f in reversed(where) if f.filename == __file__))
            browser.close()
    finally:
        rig.close()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
