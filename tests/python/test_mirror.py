"""tabbard.Mirror kept from events equals the daemon's own state after every kind of change."""
from __future__ import annotations

import asyncio

import pytest

import tabbard
from conftest import DEADLINE, RealDaemon

KEYS = ["selected", "previous", "highlighted", "active_action", "feedback"]


def comparable(st):
    return ({k: st.get(k) for k in KEYS},
            [(i["id"], i.get("badge"), i.get("hidden_badge"), i["presentation"]) for i in st["items"]],
            {k: st["visibility"].get(k) for k in ("hidden", "reasons", "nav_stack")})


def test_the_mirror_follows_every_change(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path, timeout=DEADLINE) as watcher, \
            tabbard.Client(real_daemon.socket_path) as actor:
        events = watcher.events(timeout=DEADLINE)
        mirror = tabbard.Mirror(watcher.seq, watcher.state)
        changes = [
            lambda: actor.select("chat"),
            lambda: actor.select("chat"),
            lambda: actor.set_badge("me", 120),
            lambda: actor.set_badge("home", text="a long badge text here"),
            lambda: actor.set_badge("me", hidden=True),
            lambda: actor.trigger_action("post"),
            lambda: actor.finish_action("post"),
            lambda: actor.touch("down", 20, 20, touch_id=7),
            lambda: actor.touch("cancel", 20, 20, touch_id=7),
            lambda: actor.nav_push(hides_bar=True),
            lambda: actor.set_hidden(True),
            lambda: actor.nav_pop(),
            lambda: actor.set_hidden(False),
            lambda: actor.set_feedback("quiet", 0.5),
            lambda: actor.configure([{"id": "feed", "title": "Feed", "morph": {"title": "Refresh", "icon": "arrow.clockwise"}},
                                     {"id": "me", "title": "Me"}], selected="me"),
            lambda: actor.select("feed"),
            lambda: actor.clear_badge("me"),
        ]
        for change in changes:
            seq = change()["seq"]
            while mirror.seq < seq:
                method, params = next(events)
                mirror.apply(method, params)
            assert not mirror.gap
            assert mirror.state is not None
            assert comparable(mirror.state) == comparable(actor.state_get()["state"])
        assert mirror.state["items"][0]["presentation"]["title"] == "Refresh"


def test_events_time_out_when_nothing_happens(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path) as c:
        events = c.events(timeout=0.2)
        with pytest.raises(tabbard.Timeout):
            next(events)

    async def main() -> None:
        async with tabbard.AsyncClient(real_daemon.socket_path) as a:
            stream = await a.events(["tab"], timeout=0.2)
            with pytest.raises(tabbard.Timeout):
                await stream.__anext__()

    asyncio.run(main())


def test_a_seq_jump_is_followed_by_a_fresh_state() -> None:
    # A connection that gets every event and sees seq jump (events were lost) re-reads the state.
    m = tabbard.Mirror(5, {"items": [], "selected": "a"})
    assert m.apply("tab.selected", {"seq": 6, "tab": "b", "previous": "a", "source": "user"}) and not m.gap
    m.apply("tab.selected", {"seq": 9, "tab": "c", "previous": "b", "source": "user"})
    assert m.gap
    m.replace(9, {"items": [], "selected": "c"})
    assert not m.gap and m.state == {"items": [], "selected": "c"}
