// DOM and number-formatting helpers shared by the views.
// Server data only ever reaches the page through textContent / attributes (never innerHTML):
// model names, errors and file paths are untrusted.

// el('div', {class: 'x', 'data-id': 7, text: 'hi', onclick: fn}, child, 'text', ...)
export function el(tag, props = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = String(v);
    else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat()) {
    if (kid == null || kid === false) continue;
    e.append(kid instanceof Node ? kid : String(kid));
  }
  return e;
}

// Writes only when the text changed: fewer style recalculations on every poll.
export function setText(e, value) {
  const s = value == null ? '' : String(value);
  if (e.textContent !== s) e.textContent = s;
}

export function setAttr(e, name, value) {
  const s = String(value);
  if (e.getAttribute(name) !== s) e.setAttribute(name, s);
}

export const DASH = '—';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
export function bytes(n) {
  if (n == null || !Number.isFinite(n)) return DASH;
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${UNITS[u]}`;
}

export function int(n) {
  if (n == null || !Number.isFinite(n)) return DASH;
  return Math.round(n).toLocaleString('en-US');
}

// 1234567 -> "1.23M" (parameter counts)
export function compact(n) {
  if (n == null || !Number.isFinite(n)) return DASH;
  const steps = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
  for (const [d, s] of steps) if (Math.abs(n) >= d) return `${(n / d).toFixed(n / d >= 100 ? 0 : 2)}${s}`;
  return String(n);
}

export function num(n, digits = 1) {
  if (n == null || !Number.isFinite(n)) return DASH;
  return n.toFixed(digits);
}

// Durations: milliseconds under a second, seconds above.
export function secs(s) {
  if (s == null || !Number.isFinite(s)) return DASH;
  if (s < 1) return `${(s * 1000).toFixed(s < 0.01 ? 2 : s < 0.1 ? 1 : 0)} ms`;
  if (s < 120) return `${s.toFixed(2)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

export function pct(f, digits = 1) {
  if (f == null || !Number.isFinite(f)) return DASH;
  return `${(f * 100).toFixed(digits)}%`;
}

// Seconds elapsed -> "3 s ago" / "4 min ago".
export function agoSeconds(s) {
  if (s == null || !Number.isFinite(s)) return DASH;
  if (s < 1) return 'just now';
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

// Unix seconds -> "3 s ago", against the server clock when known (skew-free).
export function ago(unixS, nowS = Date.now() / 1000) {
  if (unixS == null) return DASH;
  return agoSeconds(Math.max(0, nowS - unixS));
}

export function duration(s) {
  if (s == null || !Number.isFinite(s)) return DASH;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function clockTime(unixS) {
  if (unixS == null) return DASH;
  const d = new Date(unixS * 1000);
  return d.toLocaleTimeString('en-GB', { hour12: false });
}

export function shortHash(h, n = 8) {
  if (h == null || h === '') return DASH;
  return String(h).slice(0, n);
}

// A message for any error a view shows in its own panel.
export function errorText(e) {
  if (!e) return '';
  return e.message || String(e);
}
