#!/usr/bin/env python3
"""The OpenRPC document (issue 36): what `rpc.discover` answers is docs/openrpc.json byte for byte, its
methods are exactly hello.features, it loads into the `openrpc` package's pydantic model (PyPI, code
nobody here wrote), `openrpcclientgenerator` generates a Python client from it with a call for every
method, every schema in it is a valid JSON Schema (`jsonschema`), and docs/PROTOCOL.md's method
headings and event tables name what it names (event params included).

    .build/openrpc-venv/bin/python tests/openrpc/test_openrpc.py --daemon .build/debug/tabbard --sounds Sounds
"""

import argparse
import json
import os
import py_compile
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "rig"))
sys.path.insert(0, HERE)
from tabbardclient import Client  # noqa: E402
from daemon import Daemon  # noqa: E402
import discover  # noqa: E402
import schemacheck  # noqa: E402

DAEMON = SOUNDS = None
DOC_FILE = os.path.join(ROOT, "docs", "openrpc.json")
PROTOCOL_MD = os.path.join(ROOT, "docs", "PROTOCOL.md")


class TestDocument(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tabbard-openrpc-")
        cls.daemon = Daemon(DAEMON, SOUNDS, cls.tmp.name)
        cls.client = Client(cls.daemon.socket, 10.0)
        cls.doc = cls.client.call("rpc.discover")

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.daemon.stop()
        cls.tmp.cleanup()

    def test_docs_openrpc_json_is_what_the_daemon_serves(self):
        with open(DOC_FILE, encoding="utf-8") as f:
            on_disk = f.read()
        self.assertTrue(on_disk == discover.text(self.doc),
                        "docs/openrpc.json differs from what rpc.discover answers: run `make openrpc`")

    def test_methods_are_exactly_hello_features(self):
        features = self.client.hello["params"]["features"]
        names = [m["name"] for m in self.doc["methods"]]
        self.assertEqual(sorted(set(features) - set(names)), [], "in hello.features, not in the document")
        self.assertEqual(sorted(set(names) - set(features)), [], "in the document, not in hello.features")
        self.assertEqual(len(names), len(set(names)), "a method is in the document twice")
        self.assertIn("rpc.discover", names)

    def test_every_schema_is_a_json_schema_and_every_error_code_is_the_kinds(self):
        check = schemacheck.SchemaCheck(self.doc)   # check_schema on every one
        self.assertEqual(len(check.results), len(self.doc["methods"]))
        for m in self.doc["methods"]:
            ps = m["x-params-schema"]
            self.assertIs(ps.get("additionalProperties"), False, m["name"])
            self.assertEqual(sorted(ps["properties"]), sorted(p["name"] for p in m["params"]), m["name"])
            self.assertEqual(sorted(ps.get("required", [])), sorted(p["name"] for p in m["params"] if p["required"]), m["name"])
            kinds = [e["data"]["kind"] for e in m["errors"]]
            self.assertIn("invalid_params", kinds, m["name"])
            self.assertEqual("storage_failed" in kinds, m["x-changes-state"], m["name"])
        for e in self.doc["x-events"]:
            self.assertEqual(e["topics"], [e["name"].split(".")[0], e["name"]])

    def test_loads_into_the_openrpc_packages_model(self):
        from openrpc import OpenRPC
        model = OpenRPC(**self.doc)
        self.assertEqual([m.name for m in model.methods], [m["name"] for m in self.doc["methods"]])
        select = next(m for m in model.methods if m.name == "tab.select")
        self.assertEqual([p.name for p in select.params], ["tab", "index", "if_seq", "source"])
        self.assertEqual(model.info.title, "tabbard")

    def test_openrpcclientgenerator_generates_a_python_client(self):
        from openrpc import OpenRPC
        from openrpcclientgenerator import Language, generate
        with tempfile.TemporaryDirectory(prefix="tabbard-orpc-gen-") as out:
            name = generate(OpenRPC(**self.doc), Language.PYTHON, "http://127.0.0.1:1/unused", Path(out))
            client = Path(out, "python", name, name.replace("-", "_"), "client.py")
            py_compile.compile(str(client), doraise=True)
            source = client.read_text()
            for m in self.doc["methods"]:
                self.assertIn('method_name="%s"' % m["name"], source, "no call for %s in the generated client" % m["name"])
            # Param names, types and defaults as the document says: touch's x is a float, touch_id optional.
            self.assertRegex(source, r"async def touch\(\s*self, phase: str, x: float, y: float, touch_id: int = Undefined\s*\)")

    def test_protocol_md_names_every_method_and_event_and_no_other(self):
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            md = f.read()
        headed = set()
        for line in md.splitlines():
            if line.startswith("### ") and "→" in line:
                headed |= set(re.findall(r"`([a-z_.]+)`", line))
        harness = md[md.index("## Test harness"):]
        headed |= set(re.findall(r"^\| `([a-z_.]+)` \|", harness.split("\n\n| code")[0], re.M))
        names = {m["name"] for m in self.doc["methods"]}
        self.assertEqual(sorted(names - headed), [], "methods PROTOCOL.md does not head")
        self.assertEqual(sorted(headed - names), [], "PROTOCOL.md heads methods the daemon does not serve")

        rows = {}
        for table in ("\n## Events\n", "\n### Events added\n"):
            body = md[md.index(table):]
            body = body[:body.index("\n\n", body.index("|"))]
            for name, params in re.findall(r"^\| `([a-z_.]+)` \| `?([^|`]*)`? \|", body, re.M):
                rows[name] = params
        events = {e["name"]: e for e in self.doc["x-events"]}
        self.assertEqual(sorted(rows), sorted(events), "PROTOCOL.md's event tables against x-events")
        for name, params in rows.items():
            with self.subTest(event=name):
                listed = {p.strip().rstrip("?") for p in params.split(",") if p.strip() and p.strip() != "{}"}
                optional = {p.strip().rstrip("?") for p in params.split(",") if p.strip().endswith("?")}
                schema = events[name]["params"]
                self.assertEqual(listed, set(schema["properties"]), "params of %s" % name)
                self.assertEqual(listed - optional, set(schema.get("required", [])), "required params of %s" % name)


class TestProtocolMdExamples(unittest.TestCase):
    """The examples of PROTOCOL.md's "The OpenRPC document", run as written."""

    def section(self):
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            md = f.read()
        start = md.index("\n## The OpenRPC document\n")
        end = md.find("\n## ", start + 1)
        return md[start:end if end >= 0 else len(md)]

    def test_rpc_discover_example(self):
        (script, expected), = re.findall(r"```sh\n(.*?)```\n```\n(.*?)```", self.section(), re.S)
        with tempfile.TemporaryDirectory(prefix="tabbard-openrpc-ex-") as tmp:
            d = Daemon(DAEMON, SOUNDS, tmp)
            try:
                p = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                                   env=dict(os.environ, S=d.socket), timeout=20)
            finally:
                d.stop()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, expected)

    def test_client_generator_example_prints_what_the_doc_shows(self):
        section = self.section()
        (script,) = re.findall(r"```python\n(.*?)```", section, re.S)
        shown = re.findall(r"```\n(    .*?)```", section, re.S)
        self.assertEqual(len(shown), 2)
        with tempfile.TemporaryDirectory(prefix="tabbard-openrpc-gen-ex-") as tmp:
            Path(tmp, "gen.py").write_text(script)
            p = subprocess.run([sys.executable, "gen.py", os.path.abspath(DOC_FILE)], cwd=tmp, capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        for part in shown:
            self.assertIn(part, p.stdout)


def main():
    global DAEMON, SOUNDS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    a, rest = ap.parse_known_args()
    DAEMON, SOUNDS = os.path.abspath(a.daemon), os.path.abspath(a.sounds)
    prog = unittest.main(module=__name__, argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
