#!/usr/bin/env python3
"""The schemas hold on the wire, tried by generated requests (issue 36): for every method of the document
`rpc.discover` answers, Hypothesis with hypothesis-jsonschema (PyPI) generates params valid by the method's
`x-params-schema` and sends them to a real daemon. The daemon never answers `internal_error`, never refuses a
schema-valid request with `invalid_params` unless the document lists that refusal for the field it names (a
rule between items, or one that depends on the state), returns only errors the method lists, and every reply
and event it sends matches the document. Then each valid request is broken one way the schema forbids — an
unknown field, a required field left out, a value of another JSON type, out of its range, not in its enum,
longer than its `x-maxBytes` — and the daemon refuses it with `invalid_params` naming that field.

Seeded (derandomize=True, no example database): the same requests every run. EXAMPLES per method bounds the
run (about 15 s on a debug build, 30 s on a busy machine).

    .build/openrpc-venv/bin/python tests/openrpc/test_properties.py --daemon .build/debug/tabbard --sounds Sounds
"""

import argparse
import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
# (Hypothesis keeps its files here, not in the directory it is run from.)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(HERE, "..", "..", ".build", "hypothesis"))

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema

sys.path.insert(0, os.path.join(HERE, "..", "..", "rig"))
sys.path.insert(0, HERE)
from tabbardclient import Client  # noqa: E402
from daemon import Daemon  # noqa: E402
import schemacheck  # noqa: E402

DAEMON = SOUNDS = None
EXAMPLES = 40

BAR = {"items": [{"id": "home", "title": "Home"}, {"id": "post", "kind": "center", "title": "Post"},
                 {"id": "me", "title": "Me"}], "selected": "home"}

# A value of each JSON type but null (a field given as null is not given: never a type error).
OTHER_TYPES = [True, "x", 1.5, 7, [], {}]


