// The Requests panel: the last requests (counts and times only; the server keeps no prompts)
// and, for the one clicked, its timeline as a horizontal bar of phases.

import { el, setText, int, secs, clockTime, shortHash, errorText, DASH } from './util.js';
import { getJSON, HttpError } from './api.js';

const COLUMNS = [
  ['Time', (r) => clockTime(r.arrived_at), 'num'],
  ['Protocol', (r) => r.protocol, ''],
  ['Model', (r) => (r.upstream ? `${r.model ?? DASH} @ ${r.upstream}` : r.model), 'ellipsis'],
  ['Session', (r) => shortHash(r.session), 'mono'],
  ['Prompt', (r) => int(r.prompt_tokens), 'num', 'prompt_tokens'],
  ['Cached', (r) => int(r.cached_tokens), 'num', 'cached_tokens'],
  ['Output', (r) => int(r.output_tokens), 'num', 'output_tokens'],
  ['TTFT', (r) => secs(r.ttft_s), 'num'],
  ['TPOT', (r) => secs(r.tpot_s), 'num'],
  ['Duration', (r) => secs(r.duration_s), 'num'],
  ['Finish', (r) => r.finish_reason, ''],
  ['Status', (r) => (r.status != null ? `${r.status}${r.outcome && r.outcome !== 'ok' ? ` ${r.outcome}` : ''}` : DASH), 'num', 'status'],
];

// Phase colours live in the CSS (.phase-<name>); unknown phases get the default.
const MARKERS = new Set(['first_token', 'done']);

export class RequestsView {
  constructor(root) {
    this.tableEl = root.querySelector('[data-requests-table]');
    this.summaryEl = root.querySelector('[data-requests-summary]');
    this.detailEl = root.querySelector('[data-request-detail]');
    this.selected = null;
    this.lastJSON = '';
    this.detailSeq = 0;
  }

  render(data) {
    const records = (data && data.requests) || [];
    setText(this.summaryEl, `${int(records.length)} shown · ${int(data?.num_recorded)} recorded · ring of ${int(data?.capacity)}`);
    const json = JSON.stringify(records);
    if (json === this.lastJSON) return;
    this.lastJSON = json;
    const head = el('tr', {}, COLUMNS.map(([h, , cls]) => el('th', { scope: 'col', class: cls === 'num' ? 'num' : '', text: h })));
    const rows = records.map((r) => {
      const tr = el(
        'tr',
        {
          class: `req-row outcome-${r.outcome || 'ok'}${r.id === this.selected ? ' selected' : ''}`,
          'data-request-id': r.id,
          tabindex: 0,
          title: r.error ? `${r.id}: ${r.error}` : r.id,
          onclick: () => this.select(r.id),
          onkeydown: (e) => {
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              this.select(r.id);
            }
          },
        },
        COLUMNS.map(([, get, cls, field]) => {
          const text = get(r) ?? DASH;
          return el('td', { class: cls, 'data-field': field, text, title: cls === 'ellipsis' ? text : null });
        }),
      );
      return tr;
    });
    const table = el('table', { class: 'table requests' }, el('thead', {}, head), el('tbody', {}, rows));
    this.tableEl.replaceChildren(
      records.length ? el('div', { class: 'table-wrap' }, table) : el('p', { class: 'muted', text: 'No requests yet. Send one from the Playground.' }),
    );
  }

  async select(id) {
    this.selected = id;
    for (const tr of this.tableEl.querySelectorAll('tr[data-request-id]')) tr.classList.toggle('selected', tr.dataset.requestId === id);
    const seq = ++this.detailSeq; // a slow answer for an earlier click must not overwrite a later one
    this.detailEl.hidden = false;
    this.detailEl.replaceChildren(el('p', { class: 'muted', text: 'Loading…' }));
    try {
      const rec = await getJSON(`/console/api/requests/${encodeURIComponent(id)}`);
      if (seq === this.detailSeq) this.renderDetail(rec);
    } catch (e) {
      if (seq !== this.detailSeq) return;
      const msg = e instanceof HttpError && e.status === 404 ? 'This request is no longer in the ring.' : errorText(e);
      this.detailEl.replaceChildren(el('p', { class: 'error', text: msg }));
    }
  }

  renderDetail(r) {
    const title = el('h3', {}, 'Request ', el('span', { class: 'mono', text: r.id }));
    const facts = el(
      'p',
      { class: 'muted' },
      [
        r.protocol,
        r.model,
        r.stream ? 'stream' : 'no stream',
        r.upstream ? `upstream ${r.upstream}` : null,
        `finish ${r.finish_reason ?? DASH}`,
        `status ${r.status ?? DASH}`,
      ]
        .filter(Boolean)
        .join(' · '),
    );
    const parts = [title, facts];
    if (r.error) parts.push(el('p', { class: 'error', text: r.error }));
    const timeline = Array.isArray(r.timeline) ? r.timeline : null;
    if (!timeline || !timeline.length) {
      parts.push(el('p', { class: 'muted', text: 'No timeline for this request (a routed request keeps none).' }));
    } else {
      parts.push(timelineBar(timeline, r.duration_s), phaseTable(timeline));
    }
    this.detailEl.replaceChildren(...parts);
  }
}

