// A small SVG icon set for the example bars, named as examples/*.json name icons
// (SF Symbols-style names: "house", "house.fill", "bubble", "plus.circle.fill", …)
// plus plain aliases (home, nearby, post, chat, me, record, photo, audio, …).
// A ".fill" name draws the filled variant; an unknown name draws its first letter.

const P = {
  house: "M3 11 12 3l9 8M5 9.5V21h5v-6h4v6h5V9.5",
  location: "M12 21s-7-6.2-7-11.5a7 7 0 0 1 14 0C19 14.8 12 21 12 21zM12 12.5a3 3 0 1 0 0-6 3 3 0 0 0 0 6z",
  plus: "M12 5v14M5 12h14",
  bubble: "M4 5h16v11H9l-5 4z",
  person: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21c0-4.4 3.6-7 8-7s8 2.6 8 7z",
  magnifyingglass: "M10.5 17a6.5 6.5 0 1 0 0-13 6.5 6.5 0 0 0 0 13zM15.5 15.5 21 21",
  heart: "M12 20s-8-5.2-8-11a4.5 4.5 0 0 1 8-2.8A4.5 4.5 0 0 1 20 9c0 5.8-8 11-8 11z",
  sun: "M12 16.5a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9zM12 2v2.5M12 19.5V22M2 12h2.5M19.5 12H22M4.9 4.9l1.8 1.8M17.3 17.3l1.8 1.8M4.9 19.1l1.8-1.8M17.3 6.7l1.8-1.8",
  calendar: "M4 6h16v14H4zM4 10h16M8 3v5M16 3v5",
  chart: "M5 20V12h3v8zM10.5 20V6h3v14zM16 20V9h3v11z",
  list: "M9 6h11M9 12h11M9 18h11M4.5 6h.01M4.5 12h.01M4.5 18h.01",
  map: "M3 6l6-3 6 3 6-3v15l-6 3-6-3-6 3zM9 3v15M15 6v15",
  gear: "M12 15.5a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9 7 7M17 17l2.1 2.1M4.9 19.1 7 17M17 7l2.1-2.1",
  refresh: "M20 12a8 8 0 1 1-2.3-5.7M20 4v5h-5",
  compass: "M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM15.5 8.5l-2 5-5 2 2-5z",
  tray: "M3 13l3-8h12l3 8v6H3zM3 13h5l1 3h6l1-3h5",
  photo: "M3 5h18v14H3zM3 16l5-5 4 4 3-3 6 6M16 9.5a1.5 1.5 0 1 0 0-.01",
  video: "M3 7h12v10H3zM15 10.5 21 7v10l-6-3.5",
  camera: "M3 8h4l2-3h6l2 3h4v12H3zM12 17a4 4 0 1 0 0-8 4 4 0 0 0 0 8z",
  mic: "M12 14a3 3 0 0 0 3-3V6a3 3 0 0 0-6 0v5a3 3 0 0 0 3 3zM6 11a6 6 0 0 0 12 0M12 17v4M9 21h6",
  personCircle: "M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM12 12.5a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM6.5 18.5c1-2.5 3-3.5 5.5-3.5s4.5 1 5.5 3.5",
  star: "M12 3l2.7 5.6 6.1.9-4.4 4.3 1 6.1L12 17l-5.4 2.9 1-6.1-4.4-4.3 6.1-.9z",
  bell: "M6 17V11a6 6 0 0 1 12 0v6l2 2H4zM10 21h4",
  record: "M12 19a7 7 0 1 0 0-14 7 7 0 0 0 0 14z",
};

// Names as the examples give them (the ".fill" suffix removed) and plain aliases → a path.
const NAMES = {
  house: "house", home: "house",
  location: "location", nearby: "location",
  plus: "plus", "plus.circle": "plus", post: "plus", compose: "plus", make: "plus", "custom.make": "plus",
  bubble: "bubble", "bubble.left": "bubble", chat: "bubble", message: "bubble",
  person: "person", me: "person", profile: "person",
  magnifyingglass: "magnifyingglass", search: "magnifyingglass",
  heart: "heart", likes: "heart",
  "sun.max": "sun", today: "sun",
  calendar: "calendar", "calendar.circle": "calendar", week: "calendar",
  "chart.bar": "chart", stats: "chart",
  "list.bullet": "list", list: "list",
  map: "map",
  gearshape: "gear", gear: "gear", settings: "gear",
  "arrow.clockwise": "refresh", refresh: "refresh",
  safari: "compass", discover: "compass",
  tray: "tray", inbox: "tray",
  "photo.on.rectangle": "photo", photo: "photo", library: "photo",
  video: "video", record_video: "video",
  camera: "camera", take_photo: "camera",
  mic: "mic", audio: "mic", record_audio: "mic",
  "person.crop.circle": "personCircle", account: "personCircle",
  star: "star", bell: "bell", record: "record",
};

const CUSTOM = { "custom.one": "1", "custom.two": "2", "custom.four": "4", "custom.five": "5" };

/** The SVG markup of icon `name` (null/undefined: nothing). */
export function iconSVG(name) {
  if (!name) return "";
  let base = String(name);
  const filled = /\.fill$/.test(base);
  if (filled) base = base.slice(0, -5);
  const key = NAMES[base] ?? NAMES[base.replace(/\.(circle|square)$/, "")];
  const attrs = `viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false" data-icon="${esc(name)}"`;
  if (key) {
    // Outline by default; ".fill" fills closed shapes. "plus.circle(.fill)" is drawn as
    // the plus alone: the center button it sits on is already the circle.
    const fill = filled && key !== "plus" && key !== "list" && key !== "refresh" ? "currentColor" : "none";
    return `<svg ${attrs}><path d="${P[key]}" fill="${fill}" fill-rule="evenodd" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"/></svg>`;
  }
  const letter = CUSTOM[base] ?? base.replace(/^custom\./, "").charAt(0).toUpperCase();
  return `<svg ${attrs}><rect x="3" y="3" width="18" height="18" rx="5" fill="${filled ? "currentColor" : "none"}" stroke="currentColor" stroke-width="1.8"/>` +
    `<text x="12" y="16.5" text-anchor="middle" font-size="12" font-family="sans-serif" font-weight="700" fill="${filled ? "var(--bar-bg, #fff)" : "currentColor"}">${esc(letter)}</text></svg>`;
}

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}
