"""What the GTK front end draws, without GTK: the bar's geometry in window pixels from the
daemon's frames, and the values of the daemon's animation cues over time."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

Rect = Tuple[float, float, float, float]


@dataclass
class Geometry:
    """The bar laid out in a widget `width`×`height` pixels: bar points scaled to the width, the
    bar at the bottom; `top` is the bar's top edge as laid out (y of bar point 0), `scale` px/pt."""
    scale: float
    top: float
    height_pt: float
    width_pt: float

    @staticmethod
    def of(state: Dict[str, Any], width: float, height: float) -> "Geometry":
        layout = state.get("layout") or {}
        w = float(layout.get("width") or 375)
        h = float(layout.get("height") or 49)
        scale = width / w
        return Geometry(scale, height - h * scale, h, w)

    def rect(self, frame: Dict[str, Any], translation: float = 0.0) -> Rect:
        """An item's frame (bar points) in widget pixels, the bar moved down by `translation` points."""
        s = self.scale
        return (float(frame["x"]) * s, self.top + (float(frame["y"]) + translation) * s,
                float(frame["w"]) * s, float(frame["h"]) * s)

    def to_bar(self, x: float, y: float) -> Tuple[float, float]:
        """A widget point in bar points (origin: the bar's top-left as laid out; y < 0 above it)."""
        return x / self.scale, (y - self.top) / self.scale


def _bezier(p1: float, p2: float, t: float) -> float:
    return 3 * (1 - t) * (1 - t) * t * p1 + 3 * (1 - t) * t * t * p2 + t * t * t


def ease(timing: str, x: float) -> float:
    """CSS's timing functions by the protocol's names: ease_in_ease_out → cubic-bezier(.42,0,.58,1)."""
    curves = {"ease_in_ease_out": (0.42, 0.0, 0.58, 1.0), "ease_in": (0.42, 0.0, 1.0, 1.0),
              "ease_out": (0.0, 0.0, 0.58, 1.0)}
    if timing not in curves:
        return x
    x1, y1, x2, y2 = curves[timing]
    lo, hi = 0.0, 1.0
    for _ in range(30):  # solve bezier_x(t) = x by bisection
        mid = (lo + hi) / 2
        if _bezier(x1, x2, mid) < x:
            lo = mid
        else:
            hi = mid
    return _bezier(y1, y2, (lo + hi) / 2)


def _mix(a: Any, b: Any, f: float) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _mix(a.get(k, 0), b.get(k, 0), f) for k in b}
    return float(a) + (float(b) - float(a)) * f


@dataclass
class Running:
    descriptor: Dict[str, Any]
    start_ms: float
    tab: Optional[str]

    @property
    def total_ms(self) -> float:
        d = self.descriptor
        n = (1 + int(d.get("repeat") or 0)) * (2 if d.get("autoreverse") else 1)
        return float(d.get("duration_ms") or 0) * n

    def value(self, now_ms: float) -> Any:
        """The property's value at `now_ms` (the end value once it is over)."""
        d = self.descriptor
        dur = float(d.get("duration_ms") or 0)
        if "keyframes" in d:
            frames: List[Any] = list(d["keyframes"])
            times: List[float] = [float(t) for t in d.get("key_times") or
                                  [i / max(1, len(frames) - 1) for i in range(len(frames))]]
        else:
            frames, times = [d.get("from"), d.get("to")], [0.0, 1.0]
        elapsed = now_ms - self.start_ms
        if dur <= 0 or elapsed >= self.total_ms:
            # Over: an autoreversed animation ends where it started.
            return frames[0] if d.get("autoreverse") else frames[-1]
        cycle = int(elapsed // dur)
        x = (elapsed - cycle * dur) / dur
        if d.get("autoreverse") and cycle % 2 == 1:
            x = 1 - x
        x = ease(str(d.get("timing") or "linear"), x)
        for i in range(len(times) - 1):
            if x <= times[i + 1] or i == len(times) - 2:
                span = times[i + 1] - times[i]
                f = 0.0 if span <= 0 else min(1.0, max(0.0, (x - times[i]) / span))
                return _mix(frames[i], frames[i + 1], f)
        return frames[-1]


class Animator:
    """The cues being played, one per (target, tab, property): a new cue on the same thing
    replaces the old one (a slide retargeted by the daemon starts from where it says)."""

    def __init__(self) -> None:
        self.running: Dict[Tuple[str, Optional[str], str], Running] = {}

    def cue(self, params: Dict[str, Any], now_ms: float) -> None:
        d = params.get("descriptor") or {}
        key = (str(d.get("target")), params.get("tab"), str(d.get("property")))
        self.running[key] = Running(dict(d), now_ms, params.get("tab"))

    def value(self, target: str, tab: Optional[str], prop: str, now_ms: float, default: Any) -> Any:
        r = self.running.get((target, tab, prop))
        if r is None or (target != "bar" and now_ms - r.start_ms >= r.total_ms):
            return default  # over: the thing is back in its own state (the bar stays where it slid)
        return r.value(now_ms)

    def get(self, target: str, tab: Optional[str], prop: str) -> Optional[Running]:
        return self.running.get((target, tab, prop))

    def active(self, now_ms: float) -> bool:
        """Whether any cue is still moving (prunes the finished ones)."""
        done = [k for k, r in self.running.items() if now_ms - r.start_ms >= r.total_ms]
        for k in done:
            if k[0] != "bar":  # the bar's end position is kept until the next cue or phase
                del self.running[k]
        return any(now_ms - r.start_ms < r.total_ms for r in self.running.values())


def bar_translation(state: Dict[str, Any], animator: Animator, now_ms: float) -> float:
    """How far down (points) the bar is: the bar's slide cue while it runs, else where its
    visibility says it rests (hidden at `idle`: its height; shown: 0)."""
    vis = state.get("visibility") or {}
    height = float((state.get("layout") or {}).get("height") or 49)
    r = animator.get("bar", None, "translation.y")
    if r is not None and vis.get("phase") in ("hiding", "showing"):
        return float(r.value(now_ms))
    return height if vis.get("hidden") else 0.0  # at rest, or a phase seen without its cue: the end
