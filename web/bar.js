// bar.js — draws a tab bar from tabbard's state alone and plays its animation cues
// with the Web Animations API. It never decides what a touch means: pointer events
// go to the daemon as `touch` requests (see app.js); the DOM follows the state.
//
// DOM contract (docs/WEB.md): the bar is `nav.bar` with data-hidden and data-phase;
// the `tab` items are `[role=tab]` with aria-selected inside its `[role=tablist]`,
// the center and action items `[role=button]` beside it (not inside: a tablist owns
// only tabs); every item is `[data-tab=ID]`, labelled with its title and badge
// ("Chat, 3 unread"); a badge is `[data-badge]` inside its item, its text the
// badge's display.
import { iconSVG } from "./icons.js";

const EASING = { ease_in_ease_out: "ease-in-out", ease_in: "ease-in", ease_out: "ease-out", linear: "linear" };

/** The bar of one page: `render(state)` after every change, `playCue(cue)` for every animation.cue. */
export class BarView {
  /** `frame`: the element the bar fills (its width is the viewport's); `onActivate(item)` for Enter/Space. */
  constructor(frame, { onActivate = () => {}, panel = null } = {}) {
    this.frame = frame;
    this.panel = panel; // the tabpanel the tabs control (labelled by the selected tab)
    this.onActivate = onActivate;
    this.scaleBox = el("div", "bar-scale");
    this.bar = el("nav", "bar");
    this.bar.setAttribute("aria-label", "Tab bar");
    this.tabs = el("div", "tabs");
    this.tabs.setAttribute("role", "tablist");
    this.tabs.setAttribute("aria-label", "Tabs");
    this.background = el("div", "bar-bg");
    this.indicator = el("div", "indicator");
    this.bar.append(this.background, this.indicator, this.tabs);
    this.scaleBox.append(this.bar);
    frame.append(this.scaleBox);
    this.items = new Map(); // id → element
    /** Every cue played, newest last: {tab, trigger, target, property, keyframes} (for tests and tools). */
    this.played = [];
    this.state = null;
    this.scale = 1;
    this.focusId = null;
    this.bar.addEventListener("keydown", (e) => this._key(e));
    this.bar.addEventListener("focusin", (e) => {
      const item = e.target.closest("[data-tab]");
      if (item) this.focusId = item.dataset.tab;
    });
    new ResizeObserver(() => this.state && this.render(this.state)).observe(frame);
  }

  /** Bar points of a pointer position (origin: the bar's top-left as laid out, not as slid). */
  toBar(clientX, clientY) {
    const r = this.scaleBox.getBoundingClientRect();
    return { x: (clientX - r.left) / this.scale, y: (clientY - r.top) / this.scale };
  }

  render(state) {
    this.state = state;
    const L = state.layout;
    const width = this.frame.clientWidth || L.width;
    this.scale = width / L.width;
    const raise = Math.max(0, ...state.items.map((i) => -i.frame.y));
    this.frame.style.height = `${L.height * this.scale}px`;
    this.frame.style.marginTop = `${raise * this.scale}px`;
    Object.assign(this.scaleBox.style, { width: `${L.width}px`, height: `${L.height}px`, transform: `scale(${this.scale})` });
    this.background.style.height = `${L.height}px`;
    const styles = new Set([state.settings?.animation, ...state.items.map((i) => i.animation)]);
    this.bar.classList.toggle("style-crossfade", styles.has("crossfade"));
    this.bar.classList.toggle("rtl", !!L.rtl);
    this.bar.dir = L.rtl ? "rtl" : "ltr";
    this._visibility(state);

    const ids = new Set(state.items.map((i) => i.id));
    for (const [id, node] of this.items) if (!ids.has(id)) { node.remove(); this.items.delete(id); }
    if (!ids.has(this.focusId)) this.focusId = null;
    const focusable = this.focusId ?? state.selected;
    // Tabs in the tablist, center/action buttons after it, each group in the order of items.
    const order = { tab: [], button: [] };
    for (const item of state.items) {
      let node = this.items.get(item.id);
      if (!node || node.dataset.kind !== item.kind) {
        node?.remove();
        node = this._itemElement(item);
        this.items.set(item.id, node);
      }
      order[item.kind === "tab" ? "tab" : "button"].push(node);
      this._update(node, item, state, item.id === focusable);
    }
    place(this.tabs, order.tab, 0);
    place(this.bar, order.button, 3);
    if (this.panel) {
      const sel = this.items.get(state.selected);
      if (sel && sel.getAttribute("role") === "tab") {
        this.panel.setAttribute("aria-labelledby", sel.id);
        this.panel.removeAttribute("aria-label");
      } else {
        this.panel.removeAttribute("aria-labelledby");
        this.panel.setAttribute("aria-label", "Content");
      }
    }

    const slide = styles.has("slide");
    const sel = state.items.find((i) => i.id === state.selected);
    this.indicator.hidden = !slide || !sel;
    if (slide && sel) {
      this.indicator.style.width = `${sel.frame.w * 0.5}px`;
      this.indicator.style.top = `${L.height - L.safe_bottom - 3}px`;
      this.indicator.style.transform = `translateX(${sel.frame.x + sel.frame.w / 2 - sel.frame.w * 0.25}px)`;
    }
  }

