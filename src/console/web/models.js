// The Models panel: the loaded models and, with --models-dir, the library of model files.
// Rebuilt only when the JSON changes (it rarely does), so it costs nothing on each poll.

import { el, bytes, int, compact, DASH } from './util.js';

export class ModelsView {
  constructor(loadedEl, libraryEl, librarySection) {
    this.loadedEl = loadedEl;
    this.libraryEl = libraryEl;
    this.librarySection = librarySection;
    this.lastJSON = '';
  }

  render(data) {
    const json = JSON.stringify(data);
    if (json === this.lastJSON) return;
    this.lastJSON = json;
    this.renderLoaded((data && data.loaded) || []);
    this.renderLibrary(data ? data.library : null);
  }

  renderLoaded(models) {
    const cards = models.map((m) => {
      const stats = el('dl', { class: 'kv-grid' });
      const stat = (label, value, field) =>
        stats.append(el('dt', { text: label }), el('dd', { class: 'num', 'data-field': field, text: value ?? DASH }));
      stat('Architecture', m.architecture, 'architecture');
      stat('Quantization', m.quantization, 'quantization');
      stat('Format', m.format, 'format');
      const params =
        m.parameters_active != null && m.parameters_active !== m.parameters_total
          ? `${compact(m.parameters_total)} total, ${compact(m.parameters_active)} active`
          : compact(m.parameters_total);
      stat('Parameters', params, 'parameters');
      stat('Context', m.context_tokens != null ? `${int(m.context_tokens)} tokens` : DASH, 'context_tokens');
      stat('KV cache', kvText(m), 'kv');
      stat('Weights', bytes(m.weights_bytes), 'weights_bytes');
      stat('Node', m.node, 'node');
      return el(
        'article',
        { class: 'card model', 'data-model': m.name },
        el('header', { class: 'card-head' }, el('h3', { text: m.name || DASH }), el('span', { class: 'pill', text: 'loaded', 'data-state': 'up' })),
        m.path ? el('div', { class: 'muted path', text: m.path, title: m.path }) : null,
        stats,
      );
    });
    this.loadedEl.replaceChildren(...(cards.length ? cards : [el('p', { class: 'muted', text: 'No model loaded.' })]));
  }

  renderLibrary(library) {
    this.librarySection.hidden = !library;
    if (!library) return;
    const head = el(
      'tr',
      {},
      ['Name', 'Format', 'Architecture', 'Quantization', 'Parameters', 'Size', 'Loaded', 'Fits'].map((h) => el('th', { text: h, scope: 'col' })),
    );
    const rows = (library.models || []).map((m) => {
      const fits = m.error
        ? el('span', { class: 'error', text: m.error })
        : el(
            'span',
            { class: m.fits ? 'fit-yes' : 'fit-no' },
            el('strong', { text: m.fits ? 'fits' : 'does not fit' }),
            m.fit ? el('span', { class: 'muted', text: ` — ${m.fit}` }) : null,
          );
      return el(
        'tr',
        { 'data-library-model': m.name },
        el('td', { text: m.name || DASH, title: m.path || '' }),
        el('td', { text: m.format || DASH }),
        el('td', { text: m.error ? DASH : m.architecture || DASH }),
        el('td', { text: m.quantization || DASH }),
        el('td', { class: 'num', text: compact(m.parameters_total) }),
        el('td', { class: 'num', text: bytes(m.size_bytes) }),
        el('td', { text: m.loaded ? 'yes' : 'no' }),
        el('td', { class: 'wrap' }, fits),
      );
    });
    const table = el('table', { class: 'table' }, el('thead', {}, head), el('tbody', {}, rows));
    const caption = el('p', { class: 'muted', text: `${int((library.models || []).length)} files in ${library.dir || DASH}` });
    this.libraryEl.replaceChildren(caption, el('div', { class: 'table-wrap' }, table));
  }
}

function kvText(m) {
  const parts = [];
  if (m.kv_dtype) parts.push(m.kv_dtype);
  if (m.kv_bytes_per_token != null) parts.push(`${bytes(m.kv_bytes_per_token)}/token`);
  return parts.length ? parts.join(', ') : DASH;
}
