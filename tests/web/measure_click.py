#!/usr/bin/env python3
"""Click → selected look painted, in headless Chromium (docs/PERFORMANCE.md).

Starts a daemon (null audio) on a temporary socket and tabbard-web on an ephemeral
port, opens the page, and clicks N times, alternating between two tabs. The
benchmark's own instrumentation (tests/web/instrument.js, loaded into the page by
this script only) records, per click that selected a tab, performance.now() minus
the pointerup event's timeStamp when the tab.selected frame is read, when the
state that shows it is drawn, and at the requestAnimationFrame callback after it
(the frame that paints it): input → touch request + state.get → the event and the
state over the WebSocket bridge → render → paint.
Then, for the breakdown, 200 `ping` and 200 `tab.select` round trips from the page.

Usage: measure_click.py --bin DIR --sounds DIR --root REPO [--clicks N]
"""
import argparse
import statistics
import sys
import os

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import Rig, open_page, WAIT_MS  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--clicks", type=int, default=400)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    args.keep = False
    args.screenshots = None
    rig = Rig(args)
    try:
        rig.start_daemon()
        rig.start_web()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = open_page(browser, rig)
            page.add_script_tag(path=os.path.join(HERE, "instrument.js"))
            page.wait_for_function("!!window.tabbardLatency", timeout=WAIT_MS)
            centers = {}
            for tab in ("nearby", "chat"):
                r = page.eval_on_selector(f'[data-tab="{tab}"]', "e => { const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] }")
                centers[tab] = r
            for i in range(args.clicks + 20):  # the first 20 warm up
                tab = ("nearby", "chat")[i % 2]
                n = page.evaluate("window.tabbardLatency.painted.length")
                page.mouse.click(*centers[tab])
                page.wait_for_function(f"window.tabbardLatency.painted.length > {n}", timeout=WAIT_MS)
            rtt = page.evaluate("""async () => {
                const c = window.tabbard.client, out = {ping: [], select: []};
                for (let i = 0; i < 200; i++) {
                    let t = performance.now(); await c.request("ping"); out.ping.push(performance.now() - t);
                    t = performance.now(); await c.request("tab.select", {tab: i % 2 ? "chat" : "me"}); out.select.push(performance.now() - t);
                }
                return out; }""")
            got = page.evaluate("window.tabbardLatency")
            samples, events, states = got["painted"][20:], got["event"][20:], got["state"][20:]
            browser.close()
    finally:
        rig.close()
    print(f"click → selected look painted, {len(samples)} clicks: p50 {pct(samples, 50):.1f} ms, "
          f"p90 {pct(samples, 90):.1f} ms, p99 {pct(samples, 99):.1f} ms, max {max(samples):.1f} ms, "
          f"mean {statistics.mean(samples):.1f} ms")
    print(f"click → tab.selected read by the page (part of it), {len(events)} clicks: p50 {pct(events, 50):.1f} ms, "
          f"p99 {pct(events, 99):.1f} ms")
    print(f"click → the state that shows it drawn (part of it), {len(states)} clicks: p50 {pct(states, 50):.1f} ms, "
          f"p99 {pct(states, 99):.1f} ms")
    for name, v in rtt.items():
        print(f"request → reply in the page, {name}, {len(v)}: p50 {pct(v, 50):.1f} ms, p99 {pct(v, 99):.1f} ms")


if __name__ == "__main__":
    main()
