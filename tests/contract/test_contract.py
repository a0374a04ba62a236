#!/usr/bin/env python3
"""Independent conformance test for tabbard, written only from the published
contract (shared/design/PROTOCOL.md, protocol 1) and the "Done when" section of
the foundation issue -- not from the daemon's code.

Usage:
    python3 tests/contract/test_contract.py --daemon PATH/TO/tabbard --sounds PATH/TO/Sounds [unittest args]

Every test starts its own daemon
    tabbard --socket S --state F --audio null --sounds DIR
in a fresh temporary directory, waits until the socket accepts a connection
(polled against a deadline), and in tearDown checks that the daemon is still
running, stops it with SIGTERM and checks that it exits 0.

Python 3.11 standard library only.  The last line printed is
"N passed, M failed" (", K skipped" when any were skipped); the exit status is
1 when anything failed or errored.

Readings of the contract where it is not explicit (the most reasonable one is
chosen and stated here, and again next to the test that depends on it):

* `index` in `tab.select {"index": n}` is a 0-based position in `items`, the
  center item included (JSON arrays are 0-based; the contract says "no item with
  that id or index", i.e. an index names an item).
* Item input to `bar.configure` uses the Item field names; we always send
  `id`, `title`, `kind`, `enabled` and `icon`, never the computed fields.
* "message is a sentence a person can act on" is checked as: a non-empty string
  of at least two words that contains letters.  We do not demand a final period.
* A request object that has an `id` but no `method` is answered with
  `invalid_request`; the contract does not say whether the reply's `id` is the
  request's id or null (JSON-RPC 2.0 would give the id when it can be read), so
  both are accepted.  A line that is not an object (a number, an array) is
  answered with `id: null`.
* The `line_too_long` reply cannot carry the request's id (the line was
  discarded), so its id is not checked.  We stay well clear of the exact
  boundary (whether the limit counts the `\\n` is not stated).
* Blank lines: an empty line and a lone `\\r\\n` are blank.  Whitespace-only
  lines are not tested (not clearly "blank").
* Events: besides the event of a change (`tab.selected`, `badge.changed`, ...),
  the daemon may send events that carry the current seq without being a change
  (`animation.cue`) and events without seq (`sound.played`).  So "events arrive
  in seq order" is checked as non-decreasing over all events with a seq, and
  "no gaps" as: every seq produced by a change appears in exactly one
  change event, and the change events' seqs are consecutive.
* A `state.resync` to a subscriber that is actively reading on a local socket
  while 300 changes are made is treated as a failure (it would be a gap).
* Persistence: "seq ... starting at the persisted value" is read as: after a
  restart `state.get` returns exactly the seq that the last change produced.
* A badge `count` <= 0 means "no badge": the reply's `badge` and the item's
  `badge` are null.
* `sound.list` describes the sounds decoded from `--sounds` (issue 2: "decoded
  with libsndfile at start-up"), so every `NAME.wav` there is listed as NAME
  with the file's frames/rate/channels.  `source` is only checked to be a string.
* Frames are compared with a tolerance of 0.01 points (numbers may be floats).
"""

import argparse
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import wave

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rig"))
from tabbardclient import Client, ProtocolError  # noqa: E402  (one connection: hello, requests, replies, events)

DAEMON = None
SOUNDS = None
TABBARCTL = None
SCHEMA = None   # with --openrpc FILE: tests/openrpc/schemacheck.SchemaCheck of that document

TIMEOUT = 10.0          # seconds to wait for any specific message
START_TIMEOUT = 20.0    # seconds for the daemon's socket to accept
STOP_TIMEOUT = 10.0     # seconds for the daemon to exit after SIGTERM

# JSON-RPC codes of the contract's error table.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNKNOWN_TAB = -32001
NOT_SELECTABLE = -32002
CONFLICT = -32003
UNKNOWN_SOUND = -32004

# The bar used by most tests: home, nearby, a raised center "post", chat, me.
LAYOUT = {"width": 400, "height": 60, "safe_bottom": 10,
          "center": {"width": 72, "height": 64, "raise": 16, "shape": "circle"}}


def item(id_, kind="tab", title=None, enabled=True):
    return {"id": id_, "title": title or id_.capitalize(), "kind": kind,
            "enabled": enabled, "icon": id_ + ".icon"}


ITEMS = [item("home"), item("nearby"), item("post", "center", "Post"),
         item("chat"), item("me")]
TABS = ["home", "nearby", "chat", "me"]


def is_event(method, **params):
    def pred(msg):
        if msg.get("method") != method:
            return False
        p = msg.get("params", {})
        return all(p.get(k) == v for k, v in params.items())
    return pred


class CheckedClient(Client):
    """A Client that, with --openrpc, checks every line it reads against the OpenRPC document: a reply
    against its method's result schema or listed errors, a notification against its event's params."""

    def __init__(self, *a, **kw):
        self.methods = {}   # id (as JSON text) -> method, of the requests sent on this connection
        super().__init__(*a, **kw)

    def send_raw(self, data):
        text = data.decode(errors="replace") if isinstance(data, bytes) else data
        for line in text.replace("\r", "\n").split("\n"):
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and "id" in msg and isinstance(msg.get("method"), str):
                self.methods[json.dumps(msg["id"])] = msg["method"]
        return super().send_raw(data)

    def recv(self, timeout=None):
        msg = super().recv(timeout)
        if SCHEMA is not None and isinstance(msg, dict):
            if "id" in msg:
                SCHEMA.reply(self.methods.get(json.dumps(msg["id"])), msg)
            else:
                SCHEMA.notification(msg)
        return msg


class Daemon:
    def __init__(self, tmpdir, socket_path=None, state_path=None):
        self.tmpdir = tmpdir
        self.socket = socket_path or os.path.join(tmpdir, "s")
        self.state = state_path or os.path.join(tmpdir, "state.json")
        self.log_path = os.path.join(tmpdir, "daemon-%d.log" % time.monotonic_ns())
        self.proc = None

    def start(self):
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [DAEMON, "--socket", self.socket, "--state", self.state,
             "--audio", "null", "--sounds", SOUNDS],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise AssertionError("daemon exited with %s during start-up:\n%s"
                                     % (self.proc.returncode, self.log_text()))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.socket)
                s.close()
                return
            except OSError:
                s.close()
            if time.monotonic() > deadline:
                raise AssertionError("daemon socket did not accept within %ss:\n%s"
                                     % (START_TIMEOUT, self.log_text()))
            time.sleep(0.01)   # polling interval, bounded by the deadline above

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        """SIGTERM; returns (was_running, returncode)."""
        was_running = self.proc.poll() is None
        if was_running:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "did not exit within %ss of SIGTERM" % STOP_TIMEOUT
        self.log.close()
        return was_running, rc


class DaemonTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tabbard-contract-")
        self.tmpdir = self._tmp.name
        self.clients = []
        self.daemon = Daemon(self.tmpdir)
        self.daemon.start()

    def tearDown(self):
        for c in self.clients:
            c.close()
        self.clients = []
        try:
            was_running, rc = self.daemon.stop()
            self.assertTrue(was_running, "the daemon crashed during the test (exit status %s):\n%s"
                            % (self.daemon.proc.returncode, self.daemon.log_text()))
            self.assertEqual(rc, 0, "daemon exit status after SIGTERM:\n%s" % self.daemon.log_text())
        finally:
            self._tmp.cleanup()

    # -- helpers ---------------------------------------------------------
    def connect(self, read_hello=True):
        c = CheckedClient(self.daemon.socket, TIMEOUT, read_hello)
        self.clients.append(c)
        return c

    def configure(self, c=None, items=ITEMS, selected="home", layout=LAYOUT):
        c = c or self.connect()
        params = {"items": items}
        if selected is not None:
            params["selected"] = selected
        if layout is not None:
            params["layout"] = layout
        return c.call("bar.configure", params)

    def assertError(self, err, code, kind, field=None):
        self.assertIsInstance(err, dict, err)
        self.assertEqual(err.get("code"), code, err)
        self.assertEqual((err.get("data") or {}).get("kind"), kind, err)
        msg = err.get("message")
        self.assertIsInstance(msg, str, err)
        # "a sentence a person can act on": non-empty, at least two words, letters.
        self.assertTrue(msg.strip(), "empty error message: %r" % err)
        self.assertGreaterEqual(len(msg.split()), 2, "error message is not a sentence: %r" % err)
        self.assertRegex(msg, "[A-Za-z]", err)
        if field is not None:
            self.assertEqual(err["data"].get("field"), field, err)

    def assertErrorReply(self, rep, id_, code, kind, field=None):
        self.assertEqual(rep.get("jsonrpc"), "2.0", rep)
        self.assertIn("id", rep, rep)
        if id_ is not Ellipsis:
            self.assertEqual(rep["id"], id_, rep)
        self.assertNotIn("result", rep, rep)
        self.assertError(rep.get("error"), code, kind, field)

    def state_of(self, c):
        r = c.call("state.get")
        return r["seq"], r["state"]

    def item_of(self, state, id_):
        for it in state["items"]:
            if it["id"] == id_:
                return it
        self.fail("item %r not in state %r" % (id_, state))

    def assertFrame(self, frame, x, y, w, h, what=""):
        self.assertIsInstance(frame, dict, what)
        for k, v in (("x", x), ("y", y), ("w", w), ("h", h)):
            self.assertIsInstance(frame.get(k), (int, float), "%s frame %r" % (what, frame))
            self.assertAlmostEqual(frame[k], v, delta=0.01, msg="%s frame.%s: %r" % (what, k, frame))


# ---------------------------------------------------------------------------
class TestGreetingAndFraming(DaemonTest):

    def test_hello_greeting(self):
        c = self.connect(read_hello=False)
        hello = c.recv()
        self.assertEqual(hello.get("jsonrpc"), "2.0", hello)
        self.assertEqual(hello.get("method"), "hello", hello)
        self.assertNotIn("id", hello, "hello is a notification: %r" % hello)
        p = hello.get("params")
        self.assertIsInstance(p, dict, hello)
        self.assertEqual(p.get("server"), "tabbard", hello)
        self.assertIsInstance(p.get("version"), str, hello)
        self.assertRegex(p["version"], r"^\d+\.\d+\.\d+", "version is not semver: %r" % hello)
        self.assertEqual(p.get("protocol"), 1, hello)
        self.assertIsInstance(p.get("max_line"), int, hello)
        self.assertEqual(p["max_line"], 65536, "default max_line: %r" % hello)
        self.assertIsInstance(p.get("features"), list, hello)

    def test_hello_comes_first_even_if_client_writes_immediately(self):
        c = self.connect(read_hello=False)
        c.send("ping")   # {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        first = c.recv()
        self.assertEqual(first.get("method"), "hello", first)
        rep = c.recv()
        self.assertEqual(rep, {"jsonrpc": "2.0", "id": 1, "result": {}})

    def test_ping_and_optional_jsonrpc_and_params(self):
        c = self.connect()
        c.send_raw('{"id":1,"method":"ping"}\n')               # no jsonrpc, no params
        rep = c.recv()
        self.assertEqual(rep.get("jsonrpc"), "2.0", rep)
        self.assertEqual(rep.get("id"), 1, rep)
        self.assertEqual(rep.get("result"), {}, rep)
        c.send_raw('{"jsonrpc":"2.0","id":"s-2","method":"state.get","params":{}}\n')
        rep = c.recv()
        self.assertEqual(rep.get("id"), "s-2", rep)
        self.assertIsInstance(rep["result"].get("seq"), int, rep)
        self.assertIsInstance(rep["result"].get("state"), dict, rep)
        self.assertIsInstance(c.call("stats.get"), dict)

    def test_pipelined_replies_in_request_order(self):
        c = self.connect()
        self.configure(c)
        reqs = []
        for i in range(300):
            id_ = i if i % 3 else "req-%d" % i
            m = i % 5
            if m == 0:
                reqs.append({"jsonrpc": "2.0", "id": id_, "method": "ping"})
            elif m == 1:
                reqs.append({"jsonrpc": "2.0", "id": id_, "method": "state.get"})
            elif m == 2:
                reqs.append({"jsonrpc": "2.0", "id": id_, "method": "no.such.method"})
            elif m == 3:
                reqs.append({"jsonrpc": "2.0", "id": id_, "method": "tab.select",
                             "params": {"tab": TABS[(i // 5) % 4]}})
            else:
                reqs.append({"jsonrpc": "2.0", "id": id_, "method": "tab.select",
                             "params": {"tab": "nope"}})
        c.send_raw("".join(json.dumps(r) + "\n" for r in reqs))
        got = []
        for _ in reqs:
            msg = c.recv()
            while "id" not in msg:            # (not subscribed, but tolerate notifications)
                msg = c.recv()
            got.append(msg)
        self.assertEqual([m["id"] for m in got], [r["id"] for r in reqs])
        for r, m in zip(reqs, got):
            self.assertEqual(m.get("jsonrpc"), "2.0", m)
            if r["method"] == "no.such.method":
                self.assertErrorReply(m, r["id"], METHOD_NOT_FOUND, "method_not_found")
            elif r.get("params", {}).get("tab") == "nope":
                self.assertErrorReply(m, r["id"], UNKNOWN_TAB, "unknown_tab")
            else:
                self.assertIn("result", m, m)

    def test_crlf_accepted_and_blank_lines_ignored(self):
        c = self.connect()
        c.send_raw('\n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n\n\r\n\n'
                   '{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n\r\n')
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 1, "result": {}})
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 2, "result": {}})
        # Nothing was replied to the blank lines: the next message is the reply to 3.
        c.send_raw('{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 3, "result": {}})

    def test_line_too_long_keeps_connection(self):
        c = self.connect()
        max_line = c.hello["params"]["max_line"]
        # A valid request padded with JSON whitespace to well over max_line: if
        # the rest of the line were not discarded, its tail ("   }") would be
        # answered with a parse error.
        long_line = '{"jsonrpc":"2.0","id":1,"method":"ping"' + " " * (max_line + 1000) + "}\n"
        c.send_raw(long_line)
        c.send_raw('{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        rep = c.recv()
        self.assertErrorReply(rep, Ellipsis, INVALID_REQUEST, "line_too_long")
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 2, "result": {}},
                         "the connection must stay usable and the rest of the long line be discarded")
        # Same again, the long line arriving in several pieces.
        for k in range(0, 3 * max_line, 20000):
            c.send_raw(("{" if k == 0 else "") + " " * 20000)
        c.send_raw(' "id":3}\n{"jsonrpc":"2.0","id":4,"method":"ping"}\n')
        rep = c.recv()
        self.assertErrorReply(rep, Ellipsis, INVALID_REQUEST, "line_too_long")
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 4, "result": {}})
        # A line below the limit is fine (padded with whitespace, ~max_line-100 bytes).
        ok_line = '{"jsonrpc":"2.0","id":5,"method":"ping"' + " " * (max_line - 200) + "}\n"
        c.send_raw(ok_line)
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 5, "result": {}})

    def test_half_close_answers_everything_before_eof(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(s.close)
        s.settimeout(TIMEOUT)
        s.connect(self.daemon.socket)
        n = 100
        data = "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "state.get" if i % 2 else "ping"}) + "\n"
                       for i in range(n))
        s.sendall(data.encode())
        s.shutdown(socket.SHUT_WR)
        buf = b""
        deadline = time.monotonic() + TIMEOUT
        while True:
            if time.monotonic() > deadline:
                self.fail("no EOF within %ss after half-close; got %d bytes" % (TIMEOUT, len(buf)))
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
        lines = [json.loads(l) for l in buf.split(b"\n") if l.strip()]
        self.assertTrue(buf.endswith(b"\n"), "last reply not terminated by a newline")
        self.assertEqual(lines[0].get("method"), "hello", lines[0])
        replies = lines[1:]
        self.assertEqual([r.get("id") for r in replies], list(range(n)))
        for r in replies:
            self.assertIn("result", r, r)

    def test_half_close_single_request_like_socat(self):
        # echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | socat - UNIX-CONNECT:S
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(s.close)
        s.settimeout(TIMEOUT)
        s.connect(self.daemon.socket)
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
        lines = [json.loads(l) for l in buf.split(b"\n") if l.strip()]
        self.assertEqual(len(lines), 2, lines)
        self.assertEqual(lines[1], {"jsonrpc": "2.0", "id": 1, "result": {}})


