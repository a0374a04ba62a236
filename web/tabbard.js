// tabbard.js — a small client for tabbard over a WebSocket line bridge
// (`tabbard-web`: websocketd + `tabbarctl pipe`). No dependencies, no build step.
// Documented in docs/WEB.md. One WebSocket message is one JSON-RPC line.
//
//   import { TabbardClient } from "./tabbard.js";
//   const client = new TabbardClient(TabbardClient.bridgeURL());
//   client.addEventListener("state", (e) => draw(e.detail.state));
//   client.start();
//   await client.request("tab.select", { tab: "chat" });

/** An error reply from the daemon (or a timeout / lost connection on this side). */
export class TabbardError extends Error {
  constructor(message, { code = null, kind = "client", data = null } = {}) {
    super(message);
    this.name = "TabbardError";
    this.code = code;
    this.kind = kind; // the daemon's data.kind, or "timeout" / "disconnected" / "client"
    this.data = data;
  }
}

/**
 * Connects, reads `hello`, subscribes, and keeps `state` — the daemon's state as the
 * daemon last sent it: the subscribe snapshot, then `state.get` after every event that
 * says it changed (`bar.configured` and `state.resync` carry it) — until `stop()`.
 * Reconnects with back-off and subscribes again after every loss.
 *
 * Events (an EventTarget; `detail` in brackets):
 *   "status"  {status: "connecting"|"open"|"closed"|"refused", reason}
 *   "hello"   {hello}                  the daemon's hello params
 *   "state"   {state, seq, cause}      a newer state came; cause is the event message or null
 *   "message" {message}                every notification from the daemon, as received
 *   "cue"     {cue}                    an animation.cue's params (what to animate), right after
 *                                      the "state" that has its change
 */
export class TabbardClient extends EventTarget {
  constructor(url, { timeoutMs = 5000, topics = null, minDelayMs = 250, maxDelayMs = 5000, worker = false } = {}) {
    super();
    this.url = url;
    this.worker = worker; // the WebSocket in a dedicated Worker (see WorkerSocket)
    this.timeoutMs = timeoutMs;
    this.topics = topics;
    this.minDelayMs = minDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.state = null;
    this.seq = -1;
    this.hello = null;
    this.status = "closed";
    this.reconnects = 0;
    this._ws = null;
    this._nextId = 1;
    this._pending = new Map(); // id → {resolve, reject, timer}
    this._delay = minDelayMs;
    this._stopped = true;
    this._retry = null;
    this._reading = false;
    this._again = false;
    this._cues = []; // animation.cue params waiting for the state of their seq
    this._wantSeq = -1;
    this._cause = null;
  }

