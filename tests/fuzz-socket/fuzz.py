#!/usr/bin/env python3
"""Outside-style fuzzer over the real socket (issue 13): drives the real tabbard binary
from several connections with valid requests of every method (boundary params), mutated
lines, random bytes, partial lines and half-closes, connection churn and slow
subscribers, and checks invariants all the while:

- every request with an id gets exactly one whole reply, in order;
- every subscriber's events have seq +1 (a state.resync resets what it knows);
- state.get on a subscriber agrees with the events it saw;
- ping is answered within 1 s; the daemon's RSS stays bounded;
- kill -9 and a restart give the last acknowledged state.

Seeded (the seed is printed; --seed repeats a run) and bounded (--seconds).
Exit status 0: no finding; 1: findings (each printed with the seed).
"""
import argparse, json, os, random, select, signal, socket, subprocess, sys, tempfile, time

LIVE_KEYS = ("items", "selected", "feedback", "settings")  # what a restart must keep exactly
TABS = ["home", "nearby", "post", "chat", "me"]


class Finding(Exception):
    pass


def huge_numbers(r):
    return r.choice([0, -1, 1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**64, -2**63, 1e308, -1e308, 1.5, 1e18, 10**40])


def params_for(method, r):
    tab = r.choice(TABS + ["", "nope", "x" * r.choice([1, 64, 65, 300])])
    n = huge_numbers(r) if r.random() < 0.2 else r.randint(0, 120)
    choices = {
        "tab.select": [{"tab": tab}, {"tab": tab, "source": r.choice(["tap", "key", "api", 3])}, {}],
        "badge.set": [{"tab": tab, "count": n}, {"tab": tab, "dot": r.choice([True, False])}, {"tab": tab, "text": "é" * r.randint(0, 20)}],
        "badge.clear": [{"tab": tab}, {}],
        "action.trigger": [{"tab": "post"}, {"tab": tab}],
        "action.finish": [{"tab": "post"}, {}],
        "feedback.set": [{"volume": r.choice([0, 0.5, 1, 1.01, -0.1, n])}, {"profile": r.choice(["silent", "subtle", "normal", "loud", "??"])}],
        "sound.play": [{"name": r.choice(["click", "center", "nope", ""])}, {"name": "click", "gain": r.random()}],
        "touch": [{"phase": r.choice(["began", "moved", "ended", "cancelled"]), "x": r.uniform(-50, 400), "y": r.uniform(-30, 60)}],
        "tab.highlight": [{"tab": tab}, {"tab": None}],
        "bar.set_hidden": [{"hidden": r.choice([True, False])}, {"hidden": r.choice([True, False]), "reason": "fuzz"}],
        "nav.push": [{"id": "v%d" % r.randint(0, 5), "hides_bar": r.choice([True, False])}],
        "nav.pop": [{}, {"id": "v%d" % r.randint(0, 5)}],
        "scroll": [{"delta": r.uniform(-200, 200)}, {"offset": n}],
        "animation.begin": [{"tab": tab, "kind": r.choice(["bounce", "pulse", "x"]), "duration_ms": r.choice([0, 1, 50, 300, 10**9])}],
        "animation.end": [{"animation": r.randint(0, 50)}, {}],
        "bar.configure": [{"items": [{"id": t, "title": t.title(), "kind": "tab"} for t in r.sample(TABS, r.randint(1, 5))]}, {"items": []}],
        "subscribe": [{}, {"topics": r.sample(["tab", "badge", "bar", "animation", "feedback"], 2)}],
        "sound.reload": [{}],
    }
    return r.choice(choices.get(method, [{}, None, [], {"x": n}]))


