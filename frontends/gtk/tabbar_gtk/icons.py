"""The icon set of the example bars, drawn with cairo: the same names and 24×24 outlines as the
browser page's (web/icons.js), so both front ends show the same bar. A ".fill" name fills closed
shapes; an unknown name is its first letter in a rounded square."""
from __future__ import annotations

import math
import re
from typing import Any, List, Optional, Tuple

P = {
    "house": "M3 11 12 3l9 8M5 9.5V21h5v-6h4v6h5V9.5",
    "location": "M12 21s-7-6.2-7-11.5a7 7 0 0 1 14 0C19 14.8 12 21 12 21zM12 12.5a3 3 0 1 0 0-6 3 3 0 0 0 0 6z",
    "plus": "M12 5v14M5 12h14",
    "bubble": "M4 5h16v11H9l-5 4z",
    "person": "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21c0-4.4 3.6-7 8-7s8 2.6 8 7z",
    "magnifyingglass": "M10.5 17a6.5 6.5 0 1 0 0-13 6.5 6.5 0 0 0 0 13zM15.5 15.5 21 21",
    "heart": "M12 20s-8-5.2-8-11a4.5 4.5 0 0 1 8-2.8A4.5 4.5 0 0 1 20 9c0 5.8-8 11-8 11z",
    "sun": "M12 16.5a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9zM12 2v2.5M12 19.5V22M2 12h2.5M19.5 12H22M4.9 4.9l1.8 1.8"
           "M17.3 17.3l1.8 1.8M4.9 19.1l1.8-1.8M17.3 6.7l1.8-1.8",
    "calendar": "M4 6h16v14H4zM4 10h16M8 3v5M16 3v5",
    "chart": "M5 20V12h3v8zM10.5 20V6h3v14zM16 20V9h3v11z",
    "list": "M9 6h11M9 12h11M9 18h11M4.5 6h.01M4.5 12h.01M4.5 18h.01",
    "map": "M3 6l6-3 6 3 6-3v15l-6 3-6-3-6 3zM9 3v15M15 6v15",
    "gear": "M12 15.5a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9 7 7M17 17l2.1 2.1"
            "M4.9 19.1 7 17M17 7l2.1-2.1",
    "refresh": "M20 12a8 8 0 1 1-2.3-5.7M20 4v5h-5",
    "compass": "M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM15.5 8.5l-2 5-5 2 2-5z",
    "tray": "M3 13l3-8h12l3 8v6H3zM3 13h5l1 3h6l1-3h5",
    "photo": "M3 5h18v14H3zM3 16l5-5 4 4 3-3 6 6M16 9.5a1.5 1.5 0 1 0 0-.01",
    "video": "M3 7h12v10H3zM15 10.5 21 7v10l-6-3.5",
    "camera": "M3 8h4l2-3h6l2 3h4v12H3zM12 17a4 4 0 1 0 0-8 4 4 0 0 0 0 8z",
    "mic": "M12 14a3 3 0 0 0 3-3V6a3 3 0 0 0-6 0v5a3 3 0 0 0 3 3zM6 11a6 6 0 0 0 12 0M12 17v4M9 21h6",
    "personCircle": "M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM12 12.5a3 3 0 1 0 0-6 3 3 0 0 0 0 6z"
                    "M6.5 18.5c1-2.5 3-3.5 5.5-3.5s4.5 1 5.5 3.5",
    "star": "M12 3l2.7 5.6 6.1.9-4.4 4.3 1 6.1L12 17l-5.4 2.9 1-6.1-4.4-4.3 6.1-.9z",
    "bell": "M6 17V11a6 6 0 0 1 12 0v6l2 2H4zM10 21h4",
    "record": "M12 19a7 7 0 1 0 0-14 7 7 0 0 0 0 14z",
}

NAMES = {
    "house": "house", "home": "house", "location": "location", "nearby": "location",
    "plus": "plus", "plus.circle": "plus", "post": "plus", "compose": "plus", "make": "plus", "custom.make": "plus",
    "bubble": "bubble", "bubble.left": "bubble", "chat": "bubble", "message": "bubble",
    "person": "person", "me": "person", "profile": "person",
    "magnifyingglass": "magnifyingglass", "search": "magnifyingglass", "heart": "heart", "likes": "heart",
    "sun.max": "sun", "today": "sun", "calendar": "calendar", "calendar.circle": "calendar", "week": "calendar",
    "chart.bar": "chart", "stats": "chart", "list.bullet": "list", "list": "list", "map": "map",
    "gearshape": "gear", "gear": "gear", "settings": "gear", "arrow.clockwise": "refresh", "refresh": "refresh",
    "safari": "compass", "discover": "compass", "tray": "tray", "inbox": "tray",
    "photo.on.rectangle": "photo", "photo": "photo", "library": "photo", "video": "video", "record_video": "video",
    "camera": "camera", "take_photo": "camera", "mic": "mic", "audio": "mic", "record_audio": "mic",
    "person.crop.circle": "personCircle", "account": "personCircle", "star": "star", "bell": "bell",
    "record": "record",
}

CUSTOM = {"custom.one": "1", "custom.two": "2", "custom.four": "4", "custom.five": "5"}

