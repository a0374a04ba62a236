"""The protocol's requests as typed methods, shared by `Client` (results) and `AsyncClient`
(coroutines of results): each builds the params PROTOCOL.md names and calls `call`."""
from __future__ import annotations

import json
from typing import Any, Dict, Generic, List, Mapping, Optional, Sequence, TypeVar, Union

from typing import Literal

R = TypeVar("R")
Params = Dict[str, Any]
Source = Literal["user", "program"]
TouchPhase = Literal["down", "up", "cancel"]
HighlightPhase = Literal["begin", "end", "cancel"]
Reason = Literal["explicit", "push", "scroll"]
Profile = Literal["full", "quiet", "silent"]


def _params(**values: Any) -> Params:
    """The params with the members left as None taken out."""
    return {k: v for k, v in values.items() if v is not None}


class Requests(Generic[R]):
    """Typed helpers over `call`; every one returns what `call` returns for that request."""

    def call(self, method: str, params: Optional[Mapping[str, Any]] = None) -> R:
        raise NotImplementedError

    # Reading
    def ping(self) -> R:
        """`ping` → `{}`."""
        return self.call("ping")

    def state_get(self) -> R:
        """`state.get` → `{"seq", "state"}`."""
        return self.call("state.get")

    def stats(self) -> R:
        """`stats.get` → the daemon's counters."""
        return self.call("stats.get")

    def sound_list(self) -> R:
        """`sound.list` → `{"sounds": [...]}`."""
        return self.call("sound.list")

    # The bar
    def configure(self, items: Optional[Sequence[Mapping[str, Any]]] = None, *, selected: Optional[str] = None,
                  layout: Optional[Mapping[str, Any]] = None, settings: Optional[Mapping[str, Any]] = None) -> R:
        """`bar.configure` → `{"seq", "state"}`; members left out keep their values."""
        return self.call("bar.configure", _params(items=None if items is None else list(items), selected=selected,
                                                  layout=None if layout is None else dict(layout),
                                                  settings=None if settings is None else dict(settings)))

    def reset(self) -> R:
        """`bar.configure {"initial": true}`: back to the bar the daemon started with."""
        return self.call("bar.configure", {"initial": True})

    def select(self, tab: Optional[str] = None, *, index: Optional[int] = None, if_seq: Optional[int] = None,
               source: Optional[Source] = None) -> R:
        """`tab.select` by id or index → `{"seq", "selected", "previous", "reselected"}`."""
        if (tab is None) == (index is None):
            raise TypeError("select() takes a tab id or an index, not both or neither")
        return self.call("tab.select", _params(tab=tab, index=index, if_seq=if_seq, source=source))

    def trigger_action(self, tab: str, *, source: Optional[Source] = None) -> R:
        """`action.trigger` on an action or center item → `{"seq"}`."""
        return self.call("action.trigger", _params(tab=tab, source=source))

    def finish_action(self, tab: str) -> R:
        """`action.finish` → `{"seq"}`."""
        return self.call("action.finish", {"tab": tab})

    def set_badge(self, tab: str, count: Optional[int] = None, *, text: Optional[str] = None,
                  dot: Optional[bool] = None, hidden: Optional[bool] = None) -> R:
        """`badge.set` with one of `count`, `text`, `dot` (and/or `hidden`) → `{"seq", "badge"}`."""
        return self.call("badge.set", _params(tab=tab, count=count, text=text, dot=dot, hidden=hidden))

    def clear_badge(self, tab: str) -> R:
        """`badge.clear` → `{"seq"}`."""
        return self.call("badge.clear", {"tab": tab})

    def set_feedback(self, profile: Optional[Profile] = None, volume: Optional[float] = None) -> R:
        """`feedback.set` → `{"seq", "feedback"}`."""
        return self.call("feedback.set", _params(profile=profile, volume=volume))

    # Touch and visibility
    def touch(self, phase: TouchPhase, x: float, y: float, touch_id: Optional[int] = None) -> R:
        """`touch` in bar points → `{"seq", "target", "consumed", "commit"}`; the daemon hit-tests."""
        return self.call("touch", _params(phase=phase, x=x, y=y, touch_id=touch_id))

    def highlight(self, tab: str, phase: HighlightPhase) -> R:
        """`tab.highlight` → `{"seq"}`."""
        return self.call("tab.highlight", {"tab": tab, "phase": phase})

    def set_hidden(self, hidden: bool, *, reason: Optional[Reason] = None, animated: Optional[bool] = None) -> R:
        """`bar.set_hidden` → `{"seq", "visibility"}`."""
        return self.call("bar.set_hidden", _params(hidden=hidden, reason=reason, animated=animated))

    def nav_push(self, hides_bar: bool = False) -> R:
        """`nav.push` → `{"seq", "visibility"}`."""
        return self.call("nav.push", {"hides_bar": hides_bar})

    def nav_pop(self) -> R:
        """`nav.pop` → `{"seq", "visibility"}`."""
        return self.call("nav.pop")

    def scroll(self, dy: float) -> R:
        """`scroll` (positive: down) → `{"seq", "visibility"}`."""
        return self.call("scroll", {"dy": dy})

    # Sounds and animations
    def play(self, name: str) -> R:
        """`sound.play` → `{"voice"}`."""
        return self.call("sound.play", {"name": name})

    def reload_sounds(self) -> R:
        """`sound.reload` → `{"sounds", "failures"}`."""
        return self.call("sound.reload")

    def animation_begin(self, kind: str, duration_ms: int, tab: Optional[str] = None) -> R:
        """`animation.begin` → `{"seq", "animation"}`."""
        return self.call("animation.begin", _params(kind=kind, duration_ms=duration_ms, tab=tab))

    def animation_end(self, animation: int, reason: Optional[Literal["finished", "cancelled"]] = None) -> R:
        """`animation.end` → `{"seq"}`."""
        return self.call("animation.end", _params(animation=animation, reason=reason))

    # The test harness (docs/HARNESS.md)
    def clock_advance(self, ms: int) -> R:
        """`clock.advance` (manual clock) → `{"now_ms"}`."""
        return self.call("clock.advance", {"ms": ms})

    def clock_get(self) -> R:
        """`clock.get` → `{"now_ms", "mode"}`."""
        return self.call("clock.get")

    def capture_start(self, path: str) -> R:
        """`capture.start` (null sink) → `{"path", "frame"}`."""
        return self.call("capture.start", {"path": path})

    def capture_stop(self) -> R:
        """`capture.stop` → `{"path", "frame", "frames"}`."""
        return self.call("capture.stop")


def subscribe_params(topics: Optional[Sequence[str]]) -> Optional[Params]:
    return None if topics is None else {"topics": list(topics)}


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def request_line(request_id: Optional[int], method: str, params: Optional[Mapping[str, Any]]) -> bytes:
    """One request line (a notification when `request_id` is None), UTF-8, ending in a newline."""
    head = '{"jsonrpc":"2.0",' if request_id is None else '{"jsonrpc":"2.0","id":%d,' % request_id
    if params is None:
        return (head + '"method":' + _encode(method) + "}\n").encode()
    return (head + '"method":' + _encode(method) + ',"params":' + _encode(params) + "}\n").encode()


__all__: List[str] = ["Requests", "R", "Source", "TouchPhase", "HighlightPhase", "Reason", "Profile",
                      "subscribe_params", "request_line", "Union"]
