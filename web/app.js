// app.js — the demo page: one bar (bar.js) kept by one client (tabbard.js), the
// style switcher over examples/, the navigation and scroll controls. Every input
// goes to the daemon; the page draws what the daemon's state says.
import { TabbardClient, SharedSocket } from "./tabbard.js";
import { BarView } from "./bar.js";

const $ = (sel) => document.querySelector(sel);
// Where the WebSocket is read (docs/WEB.md, "Latency"): in a Worker by default; ?socket=main on
// the page's own thread; ?socket=shared in a Worker through shared memory, which
// &settle=MS lets a touch's handler read synchronously until its state is in.
const query = new URLSearchParams(location.search);
const socketKind = query.get("socket") || "worker";
const client = new TabbardClient(TabbardClient.bridgeURL(),
  { worker: socketKind === "shared" && SharedSocket.available ? "shared" : socketKind !== "main" });
const view = new BarView($("#bar-frame"), { onActivate: activate, panel: $("#content") });
const status = $("#status");
const screen = $("#screen");
const scroller = $("#content");

/** For scripts, tests and the benchmark's own instrumentation (tests/web/instrument.js). */
window.tabbard = { client, view };

client.addEventListener("status", (e) => {
  const { status: s, reason } = e.detail;
  document.body.dataset.connection = s;
  status.textContent = {
    connecting: client.reconnects ? "reconnecting to tabbard…" : "connecting to tabbard…",
    open: `connected to ${client.hello?.server ?? "tabbard"} ${client.hello?.version ?? ""}`,
    closed: "connection lost; retrying…",
    refused: `refused: ${reason ?? "the bridge said no"}`,
  }[s] ?? s;
});

client.addEventListener("state", (e) => {
  const state = e.detail.state;
  view.render(state);
  drawScreen(state);
  $("#click-on-press").checked = state.settings?.click_on === "press";
  $("#seq").textContent = `seq ${e.detail.seq}`;
});

client.addEventListener("cue", (e) => view.playCue(e.detail.cue));

// MARK: touches — every pointer sequence on the screen is a touch the daemon judges.

const touches = new Map(); // pointerId → touch_id
let nextTouch = Math.floor(Math.random() * 1e9);

screen.addEventListener("pointerdown", (e) => {
  if (e.button !== 0 || !client.state) return;
  const id = nextTouch++;
  touches.set(e.pointerId, id);
  send("down", e, id); // first: under click_on "press" the daemon clicks on this down
  screen.setPointerCapture?.(e.pointerId);
});
screen.addEventListener("pointerup", (e) => {
  const id = touches.get(e.pointerId);
  if (id === undefined) return;
  touches.delete(e.pointerId);
  send("up", e, id);
});
screen.addEventListener("pointercancel", (e) => {
  const id = touches.get(e.pointerId);
  if (id === undefined) return;
  touches.delete(e.pointerId);
  send("cancel", e, id);
});

function send(phase, e, touchId) {
  const { x, y } = view.toBar(e.clientX, e.clientY);
  client.request("touch", { phase, x: round(x), y: round(y), touch_id: touchId }).catch(showError);
  client.refresh(); // the state after this touch, read right behind it (the page asks; it never guesses)
  if (phase === "up" && settleMs) client.settle(settleMs);
}
const settleMs = Number(query.get("settle") || 0);

// MARK: keyboard (bar.js moves the focus; Enter/Space land here)

function activate(item) {
  if (!item.enabled) return;
  const method = item.kind === "tab" ? "tab.select" : "action.trigger";
  client.request(method, { tab: item.id }).catch(showError);
  client.refresh();
}

// MARK: the screen above the bar

function drawScreen(state) {
  const sel = state.items.find((i) => i.id === state.selected);
  const depth = state.visibility.nav_stack?.length ?? 0;
  $("#screen-title").textContent = (sel?.presentation?.title ?? sel?.title ?? "") + (depth ? ` › screen ${depth + 1}` : "");
  $("#active").textContent = state.active_action
    ? `action: ${state.items.find((i) => i.id === state.active_action)?.action ?? state.active_action}` : "";
  $("#back").disabled = depth === 0;
}

let lastTop = 0;
let pendingDy = 0;
scroller.addEventListener("scroll", () => {
  pendingDy += scroller.scrollTop - lastTop;
  lastTop = scroller.scrollTop;
  if (pendingDy !== 0 && !scroller.dataset.queued) {
    scroller.dataset.queued = "1";
    requestAnimationFrame(() => {
      delete scroller.dataset.queued;
      const dy = pendingDy;
      pendingDy = 0;
      if (dy) client.request("scroll", { dy: round(dy) }).catch(showError);
    });
  }
});

// The bar's click_on: the daemon plays the click on the touch's down ("press") or with the
// commit; the page plays no sound of its own, so it has nothing else to follow.
$("#click-on-press").addEventListener("change", (e) => {
  client.request("bar.configure", { settings: { click_on: e.target.checked ? "press" : "commit" } }).catch(showError);
});

$("#push").addEventListener("click", () => client.request("nav.push", { hides_bar: true }).catch(showError));
$("#back").addEventListener("click", () => client.request("nav.pop").catch(showError));
$("#finish").addEventListener("click", () => {
  const tab = client.state?.active_action;
  if (tab) client.request("action.finish", { tab }).catch(showError);
});

// Badges go on the second and the last selectable tab of whatever bar is up.
function tabsOf(state) { return state.items.filter((i) => i.kind === "tab"); }
$("#badge-count").addEventListener("click", () => {
  const t = tabsOf(client.state)[1] ?? tabsOf(client.state)[0];
  client.request("badge.set", { tab: t.id, count: 120 }).catch(showError);
});
$("#badge-dot").addEventListener("click", () => {
  const tabs = tabsOf(client.state);
  client.request("badge.set", { tab: tabs[tabs.length - 1].id, dot: true }).catch(showError);
});
$("#badge-clear").addEventListener("click", () => {
  for (const i of client.state.items) if (i.badge) client.request("badge.clear", { tab: i.id }).catch(showError);
});

// MARK: the style switcher

async function loadStyles() {
  const list = $("#styles");
  let names = [];
  try {
    names = await (await fetch("examples/index.json")).json();
  } catch {
    list.textContent = "no examples/ here";
    return;
  }
  for (const name of names) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = name.replace(/-/g, " ");
    b.dataset.style = name;
    b.addEventListener("click", () => applyStyle(name));
    list.append(b);
  }
}

async function applyStyle(name) {
  try {
    const params = await (await fetch(`examples/${name}.json`)).json();
    await client.request("bar.configure", params);
    for (const b of document.querySelectorAll("#styles button")) b.setAttribute("aria-pressed", String(b.dataset.style === name));
    document.body.dataset.style = name;
  } catch (e) {
    showError(e);
  }
}
window.tabbard.applyStyle = applyStyle;

function showError(err) {
  $("#error").textContent = err?.message ?? String(err);
}

function round(v) { return Math.round(v * 100) / 100; }

for (let i = 1; i <= 60; i++) {
  const row = document.createElement("p");
  row.textContent = `Row ${i}: scroll me — down hides the bar in bars that hide on scroll`;
  scroller.append(row);
}
loadStyles();
client.start();