_TOKEN = re.compile(r"[MmLlHhVvCcSsAaZz]|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ARGS = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "s": 4, "a": 7, "z": 0}


def parse(d: str) -> List[Tuple[str, List[float]]]:
    """The commands of an SVG path (absolute and relative), each with its numbers."""
    out: List[Tuple[str, List[float]]] = []
    cmd = ""
    nums: List[float] = []
    for tok in _TOKEN.findall(d):
        if tok.isalpha():
            if cmd:
                out.append((cmd, nums))
            cmd, nums = tok, []
        else:
            nums.append(float(tok))
    if cmd:
        out.append((cmd, nums))
    return out


def _arc(cr: Any, x1: float, y1: float, rx: float, ry: float, large: bool, sweep: bool, x2: float, y2: float) -> None:
    """An SVG endpoint arc (no rotation in this set) as cairo arcs."""
    if rx == 0 or ry == 0 or (x1 == x2 and y1 == y2):
        cr.line_to(x2, y2)
        return
    dx, dy = (x1 - x2) / 2, (y1 - y2) / 2
    lam = (dx * dx) / (rx * rx) + (dy * dy) / (ry * ry)
    if lam > 1:
        rx, ry = rx * math.sqrt(lam), ry * math.sqrt(lam)
    num = rx * rx * ry * ry - rx * rx * dy * dy - ry * ry * dx * dx
    den = rx * rx * dy * dy + ry * ry * dx * dx
    k = math.sqrt(max(0.0, num / den)) * (-1 if large == sweep else 1)
    cx_, cy_ = k * rx * dy / ry, -k * ry * dx / rx
    cx, cy = cx_ + (x1 + x2) / 2, cy_ + (y1 + y2) / 2
    a1 = math.atan2((dy - cy_) / ry, (dx - cx_) / rx)
    a2 = math.atan2((-dy - cy_) / ry, (-dx - cx_) / rx)
    cr.save()
    cr.translate(cx, cy)
    cr.scale(rx, ry)
    if sweep:
        cr.arc(0, 0, 1, a1, a2 if a2 > a1 else a2 + 2 * math.pi)
    else:
        cr.arc_negative(0, 0, 1, a1, a2 if a2 < a1 else a2 - 2 * math.pi)
    cr.restore()


def path(cr: Any, d: str) -> None:
    """Adds the SVG path `d` to cairo context `cr`."""
    x = y = sx = sy = 0.0
    last_c: Optional[Tuple[float, float]] = None
    for cmd, nums in parse(d):
        rel = cmd.islower()
        c = cmd.lower()
        n = _ARGS[c]
        if c == "z":
            cr.close_path()
            x, y = sx, sy
            continue
        groups = [nums[i:i + n] for i in range(0, len(nums), n)] if n else [[]]
        for gi, g in enumerate(groups):
            ox, oy = (x, y) if rel else (0.0, 0.0)
            if c == "m" and gi == 0:
                x, y = g[0] + ox, g[1] + oy
                sx, sy = x, y
                cr.move_to(x, y)
            elif c in ("m", "l"):
                x, y = g[0] + ox, g[1] + oy
                cr.line_to(x, y)
            elif c == "h":
                x = g[0] + (x if rel else 0.0)
                cr.line_to(x, y)
            elif c == "v":
                y = g[0] + (y if rel else 0.0)
                cr.line_to(x, y)
            elif c == "c":
                cr.curve_to(g[0] + ox, g[1] + oy, g[2] + ox, g[3] + oy, g[4] + ox, g[5] + oy)
                last_c = (g[2] + ox, g[3] + oy)
                x, y = g[4] + ox, g[5] + oy
                continue
            elif c == "s":
                x1, y1 = (2 * x - last_c[0], 2 * y - last_c[1]) if last_c else (x, y)
                cr.curve_to(x1, y1, g[0] + ox, g[1] + oy, g[2] + ox, g[3] + oy)
                last_c = (g[0] + ox, g[1] + oy)
                x, y = g[2] + ox, g[3] + oy
                continue
            elif c == "a":
                nx, ny = g[5] + ox, g[6] + oy
                _arc(cr, x, y, abs(g[0]), abs(g[1]), g[3] != 0, g[4] != 0, nx, ny)
                x, y = nx, ny
            last_c = None


def draw(cr: Any, name: Optional[str], size: float, color: Tuple[float, float, float, float],
         background: Tuple[float, float, float, float]) -> None:
    """Draws icon `name` in a `size`×`size` box at the current origin."""
    if not name:
        return
    base = str(name)
    filled = base.endswith(".fill")
    if filled:
        base = base[:-5]
    key = NAMES.get(base) or NAMES.get(re.sub(r"\.(circle|square)$", "", base))
    cr.save()
    cr.scale(size / 24, size / 24)
    cr.set_line_width(1.8)
    cr.set_line_cap(1)  # round
    cr.set_line_join(1)
    cr.set_source_rgba(*color)
    if key:
        path(cr, P[key])
        if filled and key not in ("plus", "list", "refresh"):
            cr.set_fill_rule(1)  # even-odd
            cr.fill_preserve()
        cr.stroke()
    else:
        letter = CUSTOM.get(base) or base.replace("custom.", "", 1)[:1].upper()
        r = 5.0
        cr.new_sub_path()
        cr.arc(21 - r, 3 + r, r, -math.pi / 2, 0)
        cr.arc(21 - r, 21 - r, r, 0, math.pi / 2)
        cr.arc(3 + r, 21 - r, r, math.pi / 2, math.pi)
        cr.arc(3 + r, 3 + r, r, math.pi, 3 * math.pi / 2)
        cr.close_path()
        if filled:
            cr.fill_preserve()
        cr.stroke()
        cr.select_font_face("sans-serif", 0, 1)
        cr.set_font_size(12)
        ext = cr.text_extents(letter)
        cr.move_to(12 - ext.width / 2 - ext.x_bearing, 16.5)
        if filled:
            cr.set_source_rgba(*background)
        cr.show_text(letter)
    cr.restore()
