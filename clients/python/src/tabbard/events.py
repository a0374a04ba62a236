"""Events as `(method, params)` tuples, and a local copy of the bar kept from them."""
from __future__ import annotations

import copy
from typing import Any, Dict, List, NamedTuple, Optional

from typing import TypedDict


class Event(NamedTuple):
    """One notification: `method` (e.g. "tab.selected") and its `params`. Unpacks as `(method, params)`."""
    method: str
    params: Dict[str, Any]

    @property
    def seq(self) -> Optional[int]:
        """The change's `seq` (None for `sound.played`, `server.stopping`…)."""
        s = self.params.get("seq")
        return s if isinstance(s, int) and not isinstance(s, bool) else None

    @property
    def tab(self) -> Optional[str]:
        t = self.params.get("tab")
        return t if isinstance(t, str) else None


class Badge(TypedDict, total=False):
    kind: str
    value: Any
    display: str


class TabSelected(TypedDict):
    seq: int
    tab: str
    previous: Optional[str]
    source: str


class TabReselected(TypedDict):
    seq: int
    tab: str
    source: str


class ActionTriggered(TypedDict, total=False):
    seq: int
    tab: str
    action: str


class BadgeChanged(TypedDict, total=False):
    seq: int
    tab: str
    badge: Optional[Badge]
    hidden_badge: Badge


class BarVisibility(TypedDict):
    seq: int
    hidden: bool
    phase: str
    reasons: List[str]
    duration_ms: int
    nav_stack: List[bool]


class AnimationCue(TypedDict):
    seq: int
    tab: Optional[str]
    trigger: str
    kind: str
    descriptor: Dict[str, Any]
    sound: Optional[str]


class SoundPlayed(TypedDict, total=False):
    voice: int
    name: str
    frame: int


def present_all(state: Dict[str, Any]) -> None:
    """Recomputes every item's `presentation` (PROTOCOL.md, "The state"): the morph while a morphing
    item is selected, the `selected_icon` while a plain tab is selected, else its own title and icon."""
    for item in state.get("items", []):
        selected = item.get("id") == state.get("selected")
        morph = item.get("morph")
        if selected and morph:
            item["presentation"] = {"title": morph.get("title", item.get("title")),
                                    "icon": morph.get("icon", item.get("icon")), "morphed": True}
        else:
            icon = item.get("selected_icon") if selected and item.get("selected_icon") else item.get("icon")
            item["presentation"] = {"title": item.get("title"), "icon": icon, "morphed": False}


class Mirror:
    """A local copy of the daemon's state, applied from events as web/tabbard.js applies them:
    `bar.configured` and `state.resync` replace it; the others patch it. `apply` returns True when
    the copy changed; `gap` is True after an event whose `seq` jumped (something was missed:
    re-read the state with `state.get` and `replace` it)."""

    def __init__(self, seq: int = -1, state: Optional[Dict[str, Any]] = None) -> None:
        self.seq = seq
        self.state: Optional[Dict[str, Any]] = state
        self.gap = False

    def replace(self, seq: int, state: Dict[str, Any]) -> None:
        self.seq = seq
        self.state = copy.deepcopy(state)
        self.gap = False

    def apply(self, method: str, params: Dict[str, Any]) -> bool:
        p = params
        if method in ("state.resync", "bar.configured"):
            self.replace(int(p["seq"]), p["state"])
            return True
        s = self.state
        if s is None or method in ("animation.cue", "server.stopping", "sound.played", "sound.failed", "sound.suppressed"):
            return False
        seq = p.get("seq")
        if isinstance(seq, int) and self.seq >= 0 and seq > self.seq + 1:
            self.gap = True
        if isinstance(seq, int) and seq > self.seq:
            self.seq = seq

        def item(tab: Any) -> Optional[Dict[str, Any]]:
            for i in s.get("items", []):
                if i.get("id") == tab:
                    return i  # type: ignore[no-any-return]
            return None

        if method == "tab.selected":
            s["previous"] = p.get("previous")
            s["selected"] = p.get("tab")
            s["active_action"] = None
            present_all(s)
        elif method == "tab.reselected":
            pass
        elif method == "tab.highlighted":
            if p.get("phase") == "begin":
                s["highlighted"] = p.get("tab")
            elif s.get("highlighted") == p.get("tab"):
                s["highlighted"] = None
        elif method == "action.triggered":
            s["active_action"] = p.get("tab")
        elif method == "action.finished":
            s["active_action"] = None
        elif method == "badge.changed":
            i = item(p.get("tab"))
            if i is not None:
                i["badge"] = p.get("badge")
                if p.get("hidden_badge"):
                    i["hidden_badge"] = p["hidden_badge"]
                else:
                    i.pop("hidden_badge", None)
        elif method == "feedback.changed":
            s["feedback"] = p.get("feedback")
        elif method == "bar.visibility":
            v = dict(s.get("visibility") or {})
            for k in ("hidden", "phase", "reasons", "nav_stack", "duration_ms"):
                if k in p:
                    v[k] = p[k]
            s["visibility"] = v
        elif method == "animation.began":
            s["animations"] = list(s.get("animations") or []) + [
                {k: p.get(k) for k in ("animation", "kind", "tab", "duration_ms")}]
        elif method == "animation.ended":
            s["animations"] = [a for a in (s.get("animations") or []) if a.get("animation") != p.get("animation")]
        else:
            return False  # an event this copy does not know: ignored, as the protocol asks
        return True
