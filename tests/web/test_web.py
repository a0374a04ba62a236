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
import subprocess
import sys
import time
import traceback

from playwright.sync_api import sync_playwright

from rig import WAIT_MS, Rig, deadline_loop, open_page

HERE = os.path.dirname(os.path.abspath(__file__))


# MARK: page helpers (the DOM contract only)

def selected_is(page, tab):
    page.wait_for_selector(f'[data-tab="{tab}"][aria-selected="true"]', state="attached", timeout=WAIT_MS)


def bar_is(page, hidden, phase):
    page.wait_for_selector(f'.bar[data-hidden="{str(hidden).lower()}"][data-phase="{phase}"]', state="attached", timeout=WAIT_MS)


def page_items(page):
    return page.eval_on_selector_all(
        "[data-tab]", "els => els.map(e => [e.dataset.tab, e.querySelector('.title').textContent])")


def settled(page):
    """No animation running on the bar and the bar idle."""
    page.wait_for_function(
        "document.querySelector('.bar').dataset.phase === 'idle' && "
        "document.querySelector('.bar').getAnimations({subtree: true}).length === 0", timeout=WAIT_MS)


# MARK: the checks

def check_items(rig, page, ctx):
    want = [[i["id"], i["presentation"]["title"]] for i in rig.state_now()["items"]]
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
    assert page.get_attribute('[data-tab="post"]', "role") == "button"


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
    for name in names:
        example = json.load(open(os.path.join(rig.args.root, "examples", f"{name}.json")))
        page.click(f'#styles button[data-style="{name}"]')
        ids = [i["id"] for i in example["items"]]
        page.wait_for_function(
            f"JSON.stringify([...document.querySelectorAll('[data-tab]')].map(e => e.dataset.tab)) === {json.dumps(json.dumps(ids, separators=(',', ':')))}",
            timeout=WAIT_MS)
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
            shoot(page, os.path.join(rig.args.screenshots, f"{name}.png"))
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


def shoot(page, path):
    box = page.eval_on_selector("#bar-frame", "e => { const r = e.getBoundingClientRect(); "
                                "return [r.left, r.top - parseFloat(e.style.marginTop || 0), r.width, r.height + parseFloat(e.style.marginTop || 0)] }")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    page.screenshot(path=path, clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3]},
                    animations="disabled")


CHECKS = [
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
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--screenshots")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--keep", action="store_true")
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
            for name, check in CHECKS:
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