  /** The bridge's address for a page served by tabbard-web: same host, the page's token. */
  static bridgeURL(location = globalThis.location) {
    const token = new URLSearchParams(location.search).get("token") || "";
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/bridge?token=${encodeURIComponent(token)}`;
  }

  /** Connects (and keeps reconnecting until `stop()`). */
  start() {
    this._stopped = false;
    this._open();
  }

  /** Closes the connection for good; pending requests fail with kind "disconnected". */
  stop() {
    this._stopped = true;
    clearTimeout(this._retry);
    if (this._ws) this._ws.close();
  }

  /**
   * Sends a request; resolves with its `result`, rejects with a TabbardError
   * (the daemon's error, "timeout" after `timeoutMs`, or "disconnected").
   */
  request(method, params = undefined, { timeoutMs = this.timeoutMs } = {}) {
    return new Promise((resolve, reject) => {
      if (!this._ws || this._ws.readyState !== WebSocket.OPEN || !this.hello) {
        reject(new TabbardError(`not connected to tabbard (${this.status})`, { kind: "disconnected" }));
        return;
      }
      const id = this._nextId++;
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new TabbardError(`no reply to ${method} within ${timeoutMs} ms`, { kind: "timeout" }));
      }, timeoutMs);
      this._pending.set(id, { resolve, reject, timer, method });
      this._send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** Sends a notification (no reply, not even an error). */
  notify(method, params = undefined) {
    if (this._ws && this._ws.readyState === WebSocket.OPEN) {
      this._send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
    }
  }

  /**
   * Reads, now, the frames that have already come (with a SharedSocket: those its worker has
   * put in the shared ring but the page has not been told of yet). Call it at the start of a
   * frame (requestAnimationFrame) after an input: what it reads is drawn in that frame.
   */
  poll() {
    this._ws?.poll?.();
  }

  /**
   * With a SharedSocket only: reads frames synchronously, for at most `ms` milliseconds, until
   * the reply to the `state.get` in flight has come. Called at the end of an input handler
   * (after `refresh()`), the state that shows the input is then drawn before the browser's
   * next frame. Returns whether it came.
   */
  settle(ms) {
    if (!(this._ws instanceof SharedSocket)) return false;
    const end = performance.now() + ms;
    const waiting = () => [...this._pending.values()].some((p) => p.method === "state.get");
    while (waiting()) {
      if (performance.now() > end) return false;
      this._ws.poll();
    }
    return true;
  }

  // MARK: connection

  _open() {
    this._setStatus("connecting");
    this.hello = null;
    this._cues = [];
    let ws;
    try {
      ws = this.worker === "shared" ? new SharedSocket(this.url)
        : this.worker ? new WorkerSocket(this.url) : new WebSocket(this.url);
    } catch (e) {
      this._setStatus("refused", String(e));
      return;
    }
    this._ws = ws;
    ws.onmessage = (e) => this._receive(ws, e.data);
    ws.onclose = () => this._closed(ws);
  }

  _closed(ws) {
    if (ws !== this._ws) return;
    this._ws = null;
    for (const [, p] of this._pending) {
      clearTimeout(p.timer);
      p.reject(new TabbardError(`the connection closed before the reply to ${p.method}`, { kind: "disconnected" }));
    }
    this._pending.clear();
    if (this.status === "refused" || this._stopped) {
      if (this.status !== "refused") this._setStatus("closed");
      return;
    }
    this._setStatus("closed");
    const delay = this._delay * (0.75 + Math.random() * 0.5);
    this._delay = Math.min(this.maxDelayMs, this._delay * 2);
    this._retry = setTimeout(() => { this.reconnects++; this._open(); }, delay);
  }

  _send(message) {
    this._ws.send(JSON.stringify(message));
  }

  _receive(ws, text) {
    if (ws !== this._ws) return;
    for (const line of String(text).split("\n")) {
      if (line.trim() === "") continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        console.warn("tabbard: a line that is not JSON:", line.slice(0, 200));
        continue;
      }
      this._dispatch(message);
    }
  }

  _dispatch(m) {
    if (m.id !== undefined && m.id !== null && (("result" in m) || ("error" in m))) {
      const p = this._pending.get(m.id);
      if (!p) return;
      this._pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error) {
        const d = m.error.data || {};
        p.reject(new TabbardError(m.error.message, { code: m.error.code, kind: d.kind || "error", data: d }));
      } else {
        p.resolve(m.result);
      }
      return;
    }
    if (m.error) { // id null: refused (permission_denied: final), or the bridge cannot reach the daemon (retried)
      const kind = (m.error.data || {}).kind;
      if (kind === "permission_denied") this._setStatus("refused", m.error.message);
      else console.warn("tabbard:", m.error.message);
      return;
    }
    if (m.method === "hello") {
      this.hello = m.params;
      this.dispatchEvent(new CustomEvent("hello", { detail: { hello: m.params } }));
      this._subscribe();
      return;
    }
    if (typeof m.method === "string") {
      this.dispatchEvent(new CustomEvent("message", { detail: { message: m } }));
      this._apply(m);
    }
  }

  async _subscribe() {
    try {
      const result = await this.request("subscribe", this.topics ? { topics: this.topics } : undefined);
      this._delay = this.minDelayMs;
      this._replace(result.seq, result.state, null);
      this._setStatus("open");
    } catch (e) {
      if (e.kind !== "disconnected" && this._ws) this._ws.close();
    }
  }

  _replace(seq, state, cause) {
    this.seq = seq;
    this.state = state;
    this._changed(cause);
    if (this._cues.length) {
      const due = this._cues.filter((c) => c.seq <= seq);
      this._cues = this._cues.filter((c) => c.seq > seq);
      for (const cue of due) this.dispatchEvent(new CustomEvent("cue", { detail: { cue } }));
    }
  }

  _changed(cause) {
    this.dispatchEvent(new CustomEvent("state", { detail: { state: this.state, seq: this.seq, cause } }));
  }

  _setStatus(status, reason = null) {
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: { status, reason } }));
  }

  // MARK: following the daemon

  /**
   * Asks the daemon for its state now (`state.get`) and draws what it says. Call it right
   * after a request whose effect you want drawn as soon as possible (a touch): the reply
   * comes with the change's events, without waiting for them to arrive first. Requests in
   * flight are not repeated: one read at a time, and another after it if an event newer
   * than its answer came meanwhile.
   */
  refresh(cause = null) {
    if (!this.hello || !this.state) return;
    if (cause) this._cause = cause;
    if (this._reading) this._again = true; else this._read();
  }

  async _read() {
    this._reading = true;
    const ws = this._ws;
    try {
      const result = await this.request("state.get");
      if (ws !== this._ws) return;
      const cause = this._cause;
      this._cause = null;
      if (result.seq > this.seq) this._replace(result.seq, result.state, cause);
    } catch {
      return; // disconnected: the reconnect replaces the state
    } finally {
      this._reading = false;
    }
    const again = this._again;
    this._again = false;
    if (again || this._wantSeq > this.seq) this._read();
  }

  /**
   * Events say *that* the state changed (and its `seq`); the state itself is the daemon's:
   * `bar.configured` and `state.resync` carry it, every other change is read with
   * `state.get`. Nothing of the daemon's rules is re-derived here.
   */
  _apply(m) {
    const p = m.params || {};
    if (m.method === "animation.cue") {
      // A cue animates the state of its change: it is played once that state is drawn.
      if (typeof p.seq === "number" && p.seq > this.seq) this._cues.push(p);
      else this.dispatchEvent(new CustomEvent("cue", { detail: { cue: p } }));
      return;
    }
    if (!this.state || typeof p.seq !== "number") return; // sound.played, server.stopping, …
    if (m.method === "state.resync" || m.method === "bar.configured") {
      if (p.seq >= this.seq) this._replace(p.seq, p.state, m);
      return;
    }
    if (p.seq > this.seq) {
      this._wantSeq = Math.max(this._wantSeq ?? -1, p.seq);
      this._cause = m;
      if (!this._reading) this._read();
    }
  }
}

/**
 * A WebSocket owned by a dedicated Worker, with the part of WebSocket's interface the
 * client uses (readyState, send, close, onmessage, onclose). Frames are read on the
 * worker's thread and posted to the page. (docs/WEB.md, "Latency": what was tried.)
 */
export class WorkerSocket {
  constructor(url) {
    const code = `let ws;
      onmessage = (e) => {
        const m = e.data;
        if (m.open) {
          ws = new WebSocket(m.open);
          ws.onopen = () => postMessage({ open: true });
          ws.onmessage = (x) => postMessage({ data: x.data });
          ws.onclose = () => postMessage({ close: true });
        } else if (m.send !== undefined) ws.send(m.send);
        else if (m.close) ws && ws.close();
      };`;
    this.readyState = WebSocket.CONNECTING;
    this.onmessage = null;
    this.onclose = null;
    this._w = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
    this._w.onmessage = (e) => {
      const m = e.data;
      if (m.open) this.readyState = WebSocket.OPEN;
      else if (m.data !== undefined) this.onmessage?.({ data: m.data });
      else if (m.close) {
        this.readyState = WebSocket.CLOSED;
        this._w.terminate();
        this.onclose?.({});
      }
    };
    this._w.postMessage({ open: url });
  }

  send(text) { this._w.postMessage({ send: text }); }

  close() { this._w.postMessage({ close: true }); }
}

/**
 * Like WorkerSocket, but the worker writes every frame into a ring in a SharedArrayBuffer
 * and the page can read it synchronously (`poll()`), e.g. at the start of the first frame
 * after an input, when a posted message would still be held back by the browser. Needs a
 * cross-origin isolated page (tabbard-web sends COOP/COEP headers); without one
 * `SharedSocket.available` is false.
 */
const RING = 1 << 22; // 4 MiB: a frame larger than this is not expected (states are a few KiB)
const RING_WORKER = `
  const RING = ${RING};
  let ws, head, bytes;
  const enc = new TextEncoder();
  function put(text) {
    const data = enc.encode(text);
    const need = 4 + data.length;
    if (need > RING) throw new Error("frame larger than the ring");
    while (RING - Atomics.load(head, 2) < need) Atomics.wait(head, 2, Atomics.load(head, 2), 100);
    let w = head[0];
    const len = [data.length & 255, (data.length >> 8) & 255, (data.length >> 16) & 255, (data.length >>> 24) & 255];
    for (const b of len) { bytes[w] = b; w = (w + 1) % RING; }
    const first = Math.min(data.length, RING - w);
    bytes.set(data.subarray(0, first), w);
    bytes.set(data.subarray(first), 0);
    head[0] = (w + data.length) % RING;
    Atomics.add(head, 2, need);
  }
  onmessage = (e) => {
    const m = e.data;
    if (m.open) {
      head = new Int32Array(m.sab, 0, 3);
      bytes = new Uint8Array(m.sab, 12);
      ws = new WebSocket(m.open);
      ws.onopen = () => postMessage({ open: true });
      ws.onmessage = (x) => { put(x.data); postMessage({ wake: true }); };
      ws.onclose = () => postMessage({ close: true });
    } else if (m.send !== undefined) ws.send(m.send);
    else if (m.close) ws && ws.close();
  };`;

export class SharedSocket {
  static get available() { return !!globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function"; }

  constructor(url) {
    this.readyState = WebSocket.CONNECTING;
    this.onmessage = null;
    this.onclose = null;
    const sab = new SharedArrayBuffer(12 + RING);
    this._head = new Int32Array(sab, 0, 3); // write offset, read offset, bytes in the ring
    this._bytes = new Uint8Array(sab, 12);
    this._dec = new TextDecoder();
    this._w = new Worker(URL.createObjectURL(new Blob([RING_WORKER], { type: "text/javascript" })));
    this._w.onmessage = (e) => {
      const m = e.data;
      if (m.open) this.readyState = WebSocket.OPEN;
      else if (m.wake) this.poll();
      else if (m.close) {
        this.poll();
        this.readyState = WebSocket.CLOSED;
        this._w.terminate();
        this.onclose?.({});
      }
    };
    this._w.postMessage({ open: url, sab });
  }

  /** Delivers every frame in the ring, in order. */
  poll() {
    const h = this._head, b = this._bytes;
    while (Atomics.load(h, 2) >= 4) {
      let r = h[1];
      let len = 0;
      for (let i = 0; i < 4; i++) { len |= b[r] << (8 * i); r = (r + 1) % RING; }
      const out = new Uint8Array(len); // TextDecoder does not read shared memory
      const first = Math.min(len, RING - r);
      out.set(b.subarray(r, r + first));
      out.set(b.subarray(0, len - first), first);
      h[1] = (r + len) % RING;
      Atomics.sub(h, 2, 4 + len);
      Atomics.notify(h, 2);
      if (this.readyState !== WebSocket.CLOSED) this.onmessage?.({ data: this._dec.decode(out) });
    }
  }

  send(text) { this._w.postMessage({ send: text }); }

  close() { this._w.postMessage({ close: true }); }
}