# ---------------------------------------------------------------------------
class TestErrors(DaemonTest):

    def test_parse_error_has_null_id(self):
        c = self.connect()
        c.send_raw("this is not json\n")
        self.assertErrorReply(c.recv(), None, PARSE_ERROR, "parse_error")
        c.send_raw('{"jsonrpc":"2.0","id":7,"method":"ping"\n')   # truncated object
        self.assertErrorReply(c.recv(), None, PARSE_ERROR, "parse_error")
        self.assertEqual(c.call("ping"), {})

    def test_invalid_utf8_is_a_parse_error(self):
        # "UTF-8 JSON text": bytes that are not UTF-8 are not JSON text.
        c = self.connect()
        c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}\n')
        self.assertErrorReply(c.recv(), None, PARSE_ERROR, "parse_error")
        self.assertEqual(c.call("ping"), {})

    def test_invalid_request(self):
        c = self.connect()
        # Not an object at all -> id null.
        c.send_raw("42\n")
        self.assertErrorReply(c.recv(), None, INVALID_REQUEST, "invalid_request")
        c.send_raw('"ping"\n')
        self.assertErrorReply(c.recv(), None, INVALID_REQUEST, "invalid_request")
        # An object with an id but no method / a non-string method.  The
        # contract does not say which id the reply carries: the request's
        # (JSON-RPC 2.0's reading) or null; both accepted.
        c.send_raw('{"jsonrpc":"2.0","id":7}\n')
        rep = c.recv()
        self.assertIn(rep.get("id"), (7, None), rep)
        self.assertErrorReply(rep, Ellipsis, INVALID_REQUEST, "invalid_request")
        c.send_raw('{"jsonrpc":"2.0","id":8,"method":5}\n')
        rep = c.recv()
        self.assertIn(rep.get("id"), (8, None), rep)
        self.assertErrorReply(rep, Ellipsis, INVALID_REQUEST, "invalid_request")
        self.assertEqual(c.call("ping"), {})

    def test_batch_unsupported(self):
        c = self.connect()
        c.send_raw('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]\n')
        self.assertErrorReply(c.recv(), None, INVALID_REQUEST, "batch_unsupported")
        c.send_raw('[]\n')
        self.assertErrorReply(c.recv(), None, INVALID_REQUEST, "batch_unsupported")
        # Nothing of the batch was carried out or answered: next is the reply to 3.
        c.send_raw('{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        self.assertEqual(c.recv(), {"jsonrpc": "2.0", "id": 3, "result": {}})

    def test_method_not_found(self):
        c = self.connect()
        rep = c.call_raw("no.such.method", {})
        self.assertErrorReply(rep, rep.get("id"), METHOD_NOT_FOUND, "method_not_found")
        self.assertEqual(rep["id"], c.next_id - 1)

    def test_invalid_params_names_the_field(self):
        c = self.connect()
        self.configure(c)
        seq0, _ = self.state_of(c)
        self.assertError(c.call_error("badge.set", {"tab": "chat", "count": "three"}),
                         INVALID_PARAMS, "invalid_params", "count")
        self.assertError(c.call_error("badge.set", {"count": 3}),
                         INVALID_PARAMS, "invalid_params", "tab")
        self.assertError(c.call_error("tab.select", {"tab": "chat", "if_seq": "x"}),
                         INVALID_PARAMS, "invalid_params", "if_seq")
        self.assertError(c.call_error("tab.select", {"index": "one"}),
                         INVALID_PARAMS, "invalid_params", "index")
        self.assertError(c.call_error("sound.play", {}),
                         INVALID_PARAMS, "invalid_params", "name")
        self.assertError(c.call_error("bar.configure", {"items": "home"}),
                         INVALID_PARAMS, "invalid_params", "items")
        self.assertError(c.call_error("bar.configure", {}),
                         INVALID_PARAMS, "invalid_params", "items")
        # Neither "tab" nor "index": which field is named is not specified.
        self.assertError(c.call_error("tab.select", {}), INVALID_PARAMS, "invalid_params")
        self.assertError(c.call_error("tab.select"), INVALID_PARAMS, "invalid_params")
        self.assertError(c.call_error("tab.select", {"tab": "chat", "source": "robot"}),
                         INVALID_PARAMS, "invalid_params", "source")
        seq1, st = self.state_of(c)
        self.assertEqual(seq1, seq0, "a rejected request must not change state")
        self.assertEqual(st["selected"], "home")
        self.assertIsNone(self.item_of(st, "chat")["badge"])

    def test_touch_id_takes_the_safe_integers(self):
        c = self.connect()
        self.configure(c)
        top = 9007199254740991   # 2^53 - 1
        r = c.call("touch", {"phase": "down", "x": 1, "y": 1, "touch_id": top})
        self.assertIs(r.get("ignored", False), False, r)
        c.call("touch", {"phase": "cancel", "x": 1, "y": 1, "touch_id": top})
        for bad in (top + 1, -1, 2 ** 63):
            with self.subTest(touch_id=bad):
                err = c.call_error("touch", {"phase": "down", "x": 1, "y": 1, "touch_id": bad})
                self.assertError(err, INVALID_PARAMS, "invalid_params", "touch_id")
                self.assertIn("between 0 and 9007199254740991", err["message"])

    def test_unknown_tab(self):
        c = self.connect()
        self.configure(c)
        self.assertError(c.call_error("tab.select", {"tab": "nope"}), UNKNOWN_TAB, "unknown_tab")
        self.assertError(c.call_error("tab.select", {"index": 99}), UNKNOWN_TAB, "unknown_tab")
        self.assertError(c.call_error("badge.set", {"tab": "nope", "count": 1}), UNKNOWN_TAB, "unknown_tab")
        self.assertError(c.call_error("action.trigger", {"tab": "nope"}), UNKNOWN_TAB, "unknown_tab")

    def test_not_selectable(self):
        c = self.connect()
        items = [item("home"), item("off", enabled=False), item("post", "center", "Post"),
                 item("chat"), item("me")]
        self.configure(c, items=items)
        seq0, _ = self.state_of(c)
        self.assertError(c.call_error("tab.select", {"tab": "post"}), NOT_SELECTABLE, "not_selectable")
        # 0-based index 2 is the center item.
        self.assertError(c.call_error("tab.select", {"index": 2}), NOT_SELECTABLE, "not_selectable")
        self.assertError(c.call_error("tab.select", {"tab": "off"}), NOT_SELECTABLE, "not_selectable")
        seq1, st = self.state_of(c)
        self.assertEqual(seq1, seq0)
        self.assertEqual(st["selected"], "home")

    def test_conflict_via_if_seq(self):
        c = self.connect()
        self.configure(c)
        seq0, _ = self.state_of(c)
        self.assertError(c.call_error("tab.select", {"tab": "chat", "if_seq": seq0 - 1}),
                         CONFLICT, "conflict")
        self.assertError(c.call_error("tab.select", {"tab": "chat", "if_seq": seq0 + 5}),
                         CONFLICT, "conflict")
        seq1, st = self.state_of(c)
        self.assertEqual(seq1, seq0, "a conflicting select must not change state")
        self.assertEqual(st["selected"], "home")
        r = c.call("tab.select", {"tab": "chat", "if_seq": seq0})
        self.assertEqual(r["seq"], seq0 + 1, r)
        self.assertEqual(r["selected"], "chat", r)
        # The old seq is now stale.
        self.assertError(c.call_error("tab.select", {"tab": "me", "if_seq": seq0}),
                         CONFLICT, "conflict")

    def test_unknown_sound(self):
        c = self.connect()
        self.assertError(c.call_error("sound.play", {"name": "no-such-sound"}),
                         UNKNOWN_SOUND, "unknown_sound")


# ---------------------------------------------------------------------------
class TestNotifications(DaemonTest):

    def test_notifications_get_no_reply_but_are_carried_out(self):
        c = self.connect()
        self.configure(c)
        seq0, _ = self.state_of(c)
        c.send_raw('{"jsonrpc":"2.0","method":"tab.select","params":{"tab":"chat"}}\n'
                   '{"method":"badge.set","params":{"tab":"me","count":4}}\n'   # no jsonrpc either
                   '{"jsonrpc":"2.0","method":"ping"}\n'
                   '{"jsonrpc":"2.0","id":1,"method":"state.get"}\n')
        # Replies are in request order, so a reply to any notification would come first.
        rep = c.recv()
        self.assertEqual(rep.get("id"), 1, "notifications must get no reply: %r" % rep)
        st = rep["result"]["state"]
        self.assertEqual(st["selected"], "chat", "a notification is carried out")
        self.assertEqual((self.item_of(st, "me")["badge"] or {}).get("display"), "4", st)
        self.assertEqual(rep["result"]["seq"], seq0 + 2)

    def test_failing_notifications_get_no_error_either(self):
        c = self.connect()
        self.configure(c)
        c.send_raw('{"jsonrpc":"2.0","method":"no.such.method"}\n'
                   '{"jsonrpc":"2.0","method":"tab.select","params":{"tab":"nope"}}\n'
                   '{"jsonrpc":"2.0","method":"tab.select","params":{"tab":"post"}}\n'
                   '{"jsonrpc":"2.0","method":"badge.set","params":{"tab":"chat","count":"x"}}\n'
                   '{"jsonrpc":"2.0","method":"sound.play","params":{"name":"no-such-sound"}}\n'
                   '{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        rep = c.recv()
        self.assertEqual(rep, {"jsonrpc": "2.0", "id": 2, "result": {}},
                         "a notification must get no reply, not even an error")


# ---------------------------------------------------------------------------
class TestConfigure(DaemonTest):

    def test_configure_echoes_items_and_computes_presentation_and_frames(self):
        c = self.connect()
        seq_before, _ = self.state_of(c)
        r = self.configure(c)
        self.assertEqual(r["seq"], seq_before + 1, r)
        st = r["state"]
        self.assertEqual([i["id"] for i in st["items"]], [i["id"] for i in ITEMS])
        for sent, got in zip(ITEMS, st["items"]):
            for k in ("id", "title", "kind", "enabled", "icon"):
                self.assertEqual(got.get(k), sent[k], "item field %s: %r" % (k, got))
            self.assertIsNone(got.get("badge", "missing"), got)
            pres = got.get("presentation")
            self.assertIsInstance(pres, dict, got)
            self.assertEqual(pres.get("title"), sent["title"], got)
            self.assertEqual(pres.get("icon"), sent["icon"], got)
            self.assertIs(pres.get("morphed"), False, got)
        self.assertEqual(st["selected"], "home", st)
        for k in ("previous", "highlighted", "active_action", "visibility", "layout", "feedback"):
            self.assertIn(k, st, "State field %s missing" % k)
        self.assertIsNone(st["active_action"])
        self.assertEqual(st["layout"]["width"], LAYOUT["width"], st["layout"])
        # Geometry: center x=(400-72)/2=164, y=-16, 72x64.  The other four share
        # 400-72=328 -> 82 each, in order, 60-10=50 tall, from y=0.
        self.assertFrame(self.item_of(st, "post")["frame"], 164, -16, 72, 64, "post")
        self.assertFrame(self.item_of(st, "home")["frame"], 0, 0, 82, 50, "home")
        self.assertFrame(self.item_of(st, "nearby")["frame"], 82, 0, 82, 50, "nearby")
        self.assertFrame(self.item_of(st, "chat")["frame"], 236, 0, 82, 50, "chat")
        self.assertFrame(self.item_of(st, "me")["frame"], 318, 0, 82, 50, "me")
        # state.get agrees with the reply.
        seq, st2 = self.state_of(c)
        self.assertEqual(seq, r["seq"])
        self.assertEqual(st2["items"], st["items"])

    def test_unicode_titles_round_trip(self):
        c = self.connect()
        items = [item("a", title="Ünïcødé"), item("b", title="聊天 💬"), item("c", title="Me")]
        st = self.configure(c, items=items, selected="a")["state"]
        self.assertEqual([i["title"] for i in st["items"]], ["Ünïcødé", "聊天 💬", "Me"])
        self.assertEqual(self.item_of(st, "b")["presentation"]["title"], "聊天 💬")

    def test_frames_without_center_share_full_width(self):
        c = self.connect()
        layout = {"width": 300, "height": 49, "safe_bottom": 0,
                  "center": {"width": 60, "height": 60, "raise": 10, "shape": "rect"}}
        r = self.configure(c, items=[item("a"), item("b"), item("c")], selected="b", layout=layout)
        st = r["state"]
        self.assertEqual(st["selected"], "b")
        self.assertFrame(self.item_of(st, "a")["frame"], 0, 0, 100, 49, "a")
        self.assertFrame(self.item_of(st, "b")["frame"], 100, 0, 100, 49, "b")
        self.assertFrame(self.item_of(st, "c")["frame"], 200, 0, 100, 49, "c")

    def test_rect_center_geometry_three_items(self):
        c = self.connect()
        layout = {"width": 320, "height": 80, "safe_bottom": 30,
                  "center": {"width": 100, "height": 70, "raise": 25, "shape": "rect"}}
        r = self.configure(c, items=[item("a"), item("mid", "center"), item("b")], selected="a", layout=layout)
        st = r["state"]
        self.assertFrame(self.item_of(st, "mid")["frame"], 110, -25, 100, 70, "mid")
        self.assertFrame(self.item_of(st, "a")["frame"], 0, 0, 110, 50, "a")
        self.assertFrame(self.item_of(st, "b")["frame"], 210, 0, 110, 50, "b")

    def test_invalid_configurations_rejected_previous_bar_kept(self):
        c = self.connect()
        self.configure(c)
        c.call("badge.set", {"tab": "chat", "count": 2})
        seq0, st0 = self.state_of(c)
        bad = {
            "two centers": [item("a"), item("c1", "center"), item("b"), item("c2", "center"), item("d")],
            "center not in the middle": [item("c1", "center"), item("a"), item("b")],
            "center at the end": [item("a"), item("b"), item("c1", "center")],
            "even number with a center": [item("a"), item("c1", "center"), item("b"), item("d")],
        }
        for what, items in bad.items():
            with self.subTest(what):
                err = c.call_error("bar.configure", {"items": items, "selected": "a", "layout": LAYOUT})
                self.assertError(err, INVALID_PARAMS, "invalid_params")
                seq1, st1 = self.state_of(c)
                self.assertEqual(seq1, seq0, "a rejected configure must not change seq")
                self.assertEqual(st1, st0, "a rejected configure must keep the previous bar")


# ---------------------------------------------------------------------------
class TestSelect(DaemonTest):

    def test_select_by_id_and_index_previous_and_seq(self):
        c = self.connect()
        r = self.configure(c)
        seq = r["seq"]
        r = c.call("tab.select", {"tab": "chat"})
        self.assertEqual((r["seq"], r["selected"], r["previous"], r["reselected"]),
                         (seq + 1, "chat", "home", False), r)
        # By 0-based index: 4 -> "me", 1 -> "nearby", 0 -> "home".
        r = c.call("tab.select", {"index": 4})
        self.assertEqual((r["seq"], r["selected"], r["previous"], r["reselected"]),
                         (seq + 2, "me", "chat", False), r)
        r = c.call("tab.select", {"index": 1, "source": "program"})
        self.assertEqual((r["seq"], r["selected"], r["previous"], r["reselected"]),
                         (seq + 3, "nearby", "me", False), r)
        r = c.call("tab.select", {"index": 0, "source": "user"})
        self.assertEqual((r["seq"], r["selected"], r["previous"]), (seq + 4, "home", "nearby"), r)
        s, st = self.state_of(c)
        self.assertEqual(s, seq + 4, "a read carries the current seq")
        self.assertEqual(st["selected"], "home")
        self.assertEqual(st["previous"], "nearby")

    def test_reselect(self):
        sub = self.connect()
        c = self.connect()
        self.configure(c)
        c.call("tab.select", {"tab": "chat"})
        sub.call("subscribe")
        r = c.call("tab.select", {"tab": "chat"})
        self.assertIs(r.get("reselected"), True, r)
        self.assertEqual(r.get("selected"), "chat", r)
        ev = sub.wait_event(is_event("tab.reselected", tab="chat"), what="tab.reselected")
        self.assertEqual(ev["params"].get("seq"), r["seq"], "event seq = reply seq: %r" % ev)
        self.assertEqual(ev["params"].get("source"), "user", ev)
        _, st = self.state_of(c)
        self.assertEqual(st["selected"], "chat")

    def test_seq_increments_by_one_per_change(self):
        c = self.connect()
        r = self.configure(c)
        last = r["seq"]
        changes = [
            ("tab.select", {"tab": "nearby"}),
            ("badge.set", {"tab": "chat", "count": 3}),
            ("badge.set", {"tab": "me", "dot": True}),
            ("action.trigger", {"tab": "post"}),
            ("action.finish", {"tab": "post"}),
            ("badge.clear", {"tab": "chat"}),
            ("tab.select", {"index": 3}),
            ("bar.configure", {"items": ITEMS, "selected": "me", "layout": LAYOUT}),
        ]
        for m, p in changes:
            r = c.call(m, p)
            self.assertEqual(r.get("seq"), last + 1, "%s %r -> %r" % (m, p, r))
            last = r["seq"]
            self.assertEqual(c.call("state.get")["seq"], last, "read after %s" % m)
        # Reads and errors do not change seq.
        c.call("ping")
        c.call("sound.list")
        c.call_error("tab.select", {"tab": "nope"})
        self.assertEqual(c.call("state.get")["seq"], last)


# ---------------------------------------------------------------------------
class TestSubscribe(DaemonTest):

    def test_subscribe_snapshot_then_events_in_seq_order_without_gaps(self):
        a = self.connect()
        b = self.connect()
        self.configure(b)
        r = a.call("subscribe")
        self.assertIsInstance(r.get("seq"), int, r)
        self.assertIsInstance(r.get("state"), dict, r)
        sub_seq = r["seq"]
        self.assertEqual(r["state"]["selected"], "home")
        self.assertEqual(sub_seq, b.call("state.get")["seq"])

        # A reader thread drains `a` while `b` makes 300 pipelined changes.
        events = []
        stop = threading.Event()
        errors = []

        def reader():
            try:
                while not stop.is_set():
                    try:
                        msg = a.recv(timeout=0.2)
                    except ProtocolError as e:
                        if "timed out" in str(e):
                            continue
                        raise
                    events.append(msg)
            except Exception as e:   # reported below
                errors.append(e)

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        n = 300
        cycle = ["nearby", "chat", "me", "home"]
        reqs = []
        for i in range(n):
            if i % 2 == 0:
                reqs.append(b.request_obj("tab.select", {"tab": cycle[(i // 2) % 4]}))
            else:
                reqs.append(b.request_obj("badge.set", {"tab": "chat", "count": i}))
        b.send_raw("".join(json.dumps(q) + "\n" for q in reqs))
        replies = [b.reply(q["id"]) for q in reqs]
        expected = {}
        for q, rep in zip(reqs, replies):
            self.assertIn("result", rep, rep)
            expected[rep["result"]["seq"]] = q
        final = sub_seq + n
        self.assertEqual(sorted(expected), list(range(sub_seq + 1, final + 1)),
                         "each change must produce the next seq")

        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not errors:
            if any(e.get("params", {}).get("seq", -1) >= final and e.get("method") in ("tab.selected", "badge.changed")
                   for e in list(events)):
                break
            time.sleep(0.01)   # polling the reader thread's list, bounded by the deadline
        stop.set()
        t.join(5)
        self.assertFalse(errors, errors)
        self.assertFalse([e for e in events if "id" in e], "subscriber got unexpected replies")
        self.assertFalse([e for e in events if e.get("method") == "state.resync"],
                         "an actively reading subscriber got state.resync (lost events)")
        seqs = [e["params"]["seq"] for e in events if isinstance(e.get("params"), dict) and "seq" in e["params"]]
        self.assertEqual(seqs, sorted(seqs), "events must arrive in seq order")
        change_events = [e for e in events if e.get("method") in ("tab.selected", "badge.changed")]
        got = [e["params"]["seq"] for e in change_events]
        self.assertEqual(got, list(range(sub_seq + 1, final + 1)),
                         "change events must be consecutive seqs from the snapshot's seq+1 (no gaps)")
        for e in change_events:
            q = expected[e["params"]["seq"]]
            if q["method"] == "tab.select":
                self.assertEqual(e["method"], "tab.selected", e)
                self.assertEqual(e["params"].get("tab"), q["params"]["tab"], e)
                self.assertEqual(e["params"].get("source"), "user", e)
                self.assertIn("previous", e["params"], e)
            else:
                self.assertEqual(e["method"], "badge.changed", e)
                self.assertEqual(e["params"].get("tab"), "chat", e)
                self.assertEqual((e["params"].get("badge") or {}).get("value"), q["params"]["count"], e)

    # The topics a subscriber may give: every event name and every event name's first part.
    TOPICS = ["tab", "action", "badge", "bar", "animation", "feedback", "sound", "server", "state",
              "tab.selected", "tab.reselected", "tab.highlighted", "action.triggered", "action.finished",
              "badge.changed", "bar.configured", "bar.visibility", "animation.cue", "animation.began",
              "animation.ended", "feedback.changed", "sound.played", "sound.failed", "sound.suppressed", "server.stopping",
              "state.resync"]
    TYPOS = ["tabs", "tab.", "ta", "tab.selected.x", "Tab", "badge.change", ".selected"]

    def test_unknown_topic_refused_naming_it_and_the_topics(self):
        c = self.connect()
        for typo in self.TYPOS:
            with self.subTest(topic=typo):
                err = c.call_error("subscribe", {"topics": ["tab", typo]})
                self.assertError(err, INVALID_PARAMS, "invalid_params", "topics[1]")
                self.assertIn('"%s"' % typo, err["message"])
                for prefix in self.TOPICS[:9]:
                    self.assertRegex(err["message"], r"\b%s\b" % prefix, err)
        # The refused subscribe left the connection unsubscribed: a change sends it nothing.
        b = self.connect()
        r = self.configure(b)
        c.call("ping")
        self.assertFalse([e for e in c.events if e.get("method") == "bar.configured"], c.events)
        for topic in self.TOPICS:
            with self.subTest(topic=topic):
                self.assertIn("seq", c.call("subscribe", {"topics": [topic]}))

    def test_prefix_matches_at_a_dot(self):
        a = self.connect()
        b = self.connect()
        self.configure(b)
        a.call("subscribe", {"topics": ["tab"]})
        r = b.call("badge.set", {"tab": "chat", "count": 2})
        r = b.call("tab.select", {"tab": "chat"})
        ev = a.wait_event(is_event("tab.selected", seq=r["seq"]), what="tab.selected")
        self.assertEqual(ev["params"]["tab"], "chat")
        self.assertFalse([e for e in a.events if e.get("method") == "badge.changed"], a.events)

    def test_tabbarctl_monitor_takes_the_same_topics(self):
        # tabbarctl refuses a topic before it connects; a topic it takes fails only at the
        # connection (no daemon at this path). Every name the daemon takes, it takes, and
        # every name the daemon refuses, it refuses.
        missing = os.path.join(self.tmpdir, "no-daemon-here")
        for topic in self.TOPICS + self.TYPOS:
            with self.subTest(topic=topic):
                p = subprocess.run([TABBARCTL, "--socket", missing, "monitor", "--topics", topic],
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
                self.assertNotEqual(p.returncode, 0, p)
                refused_by_ctl = "there is no topic" in p.stderr
                self.assertTrue(refused_by_ctl or "cannot connect" in p.stderr, p.stderr)
                self.assertEqual(refused_by_ctl, topic in self.TYPOS, p.stderr)

    def test_unsubscribe_stops_events(self):
        a = self.connect()
        b = self.connect()
        self.configure(b)
        a.call("subscribe")
        r = b.call("tab.select", {"tab": "chat"})
        a.wait_event(is_event("tab.selected", seq=r["seq"]), what="tab.selected")
        self.assertEqual(a.call("unsubscribe"), {})
        a.events.clear()
        b.call("tab.select", {"tab": "me"})
        a.call("ping")
        self.assertFalse([e for e in a.events if e.get("method") == "tab.selected"],
                         "events after unsubscribe: %r" % a.events)


# ---------------------------------------------------------------------------
class TestBadges(DaemonTest):

    def test_badge_display_rules_and_events(self):
        sub = self.connect()
        c = self.connect()
        self.configure(c)
        sub.call("subscribe")
        cases = [
            ({"count": 3}, {"kind": "count", "value": 3, "display": "3"}),
            ({"count": 99}, {"kind": "count", "value": 99, "display": "99"}),
            ({"count": 120}, {"kind": "count", "value": 120, "display": "99+"}),
            ({"dot": True}, {"kind": "dot", "display": ""}),
            ({"text": "new"}, {"kind": "text", "value": "new", "display": "new"}),
            ({"count": 0}, None),
            ({"count": 5}, {"kind": "count", "value": 5, "display": "5"}),
            ({"count": -2}, None),
        ]
        for params, want in cases:
            with self.subTest(params=params):
                r = c.call("badge.set", dict(params, tab="chat"))
                self.assertIn("seq", r, r)
                badge = r.get("badge", "missing")
                if want is None:
                    self.assertIsNone(badge, "count <= 0 means no badge: %r" % r)
                else:
                    self.assertIsInstance(badge, dict, r)
                    for k, v in want.items():
                        self.assertEqual(badge.get(k), v, "badge.%s for %r: %r" % (k, params, badge))
                _, st = self.state_of(c)
                self.assertEqual(self.item_of(st, "chat")["badge"], badge, "state agrees with the reply")
                ev = sub.wait_event(is_event("badge.changed", seq=r["seq"]), what="badge.changed seq %d" % r["seq"])
                self.assertEqual(ev["params"].get("tab"), "chat", ev)
                self.assertEqual(ev["params"].get("badge"), badge, ev)
        c.call("badge.set", {"tab": "me", "count": 7})
        r = c.call("badge.clear", {"tab": "me"})
        self.assertIn("seq", r, r)
        _, st = self.state_of(c)
        self.assertIsNone(self.item_of(st, "me")["badge"])
        ev = sub.wait_event(is_event("badge.changed", seq=r["seq"]), what="badge.changed after clear")
        self.assertIsNone(ev["params"].get("badge", "missing"), ev)


# ---------------------------------------------------------------------------
class TestCenterButton(DaemonTest):

    def test_trigger_select_clears_finish(self):
        sub = self.connect()
        c = self.connect()
        self.configure(c)
        sub.call("subscribe")
        r = c.call("action.trigger", {"tab": "post"})
        self.assertIsInstance(r.get("seq"), int, r)
        _, st = self.state_of(c)
        self.assertEqual(st["active_action"], "post")
        self.assertEqual(st["selected"], "home", "triggering the center does not select it")
        ev = sub.wait_event(is_event("action.triggered", seq=r["seq"]), what="action.triggered")
        self.assertEqual(ev["params"].get("tab"), "post", ev)
        # Selecting a tab clears active_action.
        c.call("tab.select", {"tab": "chat"})
        _, st = self.state_of(c)
        self.assertIsNone(st["active_action"], "selecting a tab clears active_action")
        # action.finish clears it too.
        r1 = c.call("action.trigger", {"tab": "post"})
        self.assertEqual(c.call("state.get")["state"]["active_action"], "post")
        r2 = c.call("action.finish", {"tab": "post"})
        self.assertEqual(r2.get("seq"), r1["seq"] + 1, r2)
        self.assertIsNone(c.call("state.get")["state"]["active_action"])
        ev = sub.wait_event(is_event("action.finished", seq=r2["seq"]), what="action.finished")
        self.assertEqual(ev["params"].get("tab"), "post", ev)

    def test_action_item_with_action_name(self):
        c = self.connect()
        sub = self.connect()
        items = [item("home"), dict(item("rec", "action"), action="record"), item("me")]
        self.configure(c, items=items, layout={"width": 300, "height": 50, "safe_bottom": 0,
                                               "center": {"width": 60, "height": 60, "raise": 10, "shape": "rect"}})
        sub.call("subscribe")
        self.assertError(c.call_error("tab.select", {"tab": "rec"}), NOT_SELECTABLE, "not_selectable")
        r = c.call("action.trigger", {"tab": "rec"})
        self.assertEqual(c.call("state.get")["state"]["active_action"], "rec")
        ev = sub.wait_event(is_event("action.triggered", seq=r["seq"]), what="action.triggered")
        self.assertEqual(ev["params"].get("tab"), "rec", ev)
        self.assertEqual(ev["params"].get("action"), "record", ev)


# ---------------------------------------------------------------------------
class TestSounds(DaemonTest):

    def test_sound_list(self):
        c = self.connect()
        # Sounds arrive as they load after start-up; `loading` says when the list is whole.
        deadline = time.monotonic() + TIMEOUT
        r = c.call("sound.list")
        while r.get("loading") and time.monotonic() < deadline:
            time.sleep(0.01)   # polling interval, bounded by the deadline above
            r = c.call("sound.list")
        self.assertIs(r.get("loading"), False, r)
        self.assertEqual(r.get("failed"), [], r)
        sounds = r.get("sounds")
        self.assertIsInstance(sounds, list, r)
        by_name = {s.get("name"): s for s in sounds}
        self.assertIn("click", by_name, r)
        for s in sounds:
            with self.subTest(listed=s.get("name")):
                self.assertIsInstance(s.get("name"), str, s)
                self.assertIsInstance(s.get("frames"), int, s)
                self.assertGreater(s["frames"], 0, s)
                self.assertIsInstance(s.get("rate"), int, s)
                self.assertGreater(s["rate"], 0, s)
                self.assertIsInstance(s.get("channels"), int, s)
                self.assertGreaterEqual(s["channels"], 1, s)
                self.assertIsInstance(s.get("source"), str, s)
        self.assertEqual(by_name["click"]["rate"], 48000, "the issue: click.wav is 48 kHz")
        # The sounds are decoded from --sounds at start-up (issue 2, item 5), so
        # each shipped WAV file is listed under its stem with the file's own
        # frame count, rate and channel count (read here with the stdlib `wave`).
        wavs = sorted(f for f in os.listdir(SOUNDS) if f.endswith(".wav"))
        self.assertIn("click.wav", wavs)
        for f in wavs:
            with self.subTest(sound=f):
                with wave.open(os.path.join(SOUNDS, f)) as w:
                    want = {"frames": w.getnframes(), "rate": w.getframerate(),
                            "channels": w.getnchannels()}
                name = f[:-4]
                self.assertIn(name, by_name, "%s from --sounds is not listed: %r" % (f, sorted(by_name)))
                got = {k: by_name[name].get(k) for k in want}
                self.assertEqual(got, want, "sound.list entry %r vs the file %s" % (by_name[name], f))

    def test_sound_play_and_sound_played_event(self):
        sub = self.connect()
        c = self.connect()
        sub.call("subscribe")
        r = c.call("sound.play", {"name": "click"})
        self.assertIn("voice", r, r)
        ev = sub.wait_event(is_event("sound.played", voice=r["voice"]), what="sound.played")
        self.assertEqual(ev["params"].get("name"), "click", ev)
        self.assertError(c.call_error("sound.play", {"name": "nope"}), UNKNOWN_SOUND, "unknown_sound")


# ---------------------------------------------------------------------------
class TestConcurrency(DaemonTest):

    def test_16_concurrent_clients_unique_seqs(self):
        c0 = self.connect()
        self.configure(c0)
        start = c0.call("state.get")["seq"]
        nclients, per = 16, 25
        clients = [self.connect() for _ in range(nclients)]
        results = [None] * nclients
        errors = []
        barrier = threading.Barrier(nclients)

        def work(k):
            try:
                cl = clients[k]
                barrier.wait(TIMEOUT)
                seqs = []
                for i in range(per):
                    # Each text is unique, so every call is a real change.
                    r = cl.call("badge.set", {"tab": TABS[k % 4], "text": "c%d-%d" % (k, i)})
                    seqs.append(r["seq"])
                results[k] = seqs
            except Exception as e:
                errors.append((k, e))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(nclients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertFalse(errors, errors)
        all_seqs = [s for r in results for s in r]
        self.assertEqual(len(all_seqs), nclients * per)
        self.assertEqual(len(set(all_seqs)), len(all_seqs), "seqs must be unique")
        for r in results:
            self.assertEqual(r, sorted(r), "one client's seqs increase")
        final = c0.call("state.get")["seq"]
        self.assertEqual(final, start + nclients * per)
        self.assertEqual(sorted(all_seqs), list(range(start + 1, final + 1)))


# ---------------------------------------------------------------------------
class TestStop(DaemonTest):

    def test_sigterm_sends_server_stopping_to_subscribers(self):
        sub = self.connect()
        sub.call("subscribe")
        self.daemon.proc.send_signal(signal.SIGTERM)
        sub.wait_event(is_event("server.stopping"), what="server.stopping")
        deadline = time.monotonic() + TIMEOUT
        while not sub.eof and time.monotonic() < deadline:
            r, _, _ = select.select([sub.sock], [], [], deadline - time.monotonic())
            if r:
                sub._fill()
        self.assertTrue(sub.eof, "connection not closed after server.stopping")
        try:
            rc = self.daemon.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            rc = "still running %ss after SIGTERM" % STOP_TIMEOUT
        self.assertEqual(rc, 0, self.daemon.log_text())
        # A fresh daemon for tearDown's checks.
        self.daemon.log.close()
        self.daemon = Daemon(self.tmpdir, os.path.join(self.tmpdir, "s2"), os.path.join(self.tmpdir, "state2.json"))
        self.daemon.start()


# ---------------------------------------------------------------------------
class TestPersistence(DaemonTest):

    def test_state_restored_after_sigterm(self):
        c = self.connect()
        self.configure(c)
        c.call("tab.select", {"tab": "nearby"})
        c.call("tab.select", {"tab": "chat"})
        c.call("badge.set", {"tab": "me", "count": 120})
        c.call("badge.set", {"tab": "nearby", "dot": True})
        c.call("badge.set", {"tab": "home", "text": "new"})
        seq, st = self.state_of(c)
        for cl in self.clients:
            cl.close()
        self.clients = []
        was_running, rc = self.daemon.stop()
        self.assertTrue(was_running, "daemon crashed before SIGTERM")
        self.assertEqual(rc, 0, "exit status after SIGTERM:\n%s" % self.daemon.log_text())

        self.daemon = Daemon(self.tmpdir, self.daemon.socket, self.daemon.state)
        self.daemon.start()
        c = self.connect()
        seq2, st2 = self.state_of(c)
        self.assertEqual(seq2, seq, "seq starts at the persisted value")
        self.assertEqual([i["id"] for i in st2["items"]], [i["id"] for i in st["items"]])
        self.assertEqual(st2["selected"], "chat")
        for tab in ("home", "nearby", "chat", "me"):
            self.assertEqual(self.item_of(st2, tab)["badge"], self.item_of(st, tab)["badge"], tab)
        self.assertEqual(self.item_of(st2, "me")["badge"]["display"], "99+")
        r = c.call("tab.select", {"tab": "me"})
        self.assertEqual(r["seq"], seq + 1)
        self.assertEqual(r["previous"], "chat")


# ---------------------------------------------------------------------------
PROTOCOL_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "PROTOCOL.md")


def doc_examples(section):
    """The (shell, output) pairs of docs/PROTOCOL.md's `## section`: each ```sh block
    and the plain ``` block right after it."""
    with open(PROTOCOL_MD, encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## %s\n" % section)
    end = text.find("\n## ", start + 1)
    body = text[start:end if end >= 0 else len(text)]
    pairs = re.findall(r"```sh\n(.*?)```\n```\n(.*?)```", body, re.S)
    return pairs


class TestProtocolDocExamples(DaemonTest):
    """Every example of "What a client must know", run as written on a fresh daemon."""

    def test_what_a_client_must_know(self):
        pairs = doc_examples("What a client must know")
        self.assertEqual(len(pairs), 5, "one example for each of the five points")
        for k, (script, expected) in enumerate(pairs):
            with self.subTest(example=k):
                if k:   # each example on a daemon of its own, with no bar yet
                    was_running, rc = self.daemon.stop()
                    self.assertTrue(was_running and rc == 0, self.daemon.log_text())
                    d = os.path.join(self.tmpdir, "example-%d" % k)
                    os.mkdir(d)
                    self.daemon = Daemon(d)
                    self.daemon.start()
                p = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                                   env=dict(os.environ, S=self.daemon.socket), timeout=TIMEOUT)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, expected, script)

    def test_click_on_press(self):
        """docs/PROTOCOL.md's "Click on press" example, run as written on a fresh daemon."""
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            text = f.read()
        start = text.index("\n### Click on press\n")
        body = text[start:text.find("\n### ", start + 1)]
        pairs = re.findall(r"```sh\n(.*?)```\n```\n(.*?)```", body, re.S)
        self.assertEqual(len(pairs), 1)
        script, expected = pairs[0]
        p = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                           env=dict(os.environ, S=self.daemon.socket), timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, expected, script)


# ---------------------------------------------------------------------------
class CountingResult(unittest.TextTestResult):
    """Counts tests, not failure records: a test with several failing
    subtests, or failing in both the body and tearDown, is one failed test."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.failed_ids = set()

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.failed_ids.add(test.id())

    def addError(self, test, err):
        super().addError(test, err)
        self.failed_ids.add(test.id())

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.failed_ids.add(test.id())

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.failed_ids.add(test.id())


def main():
    global DAEMON, SOUNDS, TABBARCTL, SCHEMA
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True, help="path to the tabbard binary")
    ap.add_argument("--sounds", required=True, help="the Sounds directory")
    ap.add_argument("--tabbarctl", help="path to tabbarctl (default: beside the daemon)")
    ap.add_argument("--openrpc", help="check every reply and event against this OpenRPC document "
                    "(docs/openrpc.json; needs jsonschema: make openrpc-deps)")
    args, rest = ap.parse_known_args()
    DAEMON = os.path.abspath(args.daemon)
    SOUNDS = os.path.abspath(args.sounds)
    TABBARCTL = os.path.abspath(args.tabbarctl or os.path.join(os.path.dirname(DAEMON), "tabbarctl"))
    if args.openrpc:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "openrpc"))
        import schemacheck
        with open(args.openrpc, encoding="utf-8") as f:
            SCHEMA = schemacheck.SchemaCheck(json.load(f))
    for exe in (DAEMON, TABBARCTL):
        if not os.access(exe, os.X_OK):
            print("not an executable: %s" % exe, file=sys.stderr)
            return 1
    prog = unittest.main(module=__name__, argv=[sys.argv[0]] + rest, exit=False,
                         testRunner=unittest.TextTestRunner(resultclass=CountingResult, verbosity=2))
    res = prog.result
    failed = len(res.failed_ids)
    skipped = len({t.id() for t, _ in res.skipped} - res.failed_ids)
    # Errors outside any test (setUpClass, module import) have ids of their own
    # and are counted as failed without being in testsRun.
    passed = max(0, res.testsRun - skipped - len(res.expectedFailures)
                 - len([i for i in res.failed_ids if not i.startswith(("setUpClass", "tearDownClass", "setUpModule"))]))
    if SCHEMA is not None:
        print("checked against the OpenRPC document: %(replies)d results, %(errors)d errors, %(events)d events"
              % SCHEMA.counts, flush=True)
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    sys.stdout.flush()
    print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
