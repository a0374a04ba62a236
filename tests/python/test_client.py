"""The blocking client against the real daemon."""
from __future__ import annotations

import socket
import threading

import pytest

import tabbard
from conftest import DEADLINE, RealDaemon


def test_hello_and_state(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path) as c:
        assert c.hello["server"] == "tabbard" and c.hello["protocol"] == 1
        assert "tab.select" in c.hello["features"]
        assert c.ping() == {}
        r = c.state_get()
        assert [i["id"] for i in r["state"]["items"]] == ["home", "nearby", "post", "chat", "me"]
        assert r["state"]["selected"] == "home"


def test_typed_requests_change_the_daemon(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path) as c:
        r = c.select("chat")
        assert (r["selected"], r["previous"], r["reselected"]) == ("chat", "home", False)
        assert c.select(index=3)["reselected"] is True
        assert c.set_badge("me", 120)["badge"] == {"kind": "count", "value": 120, "display": "99+"}
        assert c.set_badge("home", text="new")["badge"]["display"] == "new"
        assert c.set_badge("nearby", dot=True)["badge"]["display"] == ""
        c.clear_badge("home")
        c.trigger_action("post")
        assert c.state_get()["state"]["active_action"] == "post"
        c.finish_action("post")
        # The daemon judges a touch: the raised center button above the bar's top edge.
        assert c.touch("down", 187.5, -15, touch_id=1)["target"] == "post"
        assert c.touch("up", 187.5, -15, touch_id=1)["commit"] == "action"
        v = c.nav_push(hides_bar=True)["visibility"]
        assert v["hidden"] is True and v["reasons"] == ["push"]
        assert c.nav_pop()["visibility"]["hidden"] is False
        st = c.state_get()["state"]
        assert st["selected"] == "chat" and st["items"][4]["badge"]["display"] == "99+"
        assert st["items"][0]["badge"] is None


def test_errors_carry_code_kind_and_message(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path) as c:
        with pytest.raises(tabbard.UnknownTab) as e:
            c.select("chats")
        assert (e.value.code, e.value.kind) == (-32001, "unknown_tab")
        assert "chats" in e.value.message and e.value.data["tab"] == "chats"
        with pytest.raises(tabbard.NotSelectable):
            c.select("post")
        with pytest.raises(tabbard.InvalidParams) as p:
            c.call("tab.select", {"tabb": "chat"})
        assert p.value.field == "tabb" and p.value.code == -32602
        with pytest.raises(tabbard.MethodNotFound):
            c.call("no.such.method")
        with pytest.raises(tabbard.Conflict) as conflict:
            c.select("chat", if_seq=c.state_get()["seq"] + 5)
        assert isinstance(conflict.value.data["seq"], int)
        with pytest.raises(tabbard.UnknownSound):
            c.play("no-such-sound")
        with pytest.raises(tabbard.ClockNotManual):
            c.clock_advance(10)
        assert isinstance(e.value, tabbard.Error) and issubclass(tabbard.LineTooLong, tabbard.InvalidRequest)
        assert c.ping() == {}  # the connection stays usable


def test_connect_error_names_the_socket(tmp_path: "object") -> None:
    path = f"{tmp_path}/none/socket"
    with pytest.raises(tabbard.ConnectError) as e:
        tabbard.Client(path)
    assert path in e.value.message and isinstance(e.value, tabbard.Error)


def test_events_from_another_client_in_order(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path, timeout=DEADLINE) as watcher, \
            tabbard.Client(real_daemon.socket_path) as actor:
        events = watcher.events(["tab", "badge"], timeout=DEADLINE)
        first = watcher.seq
        actor.select("me")
        actor.set_badge("chat", 3)
        actor.play("click")  # sound.played is not among the topics
        actor.select("me")
        got = [next(events) for _ in range(3)]
        assert [m for m, _ in got] == ["tab.selected", "badge.changed", "tab.reselected"]
        assert got[0].params == {"seq": first + 1, "tab": "me", "previous": "home", "source": "user"}
        assert got[1].params["badge"]["value"] == 3
        assert [e.seq for e in got] == [first + 1, first + 2, first + 3]


def test_calls_inside_the_event_loop_keep_the_events(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path, timeout=DEADLINE) as c:
        events = c.events(["tab"], timeout=DEADLINE)
        c.select("chat")  # its event arrives before the reply and is kept for the iterator
        method, params = next(events)
        assert (method, params["tab"]) == ("tab.selected", "chat")


def test_reconnect_resyncs_by_seq(real_daemon: RealDaemon) -> None:
    with tabbard.Client(real_daemon.socket_path, timeout=DEADLINE, min_delay=0.05) as c:
        events = c.events(timeout=DEADLINE)
        before = c.seq
        real_daemon.stop()
        # Changed while nobody watched: after the restart, the client must not miss it.
        real_daemon.start()
        with tabbard.Client(real_daemon.socket_path) as other:
            other.select("nearby")
            other.set_badge("me", dot=True)
        seen = []
        for ev in events:
            seen.append(ev.method)
            if ev.method == "state.resync":
                break
        assert seen[-1] == "state.resync" and c.reconnects >= 1
        assert "server.stopping" in seen
        assert ev.params["reconnected"] is True and ev.params["seq"] >= before + 2
        assert ev.params["state"]["selected"] == "nearby"
        assert ev.params["state"]["items"][4]["badge"]["kind"] == "dot"
        # And it follows new changes on the new connection.
        c.select("chat")
        assert next(events).params["tab"] == "chat"


def test_a_client_per_thread(real_daemon: RealDaemon) -> None:
    errors = []

    def work(n: int) -> None:
        try:
            with tabbard.Client(real_daemon.socket_path) as c:
                for _ in range(50):
                    c.set_badge("chat", n + 1)
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert errors == []
    with tabbard.Client(real_daemon.socket_path) as c:
        assert c.state_get()["seq"] >= 4  # distinct counts: every thread changed it at least once


def test_refusal_before_hello_is_raised(tmp_path: "object") -> None:
    # A listener that refuses as the daemon does (one error line, id null, then closes).
    path = f"{tmp_path}/refuser"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def refuse() -> None:
        conn, _ = srv.accept()
        conn.sendall(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32007,"message":"uid 1234 may not connect.",'
                     b'"data":{"kind":"permission_denied"}}}\n')
        conn.close()

    t = threading.Thread(target=refuse)
    t.start()
    with pytest.raises(tabbard.PermissionDenied) as e:
        tabbard.Client(path)
    t.join()
    srv.close()
    assert e.value.code == -32007 and "may not connect" in e.value.message