class Conn:
    """A blocking-on-demand client connection with its own line buffer."""

    def __init__(self, path, name):
        self.name = name
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(15)
        self.s.connect(path)
        self.buf = b""
        self.next_id = 1
        self.last_seq = None      # subscribers: last seq seen (events or resync)
        self.subscribed = False
        self.must_resync = False
        hello = self.read_msg()
        if hello.get("method") != "hello":
            raise Finding("%s: first line is not hello: %r" % (name, hello))

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass

    def send(self, data):
        self.s.sendall(data)

    def read_line(self, timeout=15):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Finding("%s: no line within %.0f s" % (self.name, timeout))
            r, _, _ = select.select([self.s], [], [], left)
            if not r:
                continue
            chunk = self.s.recv(1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def read_msg(self, timeout=15):
        line = self.read_line(timeout)
        if line is None:
            return None
        try:
            m = json.loads(line)
        except ValueError:
            raise Finding("%s: a line that is not whole JSON: %r…%r" % (self.name, line[:120], line[-120:]))
        if not isinstance(m, dict):
            raise Finding("%s: a line that is not an object: %r" % (self.name, line[:120]))
        return m

    def event(self, m):
        """Checks one notification against what this subscriber knows."""
        method = m.get("method")
        p = m.get("params") or {}
        if method == "state.resync":
            if self.last_seq is not None and p["seq"] < self.last_seq:
                raise Finding("%s: resync went back: %d after %d" % (self.name, p["seq"], self.last_seq))
            self.last_seq = p["seq"]
            self.must_resync = False
            return
        if "seq" not in p or not self.subscribed:
            return
        if self.must_resync:
            raise Finding("%s: an event after a stale state.get reply without a resync first: %r" % (self.name, m))
        if self.last_seq is not None and p["seq"] not in (self.last_seq, self.last_seq + 1):
            raise Finding("%s: event seq %d after %d (%s)" % (self.name, p["seq"], self.last_seq, method))
        self.last_seq = p["seq"]

    def requests(self, batch):
        """Sends [(method, params)] pipelined; returns the replies, checking one per id, in order."""
        return self.replies(self.send_batch(batch), batch)

    def send_batch(self, batch):
        ids, data = [], b""
        for method, params in batch:
            rid = self.next_id
            self.next_id += 1
            ids.append(rid)
            req = {"jsonrpc": "2.0", "id": rid, "method": method}
            if params is not None:
                req["params"] = params
            data += json.dumps(req).encode() + b"\n"
        self.send(data)
        return ids

    def replies(self, ids, batch):
        replies = []
        while len(replies) < len(ids):
            m = self.read_msg()
            if m is None:
                raise Finding("%s: closed before the reply to id %d" % (self.name, ids[len(replies)]))
            if "id" not in m:
                self.event(m)
                continue
            want = ids[len(replies)]
            if m["id"] != want:
                raise Finding("%s: reply for id %r where %r was due" % (self.name, m["id"], want))
            if ("result" in m) == ("error" in m):
                raise Finding("%s: reply with neither or both of result/error: %r" % (self.name, m))
            replies.append(m)
            method = batch[len(replies) - 1][0]
            if method == "subscribe" and "result" in m:
                self.subscribed = True
                self.last_seq = m["result"]["seq"]
                self.must_resync = False
            elif method == "unsubscribe" and "result" in m:
                self.subscribed = False
            elif method == "state.get" and "result" in m and self.subscribed and self.last_seq is not None:
                seq = m["result"]["seq"]
                if seq < self.last_seq:
                    raise Finding("%s: state.get seq %d behind the events seen (%d)" % (self.name, seq, self.last_seq))
                if seq != self.last_seq:
                    self.must_resync = True  # events were dropped: the resync is due next
        return replies

    def drain(self, timeout=0.0):
        while True:
            if b"\n" not in self.buf:
                r, _, _ = select.select([self.s], [], [], timeout)
                if not r:
                    return
                chunk = self.s.recv(1 << 20)
                if not chunk:
                    raise Finding("%s: the daemon closed a subscriber" % self.name)
                self.buf += chunk
            m = self.read_msg()
            if "id" in m:
                raise Finding("%s: an unexpected reply: %r" % (self.name, m))
            self.event(m)


def mutate(line, r):
    b = bytearray(line)
    kind = r.randrange(12)
    if kind == 0 and b:
        for _ in range(r.randint(1, 4)):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
    elif kind == 1:
        b = b[: r.randrange(len(b) + 1)]
    elif kind == 2:
        b = bytearray(b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":%s}' % (r.randint(0, 9), b"[" * r.choice([10, 100, 1000, 5000]) + b"]" * 3))
    elif kind == 3:
        b = bytearray(b'{"jsonrpc":"2.0","id":' + str(10**r.randint(10, 400)).encode() + b',"method":"ping"}')
    elif kind == 4:
        b[r.randrange(len(b) + 1):0] = r.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x00", b"\\ud800", b"\\udfff\\u0000"])
    elif kind == 5:
        b = bytearray(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}')
    elif kind == 6:
        b = bytearray(os.urandom(r.randint(1, 300)).replace(b"\n", b""))
    elif kind == 7:
        b = bytearray(b'{"jsonrpc":"2.0","id":"' + "\u00e9\U0001F600".encode() * r.randint(1, 50) + b'","method":"state.get"}')
    elif kind == 8:
        b = bytearray(b'{"jsonrpc":"2.0","id":3,"method":"tab.select","params":{"tab":"me","tab":"chat"}}')
    elif kind == 9:
        b = bytearray(b"x" * r.choice([70000, 200000]))  # over max_line
    elif kind == 10:
        b = bytearray(b'{"jsonrpc":"2.0","id":null,"method":"ping"}')
    else:
        b = bytearray(b"   " + bytes(b) + b"   ")
    return bytes(b).replace(b"\n", b" ") + b"\n"


class Daemon:
    def __init__(self, binary, sounds, workdir, config):
        self.binary, self.sounds, self.dir = binary, sounds, workdir
        self.socket = os.path.join(workdir, "sock")
        self.config = os.path.join(workdir, "config.json")
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.log = open(os.path.join(workdir, "daemon.log"), "ab")
        self.start()

    def start(self):
        self.p = subprocess.Popen([self.binary, "--socket", self.socket, "--state", os.path.join(self.dir, "state", "state.json"),
                                   "--audio", "null", "--sounds", self.sounds, "--config", self.config], stderr=self.log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise Finding("the daemon exited at start with %s" % self.p.returncode)
            try:
                Conn(self.socket, "probe").close()
                return
            except (OSError, Finding):
                time.sleep(0.02)
        raise Finding("the daemon did not listen within 20 s")

    def rss_kb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def alive(self):
        if self.p.poll() is not None:
            raise Finding("the daemon died: exit status %s (log: %s)" % (self.p.returncode, self.log.name))

    def kill9(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                return self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.kill9()
                raise Finding("the daemon did not stop within 20 s of SIGTERM")
        return self.p.returncode


def durable_view(state):
    return {k: state.get(k) for k in LIVE_KEYS}


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.r = random.Random(args.seed)
        self.dir = tempfile.mkdtemp(prefix="tabbard-fuzz-socket-")
        self.d = Daemon(args.daemon, args.sounds, self.dir, {"max_queued_bytes": args.max_queued_bytes, "compact_every": args.compact_every})
        self.methods = None
        self.counts = {"requests": 0, "connections": 0, "mutated": 0, "random": 0, "partial": 0, "churn": 0, "resyncs": 0, "kills": 0}
        self.max_ping = 0.0
        self.max_rss = 0
        self.connect_all()

    def conn(self, name):
        self.counts["connections"] += 1
        return Conn(self.d.socket, name)

    def connect_all(self):
        self.writers = [self.conn("writer%d" % k) for k in range(2)]
        self.subs = [self.conn("sub%d" % k) for k in range(2)]
        self.slow = self.conn("slow-sub")
        for s in self.subs + [self.slow]:
            s.requests([("subscribe", {})])
        self.pinger = self.conn("pinger")
        self.methods = FEATURES
        self.slow_pending = None

    def close_all(self):
        for c in self.writers + self.subs + [self.slow, self.pinger]:
            c.close()

    def step(self):
        r = self.r
        k = r.random()
        if k < 0.45:
            w = r.choice(self.writers)
            batch = [(m, params_for(m, r)) for m in (r.choice(self.methods) for _ in range(r.randint(1, 24)))]
            self.counts["requests"] += len(batch)
            w.requests(batch)
        elif k < 0.6:
            self.mutated()
        elif k < 0.65:
            self.random_bytes()
        elif k < 0.72:
            self.partial_and_half_close()
        elif k < 0.78:
            self.churn()
        elif k < 0.86:
            s = r.choice(self.subs)
            s.drain()
            self.counts["requests"] += 1
            s.requests([("state.get", None)])
        elif k < 0.90:
            # A storm of changes: the slow subscriber falls behind.
            w = r.choice(self.writers)
            batch = [("tab.select", {"tab": r.choice(TABS)}) if r.random() < 0.7 else ("badge.set", {"tab": "me", "count": r.randint(0, 99)})
                     for _ in range(r.randint(50, 400))]
            self.counts["requests"] += len(batch)
            w.requests(batch)
        for s in self.subs:
            s.drain()

    def slow_turn(self):
        """The slow subscriber pipelines state.get and reads nothing until its next turn:
        then its replies must all be there, whole and in order, whatever events it lost."""
        s = self.slow
        if self.slow_pending is not None:
            ids, batch = self.slow_pending
            s.replies(ids, batch)
            s.drain(0.05)
        batch = [("state.get", None)] * self.r.randint(0, 300)
        self.counts["requests"] += len(batch)
        self.slow_pending = (s.send_batch(batch), batch) if batch else None

    def mutated(self):
        r = self.r
        c = self.conn("mutator")
        for _ in range(r.randint(1, 8)):
            m = r.choice(self.methods)
            line = json.dumps({"jsonrpc": "2.0", "id": r.randint(0, 99), "method": m, "params": params_for(m, r)}).encode()
            c.send(mutate(line, r))
            self.counts["mutated"] += 1
        self.sync(c)

    def random_bytes(self):
        c = self.conn("random")
        c.send(os.urandom(self.r.randint(1, 4096)) + b"\n")
        self.counts["random"] += 1
        self.sync(c)

    def sync(self, c):
        """A ping after junk: every line before its reply must be whole JSON."""
        try:
            c.send(b'{"jsonrpc":"2.0","id":"sync","method":"ping"}\n')
        except OSError:
            c.close()
            return  # closed for a line over max_line: allowed for that connection only
        while True:
            m = c.read_msg()
            if m is None or m.get("id") == "sync":
                break
        c.close()

    def partial_and_half_close(self):
        r = self.r
        c = self.conn("partial")
        line = b'{"jsonrpc":"2.0","id":7,"method":"state.get"}\n'
        cut = r.randrange(1, len(line))
        c.send(line[:cut])
        time.sleep(r.choice([0, 0.001, 0.02]))
        c.send(line[cut:] + (b'{"jsonrpc":"2.0","id":8,"method":"ping"' if r.random() < 0.5 else b""))
        c.s.shutdown(socket.SHUT_WR)
        ids = []
        while True:
            m = c.read_msg()
            if m is None:
                break
            if "id" in m:
                ids.append(m["id"])
        if ids[:1] != [7]:
            raise Finding("partial: replies after a half-close were %r" % ids)
        self.counts["partial"] += 1
        c.close()

    def churn(self):
        for _ in range(self.r.randint(1, 20)):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.d.socket)
            if self.r.random() < 0.5:
                s.send(b'{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":"chat"}}\n')
            s.close()
            self.counts["churn"] += 1
            self.counts["connections"] += 1

    def ping(self):
        t = time.monotonic()
        self.pinger.requests([("ping", None)])
        dt = time.monotonic() - t
        self.max_ping = max(self.max_ping, dt)
        if dt > 1.0:
            raise Finding("ping took %.2f s" % dt)

    def kill_and_restart(self):
        """The last acknowledged state survives kill -9."""
        if self.slow_pending is not None:
            self.slow.replies(*self.slow_pending)
            self.slow_pending = None
        self.close_all()
        c = self.conn("before-kill")
        # Connections that sent a request and closed without reading its reply (churn) may
        # not have been read yet: their changes were never acknowledged, and may land after
        # a state.get now. The acknowledged state is read once the daemon has closed them all.
        deadline = time.monotonic() + 10
        while True:
            stats = c.requests([("stats.get", None)])[0]["result"]
            if stats["clients"] == 1:
                break
            if time.monotonic() > deadline:
                raise Finding("before kill -9: %d clients still open 10 s after the fuzzer closed all but one" % stats["clients"])
            time.sleep(0.01)
        self.counts["resyncs"] += stats.get("resyncs", 0)
        before = c.requests([("state.get", None)])[0]["result"]
        c.close()
        self.d.kill9()
        self.counts["kills"] += 1
        self.d.start()
        c = self.conn("after-kill")
        after = c.requests([("state.get", None)])[0]["result"]
        c.close()
        # A timer (an animation's or the bar's slide ending) may fire after the state.get and
        # move the seq on; it changes none of LIVE_KEYS. A lost change would take the seq back.
        if after["seq"] < before["seq"] or durable_view(after["state"]) != durable_view(before["state"]):
            raise Finding("after kill -9: seq %d, state %s; acknowledged: seq %d, state %s" % (
                after["seq"], json.dumps(durable_view(after["state"]))[:300], before["seq"], json.dumps(durable_view(before["state"]))[:300]))
        self.connect_all()

    def run(self):
        start = time.monotonic()
        end = start + self.args.seconds
        next_ping = next_check = next_slow = start
        next_kill = start + self.args.seconds / 2
        while time.monotonic() < end:
            self.step()
            now = time.monotonic()
            if now >= next_ping:
                self.ping()
                next_ping = now + 0.2
            if now >= next_slow:
                self.slow_turn()
                next_slow = now + self.r.uniform(0.5, 4)
            if now >= next_check:
                self.d.alive()
                rss = self.d.rss_kb()
                self.max_rss = max(self.max_rss, rss)
                if rss > self.args.max_rss_mb * 1024:
                    raise Finding("RSS %d KiB over %d MiB" % (rss, self.args.max_rss_mb))
                next_check = now + 1
            if now >= next_kill:
                self.kill_and_restart()
                next_kill = end + 1
        self.kill_and_restart()
        elapsed = time.monotonic() - start
        self.close_all()
        status = self.d.stop()
        if status != 0:
            raise Finding("the daemon stopped with status %s" % status)
        return elapsed


FEATURES = ["ping", "state.get", "bar.configure", "tab.select", "action.trigger", "action.finish", "badge.set", "badge.clear",
            "feedback.set", "sound.play", "sound.list", "sound.reload", "stats.get", "touch", "tab.highlight", "bar.set_hidden",
            "nav.push", "nav.pop", "scroll", "animation.begin", "animation.end", "nope.nothing"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--sounds", required=True)
    ap.add_argument("--seconds", type=float, default=45)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--max-queued-bytes", type=int, default=65536)
    ap.add_argument("--compact-every", type=int, default=50)
    ap.add_argument("--max-rss-mb", type=int, default=256)
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    print("fuzz-socket: seed %d, %.0f s, max_queued_bytes %d, compact_every %d" % (
        args.seed, args.seconds, args.max_queued_bytes, args.compact_every), flush=True)
    f = None
    try:
        f = Fuzzer(args)
        elapsed = f.run()
    except Finding as e:
        print("FINDING (seed %d): %s" % (args.seed, e), flush=True)
        if f is not None:
            print("daemon log: %s" % f.d.log.name)
            try:
                f.d.kill9()
            except Exception:
                pass
        return 1
    c = f.counts
    print("fuzz-socket: no finding in %.0f s: %d requests (%.0f/s), %d connections, %d mutated lines, %d random, "
          "%d partial/half-closed, %d churned, %d resyncs, %d kill -9 restarts; max ping %.0f ms, max RSS %d KiB" % (
              elapsed, c["requests"], c["requests"] / elapsed, c["connections"], c["mutated"], c["random"], c["partial"],
              c["churn"], c["resyncs"], c["kills"], f.max_ping * 1000, f.max_rss), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
