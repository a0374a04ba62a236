"""The GTK front end's pure parts (no GTK needed): geometry from the daemon's frames, cue values."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "frontends", "gtk"))
from tabbar_gtk.model import Animator, Geometry, Running, bar_translation, ease  # noqa: E402

PULSE = {"target": "item", "property": "transform.scale", "from": 0.7, "to": 1.3, "duration_ms": 200,
         "timing": "ease_in_ease_out", "autoreverse": True, "repeat": 0}
BOUNCE = {"target": "item", "property": "transform.scale", "keyframes": [1, 1.4, 0.9, 1.15, 0.95, 1.02, 1],
          "key_times": [0, 0.1667, 0.3333, 0.5, 0.6667, 0.8333, 1], "duration_ms": 600, "timing": "linear",
          "autoreverse": False, "repeat": 0}


def test_geometry_scales_frames_to_the_width_and_back() -> None:
    st = {"layout": {"width": 375, "height": 49}}
    g = Geometry.of(st, 750, 1000)
    assert (g.scale, g.top) == (2.0, 902.0)
    assert g.rect({"x": 152.5, "y": -21, "w": 70, "h": 70}) == (305.0, 860.0, 140.0, 140.0)
    assert g.to_bar(375, 872) == (187.5, -15.0)  # above the bar's edge: y < 0
    assert g.rect({"x": 0, "y": 0, "w": 10, "h": 49}, translation=49)[1] == 1000.0


def test_cue_values() -> None:
    assert abs(ease("ease_in_ease_out", 0.5) - 0.5) < 1e-6 and ease("linear", 0.3) == 0.3
    assert 0 < ease("ease_in_ease_out", 0.25) < 0.25
    pulse = Running(PULSE, 0, "a")
    assert pulse.total_ms == 400
    assert pulse.value(0) == 0.7 and abs(pulse.value(200) - 1.3) < 1e-9 and abs(pulse.value(399.999) - 0.7) < 1e-3
    bounce = Running(BOUNCE, 1000, "a")
    assert abs(bounce.value(1000 + 0.1667 * 600) - 1.4) < 1e-3 and bounce.value(1000 + 600) == 1
    size = Running({"from": {"w": 25, "h": 23}, "to": {"w": 37.5, "h": 34.5}, "duration_ms": 100}, 0, "a")
    assert size.value(50) == {"w": 31.25, "h": 28.75}


def test_animator_and_the_bar_slide() -> None:
    a = Animator()
    a.cue({"tab": "a", "descriptor": PULSE}, 0)
    assert a.value("item", "a", "transform.scale", 150, 1.0) > 1 and a.active(150)
    assert a.value("item", "a", "transform.scale", 400, 1.0) == 1.0 and not a.active(400)
    st = {"layout": {"height": 49}, "visibility": {"hidden": True, "phase": "hiding"}}
    assert bar_translation(st, a, 0) == 49  # a phase without its cue: straight to its end
    a.cue({"tab": None, "descriptor": {"target": "bar", "property": "translation.y", "from": 0, "to": 49,
                                       "duration_ms": 500}}, 0)
    assert bar_translation(st, a, 250) == 24.5
    st["visibility"] = {"hidden": True, "phase": "idle"}
    assert bar_translation(st, a, 600) == 49
    st["visibility"] = {"hidden": False, "phase": "idle"}
    assert bar_translation(st, a, 600) == 0
