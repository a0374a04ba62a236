"""The GTK 4 window: the bar drawn from the daemon's state only, every press sent as `touch`."""
from __future__ import annotations

import json
import math
import os
import queue
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

import tabbard  # noqa: E402

from . import icons  # noqa: E402
from .model import Animator, Geometry, bar_translation  # noqa: E402

RGBA = Tuple[float, float, float, float]


def hex_rgba(h: str, a: float = 1.0) -> RGBA:
    return (int(h[1:3], 16) / 255, int(h[3:5], 16) / 255, int(h[5:7], 16) / 255, a)


BAR_BG = hex_rgba("#f8f8fa")
INK = hex_rgba("#8a8a8e")
ACCENT = hex_rgba("#0a84ff")
ON_ACCENT = hex_rgba("#ffffff")
BADGE = hex_rgba("#ff3b30")
DARK = hex_rgba("#1c1c1e")
SCREEN = hex_rgba("#e9e9ee")
CONTENT_INK = hex_rgba("#555555")


def now_ms() -> float:
    return time.monotonic() * 1000.0


class Link:
    """The daemon connection: a thread reading `events()` (reconnecting, resyncing by seq) that
    hands each event to the GTK main loop, and a thread sending requests in order."""

    def __init__(self, socket_path: str, on_event: Any, on_status: Any) -> None:
        self.socket_path = socket_path
        self.on_event, self.on_status = on_event, on_status
        self.requests: "queue.Queue[Tuple[str, Dict[str, Any]]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True, name="tabbard-events").start()
        threading.Thread(target=self._write, daemon=True, name="tabbard-requests").start()

    def _read(self) -> None:
        delay = 0.25
        while True:
            try:
                client = tabbard.Client(self.socket_path, timeout=10.0)
            except tabbard.PermissionDenied as e:
                GLib.idle_add(self.on_status, "refused", e.message)
                return
            except tabbard.Error as e:
                GLib.idle_add(self.on_status, "connecting", e.message)
                time.sleep(delay)
                delay = min(5.0, delay * 2)
                continue
            delay = 0.25
            events = client.events()
            GLib.idle_add(self.on_event, "state.resync", {"seq": client.seq, "state": client.state}, now_ms())
            GLib.idle_add(self.on_status, "open", "")
            try:
                for method, params in events:
                    if method == "state.resync" and params.get("reconnected"):
                        GLib.idle_add(self.on_status, "open", "")
                    elif method == "server.stopping":
                        GLib.idle_add(self.on_status, "connecting", "the daemon is stopping")
                    GLib.idle_add(self.on_event, method, params, now_ms())
            except tabbard.PermissionDenied as e:
                GLib.idle_add(self.on_status, "refused", e.message)
                return
            except tabbard.Error as e:  # anything else: connect afresh
                client.close()
                GLib.idle_add(self.on_status, "connecting", e.message)
                time.sleep(delay)

    def _write(self) -> None:
        client: Optional[tabbard.Client] = None
        while True:
            method, params = self.requests.get()
            try:
                if client is None:
                    client = tabbard.Client(self.socket_path, timeout=10.0)
                client.call(method, params)
            except (tabbard.ConnectError, tabbard.Disconnected, tabbard.Timeout) as e:
                # Dropped, never replayed: a press nobody judged did nothing.
                print(f"tabbar-gtk: {method}: {e.message}", file=sys.stderr)
                GLib.idle_add(self.on_status, "dropped", method)
                if client is not None:
                    client.close()
                client = None
            except tabbard.Error as e:
                print(f"tabbar-gtk: {method}: {e.message}", file=sys.stderr)

    def send(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self.requests.put((method, params or {}))


class BarView(Gtk.DrawingArea):
    """The device screen: content above, the bar at the bottom, both drawn from `state`."""

    def __init__(self, window: "TabbarWindow") -> None:
        super().__init__()
        self.win = window
        self.set_hexpand(True)
        self.set_vexpand(True)
        self.set_draw_func(self._draw)
        self.animator = Animator()
        self.content_offset = 0.0
        self._scroll_sum = 0.0
        self._touch_base = (os.getpid() & 0xFFFF) << 20
        self._touch_n = 0
        self._touch: Optional[Tuple[int, float, float]] = None
        self._tick: Optional[int] = None
        drag = Gtk.GestureDrag()
        drag.set_button(1)
        drag.connect("drag-begin", self._down)
        drag.connect("drag-end", self._up)
        drag.connect("cancel", self._cancel)
        self.add_controller(drag)
        scroll = Gtk.EventControllerScroll.new(Gtk.EventControllerScrollFlags.VERTICAL)
        scroll.connect("scroll", self._scrolled)
        self.add_controller(scroll)
        # The keyboard, as the page's tabs pattern: ←/→ move the focus over the enabled items
        # (mirrored with rtl), Home/End to the ends, Enter or Space activates it.
        self.set_focusable(True)
        self.focus_id: Optional[str] = None
        keys = Gtk.EventControllerKey()
        keys.connect("key-pressed", self._key)
        self.add_controller(keys)
        focus = Gtk.EventControllerFocus()
        focus.connect("enter", lambda _c: self.queue_draw())
        focus.connect("leave", lambda _c: self.queue_draw())
        self.add_controller(focus)

    def _key(self, controller: Any, keyval: int, keycode: int, state: Any) -> bool:
        st = self.win.mirror.state
        if st is None:
            return False
        items = [i for i in st.get("items") or [] if i.get("enabled", True)]
        if not items:
            return False
        ids = [i["id"] for i in sorted(items, key=lambda i: float(i["frame"]["x"]))]  # left to right on screen
        current = self.focus_id if self.focus_id in ids else (st.get("selected") if st.get("selected") in ids else ids[0])
        k = ids.index(current)
        name = Gdk.keyval_name(keyval) or ""
        if name in ("Left", "Right"):
            self.focus_id = ids[(k + (1 if name == "Right" else -1)) % len(ids)]
        elif name == "Home":
            self.focus_id = ids[0]
        elif name == "End":
            self.focus_id = ids[-1]
        elif name in ("Return", "KP_Enter", "space"):
            item = next(i for i in items if i["id"] == current)
            if item.get("kind", "tab") == "tab":
                self.win.link.send("tab.select", {"tab": current})
            else:
                self.win.link.send("action.trigger", {"tab": current})
            self.focus_id = current
        else:
            return False
        self.queue_draw()
        return True

    # Input: every press is a touch; the daemon hit-tests and decides.
    def _geometry(self) -> Optional[Geometry]:
        st = self.win.mirror.state
        return None if st is None else Geometry.of(st, self.get_width(), self.get_height())

    def _down(self, gesture: Any, x: float, y: float) -> None:
        self.grab_focus()  # for the keyboard
        g = self._geometry()
        if g is None:
            return
        self._touch_n += 1
        tid = self._touch_base + self._touch_n
        self._touch = (tid, x, y)
        bx, by = g.to_bar(x, y)
        self.win.link.send("touch", {"phase": "down", "x": round(bx, 3), "y": round(by, 3), "touch_id": tid})

    def _up(self, gesture: Any, ox: float, oy: float) -> None:
        g = self._geometry()
        if g is None or self._touch is None:
            return
        tid, x, y = self._touch
        self._touch = None
        bx, by = g.to_bar(x + ox, y + oy)
        self.win.link.send("touch", {"phase": "up", "x": round(bx, 3), "y": round(by, 3), "touch_id": tid})

    def _cancel(self, gesture: Any, sequence: Any) -> None:
        if self._touch is not None:
            tid, x, y = self._touch
            self._touch = None
            g = self._geometry()
            if g is not None:
                bx, by = g.to_bar(x, y)
                self.win.link.send("touch", {"phase": "cancel", "x": round(bx, 3), "y": round(by, 3),
                                             "touch_id": tid})

    def _scrolled(self, controller: Any, dx: float, dy: float) -> bool:
        # The content scrolls here (it is this window's own); the daemon decides about the bar.
        points = dy * 40
        self.content_offset = max(0.0, self.content_offset + points)
        self._scroll_sum += points
        if self._tick is None:
            self._tick = self.add_tick_callback(self._on_tick)
        self.queue_draw()
        return True

    # Animation
    def cue(self, params: Dict[str, Any]) -> None:
        self.animator.cue(params, now_ms())
        if self._tick is None:
            self._tick = self.add_tick_callback(self._on_tick)

    def _on_tick(self, widget: Any, clock: Any) -> bool:
        if self._scroll_sum:
            self.win.link.send("scroll", {"dy": round(self._scroll_sum, 3)})  # summed per frame
            self._scroll_sum = 0.0
        self.queue_draw()
        if self.animator.active(now_ms()):
            return True
        self._tick = None
        return False

    # Drawing
    def _draw(self, area: Any, cr: Any, width: int, height: int) -> None:
        self.paint(cr, width, height, report=True)

    def paint(self, cr: Any, width: int, height: int, report: bool) -> None:
        t = now_ms()
        cr.set_source_rgba(*SCREEN)
        cr.paint()
        st = self.win.mirror.state
        self._draw_content(cr, width, height)
        if st is None:
            if report:
                self.win.report_paint(None, [], 0.0, t)
            return
        g = Geometry.of(st, width, height)
        trans = bar_translation(st, self.animator, t)
        vis = st.get("visibility") or {}
        rects: List[Dict[str, Any]] = []
        gone = vis.get("hidden") and vis.get("phase") == "idle"
        if not gone:
            self._draw_bar(cr, st, g, trans, t, rects)
        if report:
            self.win.report_paint(st, rects, trans, t)

    def _draw_content(self, cr: Any, width: int, height: int) -> None:
        cr.set_source_rgba(*CONTENT_INK)
        cr.select_font_face("sans-serif", 0, 0)
        cr.set_font_size(14)
        first = int(self.content_offset // 28)
        for i in range(first, first + height // 28 + 2):
            y = 24 + i * 28 - self.content_offset
            cr.move_to(16, y)
            cr.show_text(f"Row {i + 1}")

    def _draw_bar(self, cr: Any, st: Dict[str, Any], g: Geometry, trans: float, t: float,
                  rects: List[Dict[str, Any]]) -> None:
        s = g.scale
        layout = st.get("layout") or {}
        top = g.top + trans * s
        cr.set_source_rgba(*BAR_BG)
        cr.rectangle(0, top, g.width_pt * s, g.height_pt * s + 1000)
        cr.fill()
        cr.set_source_rgba(0, 0, 0, 0.2)
        cr.rectangle(0, top, g.width_pt * s, max(1.0, 0.5 * s))
        cr.fill()
        settings = st.get("settings") or {}
        items: List[Dict[str, Any]] = st.get("items") or []
        # The selection indicator of bars that slide it.
        sel = next((i for i in items if i.get("id") == st.get("selected")), None)
        if settings.get("animation") == "slide" and sel is not None:
            f = sel["frame"]
            w = float(f["w"]) * 0.5
            cx = float(self.animator.value("indicator", sel["id"], "position.x", t, float(f["x"]) + float(f["w"]) / 2))
            y = float(layout.get("height", 49)) - float(layout.get("safe_bottom", 0)) - 3
            cr.set_source_rgba(*ACCENT)
            rounded(cr, (cx - w / 2) * s, top + y * s, w * s, 3 * s, 1.5 * s)
            cr.fill()
        for item in sorted(items, key=lambda i: i.get("kind") == "center"):  # the center on top
            r = g.rect(item["frame"], trans)
            rects.append({"id": item["id"], "kind": item.get("kind", "tab"), "x": r[0], "y": r[1], "w": r[2],
                          "h": r[3], "badge": (item.get("badge") or {}).get("display") if item.get("badge") else None,
                          "title": (item.get("presentation") or {}).get("title"),
                          "icon": (item.get("presentation") or {}).get("icon"),
                          "scale": round(float(self.animator.value("item", item["id"], "transform.scale", t, 1.0)), 3)})
            self._draw_item(cr, st, item, r, s, t)

    def _draw_item(self, cr: Any, st: Dict[str, Any], item: Dict[str, Any], r: Tuple[float, float, float, float],
                   s: float, t: float) -> None:
        x, y, w, h = r
        iid = item["id"]
        kind = item.get("kind", "tab")
        p = item.get("presentation") or {"title": item.get("title"), "icon": item.get("icon")}
        selected = st.get("selected") == iid
        active = st.get("active_action") == iid
        highlighted = st.get("highlighted") == iid
        color = ACCENT if selected or active else (DARK if kind == "action" else INK)
        alpha = 1.0 if item.get("enabled", True) else 0.35
        scale = float(self.animator.value("item", iid, "transform.scale", t, 1.0))
        cr.save()
        cr.push_group()
        cr.translate(x + w / 2, y + h / 2)
        cr.scale(scale, scale)
        cr.translate(-w / 2, -h / 2)
        if kind == "center":
            shape = ((st.get("layout") or {}).get("center") or {}).get("shape", "circle")
            radius = min(w, h) / 2 if shape == "circle" else 14 * s
            cr.set_source_rgba(0, 0, 0, 0.18)
            rounded(cr, 0, 2 * s, w, h, radius)
            cr.fill()
            cr.set_source_rgba(*(tuple(c * 0.85 for c in ACCENT[:3]) + (1.0,) if highlighted else ACCENT))
            rounded(cr, 0, 0, w, h, radius)
            cr.fill()
            size = 32 * s
            cr.save()
            cr.translate(w / 2 - size / 2, h / 2 - size / 2)
            icons.draw(cr, p.get("icon"), size, ON_ACCENT, ACCENT)
            cr.restore()
        else:
            if highlighted:
                cr.set_source_rgba(0, 0, 0, 0.06)
                rounded(cr, 0, 0, w, h, 8 * s)
                cr.fill()
            big = settings_style(st, item) == "crossfade" and selected
            base = {"w": 37.5, "h": 34.5} if big else {"w": 25.0, "h": 23.0}
            size_v = self.animator.value("icon", iid, "bounds.size", t, base)
            iw, ih = float(size_v.get("w", 25)), float(size_v.get("h", 23))
            icon_scale = float(self.animator.value("icon", iid, "transform.scale", t, 1.0))
            title_h = 11 * s
            block = ih * s + 2 * s + title_h
            iy = h / 2 - block / 2
            run = self.animator.get("icon", iid, "bounds.size")
            fade = 1.0
            if run is not None and run.descriptor.get("transition") == "crossfade":
                dur = float(run.descriptor.get("duration_ms") or 1)
                fade = min(1.0, max(0.0, (t - run.start_ms) / dur))
            cr.save()
            cr.translate(w / 2, iy + ih * s / 2)
            cr.scale(icon_scale, icon_scale)
            box = max(iw, ih) * s
            cr.translate(-box / 2, -box / 2)
            if fade < 1.0 and run is not None:
                cr.push_group()
                icons.draw(cr, run.descriptor.get("from_icon"), box, color, BAR_BG)
                cr.pop_group_to_source()
                cr.paint_with_alpha(1 - fade)
                cr.push_group()
                icons.draw(cr, p.get("icon"), box, color, BAR_BG)
                cr.pop_group_to_source()
                cr.paint_with_alpha(fade)
            else:
                icons.draw(cr, p.get("icon"), box, color, BAR_BG)
            cr.restore()
            cr.set_source_rgba(*color)
            cr.select_font_face("sans-serif", 0, 0)
            cr.set_font_size(10 * s)
            title = str(p.get("title") or "")
            ext = cr.text_extents(title)
            cr.move_to(w / 2 - ext.width / 2 - ext.x_bearing, iy + ih * s + 2 * s + 9 * s)
            cr.show_text(title)
        badge = item.get("badge")
        if badge:
            self._draw_badge(cr, str(badge.get("display", "")), w, s, float(
                self.animator.value("badge", iid, "transform.scale", t, 1.0)))
        cr.pop_group_to_source()
        cr.paint_with_alpha(alpha)
        cr.restore()
        if self.focus_id == iid and self.has_focus():  # a visible focus ring
            cr.set_source_rgba(*ACCENT)
            cr.set_line_width(2 * s)
            rounded(cr, x + s, y + s, w - 2 * s, h - 2 * s, 8 * s if kind != "center" else min(w, h) / 2)
            cr.stroke()

    def _draw_badge(self, cr: Any, display: str, w: float, s: float, scale: float) -> None:
        cr.save()
        if display == "":
            bx, by, bw, bh = w / 2 + 8 * s, 6 * s, 10 * s, 10 * s
        else:
            cr.select_font_face("sans-serif", 0, 1)
            cr.set_font_size(11 * s)
            ext = cr.text_extents(display)
            bw = max(18 * s, ext.x_advance + 10 * s)
            bx, by, bh = w / 2 + 6 * s, 3 * s, 18 * s
        cr.translate(bx + bw / 2, by + bh / 2)
        cr.scale(scale, scale)
        cr.translate(-bw / 2, -bh / 2)
        cr.set_source_rgba(*BADGE)
        rounded(cr, 0, 0, bw, bh, bh / 2)
        cr.fill()
        if display:
            cr.set_source_rgba(1, 1, 1, 1)
            cr.move_to(bw / 2 - ext.width / 2 - ext.x_bearing, bh / 2 + ext.height / 2 - (ext.height + ext.y_bearing))
            cr.show_text(display)
        cr.restore()


def settings_style(st: Dict[str, Any], item: Dict[str, Any]) -> str:
    return str(item.get("animation") or (st.get("settings") or {}).get("animation") or "none")


def rounded(cr: Any, x: float, y: float, w: float, h: float, r: float) -> None:
    r = max(0.0, min(r, w / 2, h / 2))
    cr.new_sub_path()
    cr.arc(x + w - r, y + r, r, -math.pi / 2, 0)
    cr.arc(x + w - r, y + h - r, r, 0, math.pi / 2)
    cr.arc(x + r, y + h - r, r, math.pi / 2, math.pi)
    cr.arc(x + r, y + r, r, math.pi, 3 * math.pi / 2)
    cr.close_path()


class TabbarWindow(Gtk.Window):
    def __init__(self, opts: Any) -> None:
        super().__init__(title="tabbar-gtk")
        self.opts = opts
        self.set_default_size(self.opts.width, self.opts.height)
        if self.opts.undecorated:
            self.set_decorated(False)
        self.mirror = tabbard.Mirror()
        self.status = "connecting"
        self._arrived: Optional[float] = None
        self._arrived_seq = -1
        self._last_report = ""
        self._paints = 0
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
        self.set_child(box)
        controls = Gtk.FlowBox()
        controls.set_selection_mode(Gtk.SelectionMode.NONE)
        controls.set_max_children_per_line(4)
        for name, path in example_files(self.opts.examples):
            controls.append(self._button(name, self._configure_from, path))
        for label, method, params in self._actions():
            controls.append(self._button(label, self._send, (method, params)))
        box.append(controls)
        self.status_label = Gtk.Label(label="connecting…", xalign=0)
        self.status_label.set_margin_start(8)
        box.append(self.status_label)
        self.view = BarView(self)
        box.append(self.view)
        self.link = Link(self.opts.socket, self.on_event, self.on_status)
        if self.opts.report:
            threading.Thread(target=self._commands, daemon=True, name="report-commands").start()

    def _commands(self) -> None:
        """With --report, stdin takes `snapshot PATH`: the device screen (content and bar) drawn now
        into a PNG by the same cairo code as on screen — what the last report describes — answered
        with a `{"snapshot": PATH}` line."""
        for line in sys.stdin:
            words = line.split(maxsplit=1)
            if len(words) == 2 and words[0] == "snapshot":
                GLib.idle_add(self._snapshot, words[1].strip())

    def _snapshot(self, path: str) -> bool:
        import cairo  # python3-gi-cairo's companion, python3-cairo

        w, h = self.view.get_width(), self.view.get_height()
        surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, w, h)
        self.view.paint(cairo.Context(surface), w, h, report=False)
        surface.write_to_png(path)
        self._emit({"snapshot": path, "size": [w, h]})
        return False

    def _actions(self) -> List[Tuple[str, str, Dict[str, Any]]]:
        return [("99+ on the 2nd", "badge", {"index": 1, "count": 120}), ("dot on the last", "badge", {"index": -1, "dot": True}),
                ("clear badges", "clear", {}), ("push a screen", "nav.push", {"hides_bar": True}),
                ("back", "nav.pop", {}), ("finish the action", "finish", {})]

    def _button(self, label: str, handler: Any, arg: Any) -> Gtk.Button:
        b = Gtk.Button(label=label)
        b.connect("clicked", lambda _b: handler(arg))
        return b

    def _configure_from(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            self.link.send("bar.configure", json.load(f))

    def _send(self, what: Tuple[str, Dict[str, Any]]) -> None:
        method, params = what
        st = self.mirror.state or {}
        items = st.get("items") or []
        if method == "badge" and items:
            item = items[params["index"]]
            p = {k: v for k, v in params.items() if k != "index"}
            self.link.send("badge.set", dict(p, tab=item["id"]))
        elif method == "clear":
            for i in items:
                if i.get("badge"):
                    self.link.send("badge.clear", {"tab": i["id"]})
        elif method == "finish":
            if st.get("active_action"):
                self.link.send("action.finish", {"tab": st["active_action"]})
        else:
            self.link.send(method, params)

    # The daemon's side
    def on_status(self, status: str, reason: str) -> bool:
        if status == "dropped":  # a request that could not be sent (reported, the status stays)
            if self.opts.report:
                self._emit({"dropped": reason})
            return False
        self.status = status
        self.status_label.set_text({"open": "connected", "connecting": "connecting…", "refused": "refused"}.get(
            status, status) + (f": {reason}" if reason and status != "open" else ""))
        self.view.queue_draw()
        if self.opts.report:
            self._emit({"status": status})
        return False

    def on_event(self, method: str, params: Dict[str, Any], arrived: float) -> bool:
        if method == "animation.cue":
            self.view.cue(params)
        elif method == "bar.visibility" and params.get("phase") == "idle":
            self.view.animator.running.pop(("bar", None, "translation.y"), None)
        changed = self.mirror.apply(method, params)
        if self.mirror.gap:
            self.mirror.gap = False
        if changed or method == "animation.cue":
            if self._arrived is None:  # the oldest event not painted yet
                self._arrived = arrived
                self._arrived_seq = self.mirror.seq
            self.view.queue_draw()
        return False

    # What was painted, for tests and the latency figure (--report: one JSON line per change)
    def report_paint(self, st: Optional[Dict[str, Any]], rects: List[Dict[str, Any]], trans: float, t: float) -> None:
        if not self.opts.report:
            return
        self._paints += 1
        root = self.view.get_root()
        got = self.view.translate_coordinates(root, 0, 0)
        ox, oy = (got[-2], got[-1]) if got else (0.0, 0.0)
        for r in rects:
            r["x"], r["y"] = round(r["x"] + ox, 2), round(r["y"] + oy, 2)
            r["w"], r["h"] = round(r["w"], 2), round(r["h"], 2)
        rects.sort(key=lambda r: r["x"])
        body: Dict[str, Any] = {"status": self.status, "animating": self.view.animator.active(t),
                                "focus": self.view.focus_id if self.view.has_focus() else None}
        if st is not None:
            g = Geometry.of(st, self.view.get_width(), self.view.get_height())
            vis = st.get("visibility") or {}
            body.update({"seq": self.mirror.seq, "selected": st.get("selected"), "highlighted": st.get("highlighted"),
                         "active_action": st.get("active_action"), "hidden": vis.get("hidden"),
                         "phase": vis.get("phase"), "translation": round(trans, 2), "bar_top": round(g.top + oy, 2),
                         "scale": round(g.scale, 4), "view": [round(ox, 2), round(oy, 2), self.view.get_width(),
                                                              self.view.get_height()], "items": rects})
        text = json.dumps(body, sort_keys=True)
        if text == self._last_report:
            return
        self._last_report = text
        body["painted_ms"] = round(t, 3)
        if self._arrived is not None:
            body["arrived_ms"] = round(self._arrived, 3)
            body["arrived_seq"] = self._arrived_seq
            self._arrived = None
        self._emit(body)

    def _emit(self, body: Dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(body, sort_keys=True) + "\n")
        sys.stdout.flush()


def example_files(directory: Optional[str]) -> List[Tuple[str, str]]:
    if not directory or not os.path.isdir(directory):
        return []
    return [(f[:-5], os.path.join(directory, f)) for f in sorted(os.listdir(directory)) if f.endswith(".json")]


def run(opts: Any) -> int:
    """Shows the window and runs until it is closed (a plain main loop: no session bus needed)."""
    loop = GLib.MainLoop()
    win = TabbarWindow(opts)
    win.connect("close-request", lambda _w: loop.quit() or False)
    win.present()
    loop.run()
    return 0
