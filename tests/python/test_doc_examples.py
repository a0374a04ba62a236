"""Every Python example of docs/PYTHON.md and clients/python/README.md, run as written in a fresh
directory: `# test_*.py` blocks with pytest (the plugin comes from the installed package's entry
point, nothing else is there), the others as scripts against a real daemon."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from typing import List, Tuple

import pytest

import tabbard
from conftest import RealDaemon

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["docs/PYTHON.md", "clients/python/README.md"]


def blocks() -> List[Tuple[str, int, str]]:
    found = []
    for doc in DOCS:
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            found.append((doc, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return found


ALL = blocks()
TESTS = [b for b in ALL if b[2].startswith("# test_")]
SCRIPTS = [b for b in ALL if not b[2].startswith("# test_")]


def test_the_docs_have_examples() -> None:
    assert len(TESTS) >= 3 and len(SCRIPTS) >= 3


@pytest.mark.parametrize("doc,line,code", TESTS, ids=[f"{d}:{n}" for d, n, _ in TESTS])
def test_pytest_example(doc: str, line: int, code: str) -> None:
    with tempfile.TemporaryDirectory(prefix="tabbard-example-") as project:
        name = code.splitlines()[0][2:].strip()
        with open(os.path.join(project, name), "w") as f:
            f.write(code)
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name], cwd=project,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{doc}:{line}\n{r.stdout}\n{r.stderr}"
        assert "1 passed" in r.stdout


@pytest.mark.parametrize("doc,line,code", SCRIPTS, ids=[f"{d}:{n}" for d, n, _ in SCRIPTS])
def test_script_example(doc: str, line: int, code: str, real_daemon: RealDaemon) -> None:
    with tempfile.TemporaryDirectory(prefix="tabbard-example-") as project:
        with open(os.path.join(project, "example.py"), "w") as f:
            f.write(code)
        env = dict(os.environ, TABBARD_SOCKET=real_daemon.socket_path)
        r = subprocess.run([sys.executable, "example.py"], cwd=project, env=env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, f"{doc}:{line}\n{r.stdout}\n{r.stderr}"
        assert r.stdout.strip(), "the example printed nothing"
    with tabbard.Client(real_daemon.socket_path) as c:
        st = c.state_get()["state"]
        assert st["selected"] in ("chat", "home")  # what the examples select last


def test_fresh_virtualenv_install_runs_the_readme_example(real_daemon: RealDaemon) -> None:
    """`pip install ./clients/python` into a new virtualenv (pip's own isolated build), then the
    README's first example with that Python."""
    readme = [code for doc, _, code in SCRIPTS if doc == "clients/python/README.md"][0]
    with tempfile.TemporaryDirectory(prefix="tabbard-venv-") as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=120)
        r = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", os.path.join(ROOT, "clients", "python")],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        with open(os.path.join(tmp, "example.py"), "w") as f:
            f.write(readme)
        env = dict(os.environ, TABBARD_SOCKET=real_daemon.socket_path)
        r = subprocess.run([os.path.join(venv, "bin", "python"), "example.py"], cwd=tmp, env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        lines = r.stdout.splitlines()
        assert lines[0] == "selected: home" and lines[-1].startswith("tab.selected ")
        # The installed package is a real installation: py.typed and the plugin's entry point.
        r = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                            "import importlib.metadata as m, importlib.resources as r, tabbard; "
                            "eps = m.entry_points(); "
                            "eps = eps.select(group='pytest11') if hasattr(eps, 'select') else eps.get('pytest11', []); "
                            "print([e.value for e in eps if e.name == 'tabbard']); "
                            "print(r.files('tabbard').joinpath('py.typed').is_file())"],
                           capture_output=True, text=True, timeout=60)
        assert r.stdout.split() == ["['tabbard.pytest_plugin']", "True"], r.stdout + r.stderr