  _visibility(state) {
    const v = state.visibility;
    this.bar.dataset.hidden = String(!!v.hidden);
    this.bar.dataset.phase = v.phase;
    const H = state.layout.height;
    const running = this.bar.getAnimations().some((a) => a.playState !== "finished");
    if (v.phase === "idle") {
      for (const a of this.bar.getAnimations()) a.cancel();
      this.bar.style.transform = `translateY(${v.hidden ? H : 0}px)`;
    } else if (!running) {
      // A phase whose cue has not come (it follows its bar.visibility; or this page just
      // connected): if none comes soon, go straight to where the bar is heading.
      clearTimeout(this._phaseTimer);
      this._phaseTimer = setTimeout(() => {
        if (!this.bar.getAnimations().length) this.bar.style.transform = `translateY(${this.state.visibility.hidden ? H : 0}px)`;
      }, 50);
    }
    this.bar.classList.toggle("gone", !!v.hidden && v.phase === "idle");
  }

  _itemElement(item) {
    const node = el("div", `item kind-${item.kind}`);
    node.dataset.tab = item.id;
    node.dataset.kind = item.kind;
    node.id = `tabbard-item-${++itemSerial}`;
    node.setAttribute("role", item.kind === "tab" ? "tab" : "button");
    if (item.kind === "tab" && this.panel) node.setAttribute("aria-controls", this.panel.id);
    const content = el("div", "content");
    const icon = el("span", "icon");
    const title = el("span", "title");
    content.append(icon, title);
    node.append(content);
    return node;
  }

  _update(node, item, state, focusable) {
    const f = item.frame;
    Object.assign(node.style, { left: `${f.x}px`, top: `${f.y}px`, width: `${f.w}px`, height: `${f.h}px` });
    const selected = item.id === state.selected;
    if (item.kind === "tab") node.setAttribute("aria-selected", String(selected));
    node.classList.toggle("selected", selected);
    node.classList.toggle("highlighted", item.id === state.highlighted);
    node.dataset.highlighted = String(item.id === state.highlighted);
    node.classList.toggle("active", item.id === state.active_action);
    node.classList.toggle("disabled", !item.enabled);
    node.classList.toggle("circle", item.kind === "center" && state.layout.center?.shape !== "rect");
    if (item.enabled) node.removeAttribute("aria-disabled"); else node.setAttribute("aria-disabled", "true");
    node.tabIndex = item.kind !== "tab" || focusable ? 0 : -1;
    const p = item.presentation || { title: item.title, icon: item.icon };
    node.setAttribute("aria-label", p.title + badgeWords(item.badge));
    const icon = node.querySelector(".icon");
    if (icon.dataset.name !== String(p.icon)) { icon.dataset.name = String(p.icon); icon.innerHTML = iconSVG(p.icon); }
    const title = node.querySelector(".title");
    if (title.textContent !== p.title) title.textContent = p.title;
    let badge = node.querySelector("[data-badge]");
    if (item.badge) {
      if (!badge) {
        badge = el("span", "badge");
        badge.setAttribute("aria-hidden", "true"); // the item's label says it
        node.append(badge);
      }
      badge.dataset.badge = item.badge.kind;
      badge.classList.toggle("dot", item.badge.display === "");
      if (badge.textContent !== item.badge.display) badge.textContent = item.badge.display;
      badge.title = item.badge.kind === "text" ? String(item.badge.value ?? item.badge.display) : "";
      this._placeBadge(badge, f.w, !!state.layout.rtl);
    } else if (badge) {
      badge.remove();
    }
  }

  /** Puts a badge at the icon's top corner (mirrored with rtl), moved in and capped so that it
   *  stays inside its item, and so inside the bar; what does not fit ends in an ellipsis. */
  _placeBadge(badge, w, rtl) {
    const margin = 2;
    badge.style.maxWidth = `${Math.max(10, w - 2 * margin)}px`;
    const bw = badge.offsetWidth; // bar points: the scale is a transform of an ancestor
    const dot = badge.classList.contains("dot");
    const gap = dot ? 8 : 6;
    let left = rtl ? w / 2 - gap - bw : w / 2 + gap;
    left = Math.min(Math.max(left, margin), w - margin - bw);
    badge.style.left = `${Math.max(margin, left)}px`;
  }

