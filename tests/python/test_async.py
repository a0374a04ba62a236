"""The asyncio client against the real daemon."""
from __future__ import annotations

import asyncio

import pytest

import tabbard
from conftest import DEADLINE, RealDaemon


def test_async_requests_events_and_errors(real_daemon: RealDaemon) -> None:
    async def main() -> None:
        async with tabbard.AsyncClient(real_daemon.socket_path) as watcher, \
                tabbard.AsyncClient(real_daemon.socket_path) as actor:
            assert watcher.hello["server"] == "tabbard"
            stream = await watcher.events(["tab", "badge"], timeout=DEADLINE)
            first = watcher.seq
            # Several requests in flight at once, answered in order.
            r1, r2, r3 = await asyncio.gather(actor.select("chat"), actor.set_badge("me", 7), actor.ping())
            assert r1["selected"] == "chat" and r2["badge"]["display"] == "7" and r3 == {}
            got = [await stream.__anext__(), await stream.__anext__()]
            assert [e.method for e in got] == ["tab.selected", "badge.changed"]
            assert [e.seq for e in got] == [first + 1, first + 2]
            with pytest.raises(tabbard.UnknownTab) as e:
                await actor.select("chats")
            assert (e.value.code, e.value.kind) == (-32001, "unknown_tab")
            with pytest.raises(tabbard.InvalidParams):
                await actor.call("badge.set", {"tab": "me", "count": 1.5})
            assert await actor.call("ping") == {}

    asyncio.run(main())


def test_async_for_and_reconnect(real_daemon: RealDaemon) -> None:
    def restart_and_change() -> None:
        real_daemon.stop()
        real_daemon.start()
        with tabbard.Client(real_daemon.socket_path) as other:
            other.select("me")

    async def main() -> None:
        client = tabbard.AsyncClient(real_daemon.socket_path, min_delay=0.05)
        try:
            stream = await client.events(timeout=DEADLINE)  # subscribed on return
            await asyncio.get_running_loop().run_in_executor(None, restart_and_change)
            seen = []
            async for method, params in stream:
                seen.append(method)
                if method == "state.resync":
                    assert params["reconnected"] is True
                    assert params["state"]["selected"] == "me"
                    break
            assert "server.stopping" in seen and client.reconnects >= 1
            assert (await client.select("nearby"))["previous"] == "me"  # the new connection works
        finally:
            await client.close()

    asyncio.run(main())


def test_async_disconnected_pending_request(real_daemon: RealDaemon) -> None:
    async def main() -> None:
        c = tabbard.AsyncClient(real_daemon.socket_path)
        await c.connect()
        real_daemon.stop()
        with pytest.raises(tabbard.Disconnected):
            for _ in range(100):
                await c.ping()
        await c.close()

    asyncio.run(main())