def json_type(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def allowed_types(schema):
    """The JSON types a property's schema allows (None: it does not say)."""
    if "const" in schema:
        return {json_type(schema["const"])}
    if "type" in schema:
        t = schema["type"]
        types = set(t if isinstance(t, list) else [t])
        return types | ({"integer"} if "number" in types else set())
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = [allowed_types(s) for s in schema[key]]
            return None if None in parts else set().union(*parts)
    return None


def breakages(schema, params):
    """(field, broken params) pairs: each a way the document forbids, which the daemon must refuse naming field."""
    props, required = schema["properties"], schema.get("required", [])
    out = [("zz_unknown", dict(params, zz_unknown=1))]
    for name in required:
        out.append((name, {k: v for k, v in params.items() if k != name}))
    for name, value in params.items():
        s = props[name]
        types = allowed_types(s)
        if types is not None:
            for bad in OTHER_TYPES:
                if json_type(bad) not in types:
                    out.append((name, dict(params, **{name: bad})))
        if s.get("type") == "integer":
            if s.get("maximum", 0) < 2 ** 53 - 1:
                out.append((name, dict(params, **{name: s["maximum"] + 1})))
            if s.get("minimum", 0) > -(2 ** 53 - 1):
                out.append((name, dict(params, **{name: s["minimum"] - 1})))
            out.append((name, dict(params, **{name: 2 ** 53})))
        if s.get("type") == "number" and "maximum" in s:
            out.append((name, dict(params, **{name: s["maximum"] + 1})))
            out.append((name, dict(params, **{name: s["minimum"] - 1})))
        if "enum" in s:
            out.append((name, dict(params, **{name: "no-such-" + name})))
        if "x-maxBytes" in s:
            out.append((name, dict(params, **{name: "a" * (s["x-maxBytes"] + 1)})))
    return out


def field_listed(errors, field):
    """Whether `errors` lists an invalid_params a schema-valid request can get for `field`."""
    for e in errors:
        f = e["data"].get("field")
        if e["data"]["kind"] == "invalid_params" and f is not None:
            if field == f or (f.endswith((".", "[")) and field.startswith(f)) or field.startswith(f + "[") or field.startswith(f + "."):
                return True
    return False


class TestGeneratedRequests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tabbard-props-")
        # (The real clock: clock.advance is refused with clock_not_manual, a listed error. On the manual
        # clock an advance of up to an hour renders that hour of audio before it answers.)
        cls.daemon = Daemon(DAEMON, SOUNDS, cls.tmp.name)
        cls.client = Client(cls.daemon.socket, 10.0)
        # A second connection subscribed to every event: what the requests publish, checked too.
        cls.watcher = Client(cls.daemon.socket, 10.0)
        cls.watcher.call("subscribe")
        cls.doc = cls.client.call("rpc.discover")
        cls.check = schemacheck.SchemaCheck(cls.doc)
        cls.check.notification(cls.client.hello)
        cls.sent = {"valid": 0, "invalid": 0}

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.watcher.close()
        cls.daemon.stop()
        cls.tmp.cleanup()
        print("sent %(valid)d schema-valid and %(invalid)d broken requests" % cls.sent, file=sys.stderr)

    def setUp(self):
        self.assertTrue(self.daemon.alive(), self.daemon.log_text())
        self.client.call("bar.configure", BAR)

    def send(self, method, params):
        rep = self.client.call_raw(method, params)
        self.check.reply(method, rep)      # the result's schema, or an error the method lists
        self.watcher.call("ping")   # (its reply comes after the events of every change made before it)
        for c in (self.client, self.watcher):
            for ev in c.events:
                self.check.notification(ev)
            c.events.clear()
        if "error" in rep:
            # (Params are JSON the schema allows: never a refusal of the line itself, never a crash.)
            self.assertNotIn(rep["error"]["data"]["kind"], ("internal_error", "parse_error", "invalid_request", "method_not_found"),
                             (method, json.dumps(params)[:300], rep))
        return rep

    def strategy(self, m):
        schema = m["x-params-schema"]
        if m["name"] == "capture.start":
            # Never a file outside this test's directory.
            return st.builds(lambda n: {"path": os.path.join(self.tmp.name, "cap%d.wav" % n)}, st.integers(0, 3))
        return from_schema(schema)

    def run_method(self, m):
        schema = m["x-params-schema"]
        errors = m["errors"]

        @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(self.strategy(m))
        def valid_then_broken(params):
            self.assertTrue(self.check.params_valid(m["name"], params), params)
            self.sent["valid"] += 1
            rep = self.send(m["name"], params)
            if "error" in rep:
                err = rep["error"]
                if err["data"]["kind"] == "invalid_params":
                    self.assertTrue(field_listed(errors, err["data"].get("field", "")),
                                    "%s refused schema-valid params %s: %s" % (m["name"], json.dumps(params)[:300], err))
            if m["name"] == "capture.start" and "result" in rep:
                self.send("capture.stop", None)
            for field, broken in breakages(schema, params):
                self.assertFalse(self.check.params_valid(m["name"], broken), (field, broken))
                self.sent["invalid"] += 1
                rep = self.send(m["name"], broken)
                self.assertIn("error", rep, "%s took %s" % (m["name"], json.dumps(broken)[:300]))
                self.assertEqual(rep["error"]["data"]["kind"], "invalid_params", (broken, rep))
                self.assertEqual(rep["error"]["data"].get("field"), field, (broken, rep))

        valid_then_broken()

    def test_every_method(self):
        started = time.monotonic()
        for m in self.doc["methods"]:
            with self.subTest(method=m["name"]):
                self.run_method(m)
        self.assertGreater(self.check.counts["events"], 0, "no event was checked")
        print("checked %d results, %d errors, %d events in %.1f s" % (
            self.check.counts["replies"], self.check.counts["errors"], self.check.counts["events"],
            time.monotonic() - started), file=sys.stderr)


def main():
    global DAEMON, SOUNDS, EXAMPLES
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--examples", type=int, default=EXAMPLES, help="schema-valid requests per method")
    a, rest = ap.parse_known_args()
    DAEMON, SOUNDS, EXAMPLES = os.path.abspath(a.daemon), os.path.abspath(a.sounds), a.examples
    prog = unittest.main(module=__name__, argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
