// The Nodes panel: one card per process (for `route`: the router, then each upstream),
// with its state, load and memory bars. Cards are built once per node id and then only
// their text and bar widths change, so nothing jumps as the numbers update.

import { el, setText, setAttr, bytes, int, ago, duration, DASH } from './util.js';

// label, how to read {used, total} from node.memory, whether a null means "off"
const BARS = [
  ['weights', 'Weights', (m) => ({ used: m.weights_bytes, total: procScale(m) })],
  ['rss', 'RSS', (m) => ({ used: m.rss_bytes, total: procScale(m) })],
  ['kv_pool', 'KV pool', (m) => m.kv_pool && { used: m.kv_pool.used_bytes, total: m.kv_pool.total_bytes, blocks: m.kv_pool }],
  ['host_tier', 'Host tier', (m) => m.host_tier && { used: m.host_tier.used_bytes, total: m.host_tier.total_bytes }],
  ['disk_tier', 'Disk tier', (m) => m.disk_tier && { used: m.disk_tier.used_bytes, total: m.disk_tier.total_bytes }],
];

// Weights and RSS have no capacity of their own: both are drawn against the larger of the two,
// so the bars compare them (mapped weights may be only partly resident).
function procScale(m) {
  return Math.max(m.rss_bytes || 0, m.weights_bytes || 0) || null;
}

export class NodesView {
  constructor(container) {
    this.container = container;
    this.cards = new Map();
    this.empty = el('p', { class: 'muted', text: 'No nodes reported.', hidden: true });
    container.append(this.empty);
  }

  render(data, nowS) {
    const nodes = (data && data.nodes) || [];
    const seen = new Set();
    nodes.forEach((node, i) => {
      const id = node.id || node.name || String(i);
      seen.add(id);
      let card = this.cards.get(id);
      if (!card) {
        card = buildCard(id);
        this.cards.set(id, card);
      }
      // Keep the server's order (router first).
      if (this.container.children[i] !== card.root) this.container.insertBefore(card.root, this.container.children[i] || null);
      updateCard(card, node, nowS);
    });
    for (const [id, card] of this.cards) {
      if (!seen.has(id)) {
        card.root.remove();
        this.cards.delete(id);
      }
    }
    this.empty.hidden = nodes.length > 0;
  }
}

function buildCard(id) {
  const f = {};
  const field = (name, cls = 'num') => (f[name] = el('span', { class: cls, 'data-field': name }));
  const root = el('article', { class: 'card node', 'data-node-id': id });
  f.name = el('h3', { class: 'node-name' });
  f.state = el('span', { class: 'pill', 'data-node-state': '' });
  f.sub = el('div', { class: 'node-sub muted' });
  root.append(el('header', { class: 'card-head' }, f.name, f.state), f.sub);

  const stats = el('dl', { class: 'kv-grid' });
  const stat = (label, node) => stats.append(el('dt', { text: label }), el('dd', {}, node));
  stat('Role', field('role', ''));
  stat('Kind', field('kind', ''));
  stat('Device', field('device', ''));
  stat('Threads', field('threads'));
  stat('Running', field('running'));
  stat('Waiting', field('waiting'));
  stat('Last seen', field('last_seen'));
  stat('Uptime', field('uptime'));
  root.append(stats);

  f.models = el('div', { class: 'node-models muted' });
  root.append(f.models);

  f.memUnknown = el('p', { class: 'muted', text: 'Memory unknown for this node.', hidden: true });
  const bars = el('div', { class: 'bars' });
  f.bars = {};
  for (const [key, label] of BARS) {
    const fill = el('div', { class: 'fill' });
    const bar = el('div', { class: 'bar', 'data-bar': key, role: 'meter', 'aria-label': label }, fill);
    const value = el('span', { class: 'bar-value num' });
    const row = el('div', { class: 'bar-row', 'data-bar-row': key }, el('span', { class: 'bar-label', text: label }), bar, value);
    bars.append(row);
    f.bars[key] = { row, bar, fill, value };
  }
  f.blocks = el('div', { class: 'muted small tabular', 'data-field': 'kv_blocks', hidden: true });
  root.append(f.memUnknown, bars, f.blocks);
  f.error = el('p', { class: 'error', hidden: true });
  root.append(f.error);
  return { root, f };
}

