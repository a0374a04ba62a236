"""Socket path resolution: the same path tabbarctl picks, for every rule."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Dict, List, Optional

import pytest

import tabbard

CASES = [
    # (tabbarctl arguments, environment)
    ([], {"XDG_RUNTIME_DIR": "/run/user/1000"}),
    ([], {"XDG_RUNTIME_DIR": "/run/user/1000/"}),
    ([], {}),
    ([], {"XDG_RUNTIME_DIR": ""}),
    ([], {"XDG_RUNTIME_DIR": "relative/dir"}),
    ([], {"TABBARD_SOCKET": "/tmp/x/sock", "XDG_RUNTIME_DIR": "/run/user/1000"}),
    ([], {"TABBARD_SOCKET": "", "XDG_RUNTIME_DIR": "/r"}),
    (["--socket", "/tmp/a/explicit"], {"TABBARD_SOCKET": "/tmp/x/sock"}),
    (["--instance", "shop"], {"XDG_RUNTIME_DIR": "/r", "TABBARD_SOCKET": "/tmp/x/sock"}),
    (["--instance", "shop"], {}),
    ([], {"TABBARD_INSTANCE": "kiosk", "XDG_RUNTIME_DIR": "/r"}),
    ([], {"TABBARD_INSTANCE": "kiosk", "TABBARD_SOCKET": "/tmp/x/sock"}),
    (["--socket", "/tmp/a/explicit", "--instance", "shop"], {}),
]


def python_side(args: List[str], env: Dict[str, str]) -> str:
    explicit: Optional[str] = args[args.index("--socket") + 1] if "--socket" in args else None
    instance: Optional[str] = args[args.index("--instance") + 1] if "--instance" in args else None
    return tabbard.socket_path(explicit, instance, environ=env)


@pytest.mark.parametrize("args,env", CASES)
def test_the_path_tabbarctl_uses(args: List[str], env: Dict[str, str]) -> None:
    ctl = shutil.which("tabbarctl")
    assert ctl, "tabbarctl must be on PATH next to tabbard"
    full = {"PATH": os.environ.get("PATH", "")}
    full.update(env)
    r = subprocess.run([ctl, *args, "--timeout", "2000", "ping"], env=full, capture_output=True, text=True, timeout=20)
    m = re.search(r"cannot connect to (\S+):", r.stderr)
    assert m, r.stderr
    assert python_side(args, env) == m.group(1)


def test_other_users_and_instances() -> None:
    assert tabbard.socket_path(environ={}, uid=1000) == "/tmp/tabbard-1000/socket"
    assert tabbard.socket_path(environ={}, uid=0) == "/run/tabbard/socket"
    assert tabbard.socket_path(instance="a", environ={}, uid=1000) == "/tmp/tabbard-1000/a.socket"
    assert tabbard.instance_socket_path("a", environ={"XDG_RUNTIME_DIR": "/r"}) == "/r/tabbard/a.socket"
    for bad in ["", "a/b", ".", "..", "x" * 101]:
        assert not tabbard.is_valid_instance(bad)
        with pytest.raises(ValueError):
            tabbard.instance_socket_path(bad or "/")


def test_an_untrusted_fallback_directory_is_refused(tmp_path: "object") -> None:
    d = f"/tmp/tabbard-{os.getuid()}"
    if os.path.exists(d):
        pytest.fail(f"{d} exists on this machine; the test needs it absent")
    os.mkdir(d, 0o755)
    try:
        os.chmod(d, 0o755)
        with pytest.raises(tabbard.ConnectError) as e:
            tabbard.Client(f"{d}/socket")
        assert "mode 755" in e.value.message
    finally:
        os.rmdir(d)