// Phases as positioned segments over the request's whole duration; instants as thin markers.
function timelineBar(phases, duration) {
  const end = Math.max(duration || 0, ...phases.map((p) => p.end_s || 0), 1e-6);
  const bar = el('div', { class: 'timeline', 'data-timeline': '', role: 'img', 'aria-label': 'request timeline' });
  phases.forEach((p) => {
    const start = Math.max(0, p.start_s || 0);
    const stop = Math.max(start, p.end_s ?? start);
    const marker = MARKERS.has(p.phase) || stop - start <= end * 0.002;
    const seg = el('div', {
      class: `seg phase-${p.phase}${marker ? ' marker' : ''}`,
      'data-phase': p.phase,
      title: `${p.phase}: ${secs(start)} → ${secs(stop)}${p.tokens != null ? `, ${p.tokens} tokens` : ''}`,
    });
    seg.style.left = `${((start / end) * 100).toFixed(3)}%`;
    if (!marker) seg.style.width = `${(((stop - start) / end) * 100).toFixed(3)}%`;
    bar.append(seg);
  });
  const axis = el('div', { class: 'timeline-axis num' }, el('span', { text: '0' }), el('span', { text: secs(end / 2) }), el('span', { text: secs(end) }));
  const seen = [...new Set(phases.map((p) => p.phase))];
  const legend = el(
    'div',
    { class: 'legend' },
    seen.map((ph) => el('span', { class: 'legend-item' }, el('span', { class: `swatch phase-${ph}` }), ph.replace('_', ' '))),
  );
  return el('div', { class: 'timeline-box' }, bar, axis, legend);
}

function phaseTable(phases) {
  const head = el('tr', {}, ['Phase', 'Start', 'End', 'Length', 'Tokens', 'Cached'].map((h) => el('th', { scope: 'col', text: h })));
  const rows = phases.map((p) =>
    el(
      'tr',
      {},
      el('td', { text: p.phase }),
      el('td', { class: 'num', text: secs(p.start_s) }),
      el('td', { class: 'num', text: secs(p.end_s) }),
      el('td', { class: 'num', text: p.end_s != null && p.start_s != null ? secs(p.end_s - p.start_s) : DASH }),
      el('td', { class: 'num', text: p.tokens != null ? int(p.tokens) : '' }),
      el('td', { class: 'num', text: p.cached_tokens != null ? int(p.cached_tokens) : '' }),
    ),
  );
  return el('div', { class: 'table-wrap' }, el('table', { class: 'table compact' }, el('thead', {}, head), el('tbody', {}, rows)));
}
