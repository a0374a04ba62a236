// instrument.js — the benchmark's instrumentation (tests/web/measure_click.py loads it into
// the page; the page itself never does). Needs window.tabbard = {client, view} from app.js.
//
// window.tabbardLatency, per tap that selected another tab, in ms from the pointerup
// event's timeStamp (when the browser took the input, performance.now()'s clock):
//   handler  → the pointerup handlers start running
//   event    → the tab.selected frame is read by the client (its `message` event)
//   state    → the client has the state that shows it (its `state` event)
//   painted  → the requestAnimationFrame callback after that state was drawn (the frame that paints it)
(() => {
  const { client } = window.tabbard;
  const L = (window.tabbardLatency = { handler: [], event: [], state: [], painted: [], pending: null });
  document.querySelector("#screen").addEventListener("pointerup", (e) => {
    L.pending = { started: e.timeStamp, from: client.state?.selected, event: false };
    L.handler.push(performance.now() - e.timeStamp);
  }, true);
  client.addEventListener("message", (e) => {
    const p = L.pending;
    if (p && !p.event && e.detail.message.method === "tab.selected") {
      p.event = true;
      L.event.push(performance.now() - p.started);
    }
  });
  // Registered after app.js's listener: the state has been drawn when this runs.
  client.addEventListener("state", (e) => {
    const p = L.pending;
    if (!p || e.detail.state.selected === p.from) return;
    L.pending = null;
    L.state.push(performance.now() - p.started);
    requestAnimationFrame(() => L.painted.push(performance.now() - p.started));
  });
})();