function updateCard(card, n, nowS) {
  const f = card.f;
  setText(f.name, n.name || n.host || n.id || DASH);
  const state = n.state || 'unknown';
  setText(f.state, state);
  setAttr(f.state, 'data-node-state', state);
  setAttr(f.state, 'data-state', state);
  setAttr(card.root, 'data-state', state);
  const where = [n.host, n.url].filter(Boolean).join(' · ');
  setText(f.sub, where || n.id || '');
  setText(f.role, n.role || DASH);
  setText(f.kind, n.kind || DASH);
  setText(f.device, [n.device, n.kernels].filter(Boolean).join(' / ') || DASH);
  setText(f.threads, n.threads ?? DASH);
  const rq = n.requests || {};
  setText(f.running, int(rq.running));
  setText(f.waiting, int(rq.waiting));
  setText(f.last_seen, ago(n.last_seen, nowS));
  setText(f.uptime, n.started_at ? duration(Math.max(0, nowS - n.started_at)) : DASH);
  const models = Array.isArray(n.models) ? n.models : [];
  setText(f.models, models.length ? `Models: ${models.join(', ')}` : '');
  f.models.hidden = !models.length;

  const m = n.memory;
  f.memUnknown.hidden = Boolean(m);
  for (const [key, , read] of BARS) {
    const b = f.bars[key];
    const v = m ? read(m) : null;
    if (!m) {
      b.row.hidden = true;
      continue;
    }
    b.row.hidden = false;
    if ((key === 'weights' || key === 'rss') && (!v || v.used == null)) {
      b.row.hidden = true; // not a tier that can be off: simply unknown here (a router has no weights)
      continue;
    }
    if (!v || v.used == null) {
      // A tier that is not configured: shown as "off" rather than an empty bar.
      b.bar.classList.add('off');
      b.fill.style.width = '0%';
      setText(b.value, 'off');
      setAttr(b.bar, 'data-state', 'off');
      continue;
    }
    b.bar.classList.remove('off');
    setAttr(b.bar, 'data-state', 'on');
    const frac = v.total > 0 ? Math.min(1, v.used / v.total) : 0;
    b.fill.style.width = `${(frac * 100).toFixed(1)}%`;
    setAttr(b.bar, 'aria-valuenow', Math.round(frac * 100));
    const showTotal = key !== 'weights' && key !== 'rss';
    let text = showTotal ? `${bytes(v.used)} / ${bytes(v.total)}` : bytes(v.used);
    setText(b.value, text);
    if (v.blocks && v.blocks.total_blocks != null) setAttr(b.bar, 'title', `${int(v.blocks.used_blocks)} of ${int(v.blocks.total_blocks)} blocks`);
  }
  const pool = m && m.kv_pool;
  f.blocks.hidden = !pool || pool.total_blocks == null;
  if (pool) {
    // cached_blocks: free blocks still holding a reusable prefix.
    const cached = pool.cached_blocks != null ? `, ${int(pool.cached_blocks)} holding cached prefixes` : '';
    setText(f.blocks, `KV pool: ${int(pool.used_blocks)} of ${int(pool.total_blocks)} blocks in use${cached}`);
  }
  f.error.hidden = !n.error;
  setText(f.error, n.error || '');
}

// The header's summary: the server's name and one state for all its nodes.
export function summarize(data) {
  const nodes = (data && data.nodes) || [];
  if (!nodes.length) return { name: 'llmesh', state: 'unknown', text: 'unknown' };
  const first = nodes[0];
  const counts = {};
  for (const n of nodes) counts[n.state] = (counts[n.state] || 0) + 1;
  const name = first.name || first.host || first.id;
  if (nodes.length === 1) return { name, state: first.state, text: first.state };
  const up = counts.up || 0;
  const state = up === nodes.length ? 'up' : up === 0 ? 'down' : 'degraded';
  return { name, state, text: `${up}/${nodes.length} up` };
}
