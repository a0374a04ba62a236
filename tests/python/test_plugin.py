"""The pytest plugin's fixture and the harness behind it (beyond the documented examples)."""
from __future__ import annotations

import json
import os

import pytest

import tabbard
from tabbard.testing import HarnessError, HeadlessDaemon


def test_the_fixture_reads_no_config_and_no_socket_from_the_environment(tmp_path, monkeypatch,
                                                                         tabbard_daemon_factory) -> None:
    # A user config that would change the bar and the socket, and environment that points elsewhere.
    conf = tmp_path / "config" / "tabbard"
    conf.mkdir(parents=True)
    (conf / "config.json").write_text(json.dumps({"bar": {"items": [{"id": "a"}, {"id": "b"}]}}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TABBARD_SOCKET", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("TABBARD_SOUNDS", str(tmp_path / "no-sounds"))
    d = tabbard_daemon_factory()
    assert [i["id"] for i in d.state()["items"]] == ["home", "nearby", "post", "chat", "me"]
    assert d.socket_path.startswith(d.directory) and not os.path.exists(tmp_path / "elsewhere")
    names = {s["name"] for s in d.client().sound_list()["sounds"]}
    assert "click" in names  # the daemon's own sounds, whatever TABBARD_SOUNDS says
    assert d.client().clock_get()["mode"] == "manual"


def test_expect_fails_at_once_listing_what_arrived(tabbard_daemon) -> None:
    d = tabbard_daemon
    d.timeout = 3600.0  # were it to wait for the deadline, the test would hang
    d.client().select("chat")
    with pytest.raises(HarnessError) as e:
        d.expect("tab.selected", tab="me")
    assert "tab.selected" in str(e.value) and '"tab":"chat"' in str(e.value)
    assert d.expect("tab.selected", tab="chat")["previous"] == "home"  # not consumed by the failure
    assert d.expect("sound.played", where=lambda p: p["name"] == "click")["frame"] == 32
    with pytest.raises(HarnessError):
        d.expect("tab.selected")  # consumed now
    d.expect_no_event("badge.changed")
    d.client().set_badge("me", 3)
    with pytest.raises(HarnessError):
        d.expect_no_event("badge.changed", tab="me")
    assert d.expect("badge.changed", **{"badge.display": "3"})["tab"] == "me"


def test_timers_fire_only_on_advance(tabbard_daemon) -> None:
    d = tabbard_daemon
    d.client().nav_push(hides_bar=True)
    d.expect("bar.visibility", phase="hiding", duration_ms=500)
    d.expect_no_event("bar.visibility", phase="idle")
    assert d.advance(499) == 499
    d.expect_no_event("bar.visibility", phase="idle")
    d.advance(1)
    d.expect("bar.visibility", phase="idle", hidden=True)
    assert d.now() == 500


def test_captured_audio_grows_and_names_each_sound_with_its_frame(tabbard_daemon) -> None:
    d = tabbard_daemon
    bar = d.client()
    bar.select("chat")
    d.advance(100)
    first = d.captured_audio()
    assert (first.rate, first.channels, first.first_frame) == (48000, 2, 0)
    assert first.frames == 100 * 48 + 32 and len(first.samples) == first.frames * 2  # + the device queue
    assert [(s.name, s.frame) for s in first.sounds] == [("click", 32)]
    bar.select("me")
    d.advance(50)
    second = d.captured_audio()
    assert second.frames == 150 * 48 + 32
    assert list(second.samples[:len(first.samples)]) == list(first.samples)  # everything since the start
    assert [(s.name, s.frame) for s in second.sounds] == [("click", 32), ("click", 100 * 48 + 32)]
    assert any(second.frames_between(4832, 4832 + 240)) and not any(second.frames_between(4000, 4832))


def test_the_harness_without_pytest() -> None:
    with HeadlessDaemon(configuration={"items": [{"id": "x", "title": "X"}, {"id": "y", "title": "Y"}]}) as d:
        assert [i["id"] for i in d.state()["items"]] == ["x", "y"]
        with pytest.raises(tabbard.UnknownTab):
            d.call("tab.select", {"tab": "z"})
    assert not os.path.exists(d.directory)