  _key(e) {
    const current = e.target.closest("[data-tab]");
    if (!current) return;
    // Arrows, Home and End move between the tabs (the ARIA tabs pattern); the center and
    // action buttons are tab stops of their own.
    const nodes = current.getAttribute("role") === "tab"
      ? [...this.tabs.querySelectorAll("[data-tab]:not(.disabled)")] : [current];
    const i = nodes.indexOf(current);
    if (i < 0) return;
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    let next = null;
    if (step) next = nodes[(i + (this.state?.layout.rtl ? -step : step) + nodes.length) % nodes.length];
    else if (e.key === "Home") next = nodes[0];
    else if (e.key === "End") next = nodes[nodes.length - 1];
    else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      const item = this.state.items.find((it) => it.id === nodes[i].dataset.tab);
      if (item) this.onActivate(item);
      return;
    }
    if (!next) return;
    e.preventDefault();
    for (const n of nodes) n.tabIndex = n === next ? 0 : -1;
    next.focus();
  }

  // MARK: animation cues

  /** Plays one animation.cue: `{tab, trigger, kind, descriptor}`; returns the Animation(s) or null. */
  playCue(cue) {
    const d = cue.descriptor;
    if (!d || !this.state) return null;
    const item = cue.tab != null ? this.items.get(cue.tab) : null;
    const target = {
      bar: this.bar,
      indicator: this.indicator,
      item: item?.querySelector(".content"),
      icon: item?.querySelector(".icon"),
      badge: item?.querySelector("[data-badge]"),
    }[d.target];
    if (!target) return null;
    const value = VALUE[d.property];
    if (!value) return null;
    const values = d.keyframes ?? [d.from, d.to];
    const frames = values.map((v, i) => {
      const f = value(v, this);
      if (d.keyframes && d.key_times && d.key_times[i] != null) f.offset = d.key_times[i];
      return f;
    });
    const repeat = Math.max(0, d.repeat ?? 0);
    const timing = {
      duration: Math.max(0, d.duration_ms ?? 0),
      easing: EASING[d.timing] ?? "ease-in-out",
      direction: d.autoreverse ? "alternate" : "normal",
      iterations: (repeat + 1) * (d.autoreverse ? 2 : 1),
      fill: d.target === "bar" ? "forwards" : "none",
    };
    if (d.target === "bar") for (const a of this.bar.getAnimations()) a.cancel();
    // prefers-reduced-motion: an item's, icon's, badge's or the indicator's motion is skipped
    // (the state already draws where it ends); the bar goes to where its slide ends at once.
    // The daemon's timing is not touched: the phase still ends when the daemon says.
    const reduced = !!REDUCED?.matches;
    this.played.push({ tab: cue.tab, trigger: cue.trigger, target: d.target, property: d.property,
                       keyframes: frames.length, reduced });
    if (reduced) {
      return d.target === "bar" ? [target.animate([frames[frames.length - 1]], { duration: 0, fill: "forwards" })] : null;
    }
    const played = [target.animate(frames, timing)];
    if (d.transition === "crossfade" && d.from_icon && d.to_icon && d.target === "icon") {
      played.push(...this._crossfade(target, d, timing));
    }
    return played;
  }

  _crossfade(icon, d, timing) {
    const old = el("span", "icon-old");
    old.innerHTML = iconSVG(d.from_icon);
    icon.append(old);
    const fade = { duration: timing.duration, easing: timing.easing };
    const out = old.animate([{ opacity: 1 }, { opacity: 0 }], fade);
    const inn = icon.querySelector("svg").animate([{ opacity: 0 }, { opacity: 1 }], fade);
    out.finished.catch(() => {}).finally(() => old.remove());
    return [out, inn];
  }
}

// Descriptor property → the keyframe of one value.
const VALUE = {
  "transform.scale": (v) => ({ transform: `scale(${v})` }),
  "translation.y": (v) => ({ transform: `translateY(${v}px)` }),
  "position.x": (v, view) => ({ transform: `translateX(${v - parseFloat(view.indicator.style.width || "0") / 2}px)` }),
  "bounds.size": (v) => ({ width: `${v.w}px`, height: `${v.h}px` }),
  opacity: (v) => ({ opacity: v }),
};

const REDUCED = globalThis.matchMedia?.("(prefers-reduced-motion: reduce)");
let itemSerial = 0;

/** The words a screen reader says for a badge after the item's title. */
function badgeWords(badge) {
  if (!badge) return "";
  if (badge.kind === "dot" || badge.display === "") return ", new";
  if (badge.kind === "count") return `, ${badge.display} unread`;
  return `, ${badge.value ?? badge.display}`;
}

/** Puts `nodes` in `parent` in this order, after its first `skip` children. */
function place(parent, nodes, skip) {
  nodes.forEach((node, i) => {
    const at = parent.children[skip + i] ?? null;
    if (at !== node) parent.insertBefore(node, at);
  });
}

function el(tag, cls) {
  const n = document.createElement(tag);
  n.className = cls;
  return n;
}
