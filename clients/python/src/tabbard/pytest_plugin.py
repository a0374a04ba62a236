"""The pytest plugin (registered through the `pytest11` entry point): fixtures that start a
headless tabbard for each test. See docs/PYTHON.md."""
from __future__ import annotations

from typing import Any, Callable, Iterator, List

import pytest

from .testing import HeadlessDaemon


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("tabbard")
    group.addoption("--tabbard-binary", default=None,
                    help="the tabbard executable for the tabbard_daemon fixture (default: tabbard on PATH)")


@pytest.fixture
def tabbard_daemon(request: Any) -> Iterator[HeadlessDaemon]:
    """A real tabbard on a private socket and state, reading no config (`--no-config`), on the
    manual clock with the null sink and its audio captured; stopped and removed after the test."""
    daemon = HeadlessDaemon(request.config.getoption("tabbard_binary"))
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def tabbard_daemon_factory(request: Any) -> Iterator[Callable[..., HeadlessDaemon]]:
    """Starts more daemons (`tabbard_daemon_factory(configuration=..., arguments=[...])`)."""
    started: List[HeadlessDaemon] = []

    def start(**kwargs: Any) -> HeadlessDaemon:
        kwargs.setdefault("binary", request.config.getoption("tabbard_binary"))
        d = HeadlessDaemon(**kwargs)
        started.append(d)
        return d

    try:
        yield start
    finally:
        for d in started:
            d.stop()
