// The Cache panel: prefix-cache hit rate and evictions over time (from the history samples),
// the blocks in each tier (GET /v1/cache) and the sessions holding the most cached tokens
// (GET /v1/sessions).

import { el, setText, setAttr, bytes, int, num, pct, agoSeconds, shortHash, DASH } from './util.js';
import { LineChart } from './charts.js';

const TOP_SESSIONS = 10;

export class CacheView {
  constructor(root) {
    this.root = root;
    this.hitChart = new LineChart(root.querySelector('[data-chart=hit_rate]'), {
      series: [{ key: 'cache_hit_rate', label: 'hit rate', color: '--c3' }],
      format: (v) => pct(v, 0),
      yMax: 1,
    });
    this.evictChart = new LineChart(root.querySelector('[data-chart=evictions]'), {
      series: [{ key: 'evictions_per_min', label: 'evicted blocks/min', color: '--c2' }],
      format: (v) => (v == null ? DASH : int(v)),
      integer: true,
      minMax: 4,
    });
    this.avalanche = root.querySelector('[data-avalanche]');
    this.avalancheValue = root.querySelector('[data-avalanche-value]');
    this.avalancheText = root.querySelector('[data-avalanche-text]');
    this.avalancheLevel = root.querySelector('[data-avalanche-level]');
    this.tiersEl = root.querySelector('[data-cache-tiers]');
    this.sessionsEl = root.querySelector('[data-cache-sessions]');
    this.lastTiers = '';
    this.lastSessions = '';
  }

  renderHistory(samples, nowMs) {
    this.hitChart.setData(samples, nowMs);
    this.evictChart.setData(samples, nowMs);
    const last = samples.length ? samples[samples.length - 1] : null;
    const perMin = last ? last.evictions_per_min : null;
    const total = last && last.kv_blocks ? last.kv_blocks.pool_total : null;
    // An eviction avalanche: the pool turns over within a minute AND the prefixes it evicted are
    // missed (the hit rate falls). Turnover alone is normal LRU churn: blocks no turn needs again.
    const recent = samples.slice(-60).map((s) => s.cache_hit_rate).filter((r) => r != null);
    const hitRate = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : null;
    let level = 'calm';
    let text = 'No pool blocks evicted in the last minute.';
    if (perMin == null) {
      level = 'unknown';
      text = last ? 'Not reported by this process (a router counts no pool blocks).' : 'No samples yet.';
    } else if (perMin > 0 && total && perMin >= total && hitRate != null && hitRate < 0.5) {
      level = 'avalanche';
      text = `A whole pool's worth (${int(total)} blocks) evicted within a minute while only ${pct(hitRate, 0)} of prompt tokens came from the cache: prefixes are pushed out before their next turn.`;
    } else if (perMin > 0 && total && perMin >= total) {
      level = 'churn';
      text = `The ${int(total)}-block pool turned over within a minute, but ${hitRate == null ? 'no prompt' : pct(hitRate, 0) + ' of prompt tokens'} came from the cache: what it evicted was not needed again.`;
    } else if (perMin > 0) {
      level = 'evicting';
      text = total
        ? `${pct(perMin / total, 0)} of the ${int(total)}-block pool evicted in the last minute.`
        : 'Blocks are being evicted.';
    }
    setText(this.avalancheValue, perMin == null ? DASH : int(perMin));
    setText(this.avalancheLevel, level);
    setText(this.avalancheText, text);
    setAttr(this.avalanche, 'data-level', level);
  }

  renderTiers(cache, error) {
    if (error) {
      this.lastTiers = '';
      this.tiersEl.replaceChildren(el('p', { class: 'muted', text: `Cache view unavailable: ${error}` }));
      return;
    }
    const json = JSON.stringify(cache);
    if (json === this.lastTiers) return;
    this.lastTiers = json;
    const p = cache.pool || {};
    const host = cache.host || {};
    const disk = cache.disk || {};
    const head = el('tr', {}, ['Tier', 'Blocks', 'Bytes', 'Budget', 'Detail'].map((h) => el('th', { text: h, scope: 'col' })));
    const row = (tier, blocks, usedBytes, budget, detail, attrs = {}) =>
      el(
        'tr',
        { 'data-tier': tier, ...attrs },
        el('th', { scope: 'row', text: tier }),
        el('td', { class: 'num', text: blocks }),
        el('td', { class: 'num', text: usedBytes }),
        el('td', { class: 'num', text: budget }),
        el('td', { class: 'wrap muted', text: detail }),
      );
    const rows = [
      row(
        'pool',
        `${int(p.blocks_used)} used · ${int(p.blocks_cached)} cached / ${int(p.blocks_total)}`,
        DASH,
        DASH,
        `${int(p.blocks_pinned)} pinned, ${int(p.evictions)} evicted, ${int(p.promoted_blocks)} promoted from tiers`,
      ),
      host.enabled
        ? row('host', int(host.blocks), bytes(host.bytes), bytes(host.budget_bytes),
          `${int(host.demotions)} demoted, ${int(host.promotions)} promoted, ${int(host.evictions)} evicted`)
        : row('host', 'off', DASH, DASH, 'No host-memory tier (--kv-host-gib)', { class: 'off' }),
      disk.enabled
        ? row('disk', int(disk.blocks), bytes(disk.bytes), bytes(disk.budget_bytes),
          `${int(disk.writes)} written, ${int(disk.promotions)} promoted, ${int(disk.evictions)} evicted` +
            (disk.writable === false ? ', not writable' : '') +
            (disk.write_errors ? `, ${int(disk.write_errors)} write errors` : '') +
            (disk.dir ? ` — ${disk.dir}` : ''))
        : row('disk', 'off', DASH, DASH, 'No disk tier (--kv-disk-dir)', { class: 'off' }),
    ];
    const pc = cache.prefix_cache || {};
    const summary = el(
      'p',
      { class: 'muted' },
      `Since start: ${pct(pc.hit_rate)} of ${int(pc.queried_tokens)} queried prompt tokens came from the cache`,
      cache.restore && cache.restore.blocks ? `; ${int(cache.restore.blocks)} blocks restored at ${num(cache.restore.mb_per_s, 0)} MB/s` : '',
      '.',
    );
    const table = el('table', { class: 'table' }, el('thead', {}, head), el('tbody', {}, rows));
    this.tiersEl.replaceChildren(el('div', { class: 'table-wrap' }, table), summary);
  }

  renderSessions(view, error) {
    if (error) {
      this.lastSessions = '';
      this.sessionsEl.replaceChildren(el('p', { class: 'muted', text: `Sessions unavailable: ${error}` }));
      return;
    }
    const sessions = [...((view && view.sessions) || [])]
      .sort((a, b) => (b.total_cached_tokens || 0) - (a.total_cached_tokens || 0))
      .slice(0, TOP_SESSIONS);
    const json = JSON.stringify(sessions.map((s) => [s.id, s.num_requests, s.total_cached_tokens, s.last_turn_reuse]));
    // last_seen moves every second; redraw on a new turn only, and refresh "ago" texts in place.
    if (json === this.lastSessions) {
      this.sessionsEl.querySelectorAll('[data-seen]').forEach((cell, i) => setText(cell, agoSeconds(sessions[i]?.last_seen_seconds_ago)));
      return;
    }
    this.lastSessions = json;
    if (!sessions.length) {
      this.sessionsEl.replaceChildren(el('p', { class: 'muted', text: 'No sessions yet.' }));
      return;
    }
    const cols = ['Session', 'Source', 'Requests', 'Cached tokens', 'Prompt tokens', 'Last turn reuse', 'Last seen'];
    const head = el('tr', {}, cols.map((h) => el('th', { text: h, scope: 'col' })));
    const rows = sessions.map((s) =>
      el(
        'tr',
        { 'data-session': s.id },
        el('td', { class: 'mono', text: shortHash(s.id, 12), title: s.id }),
        el('td', { text: s.source || DASH }),
        el('td', { class: 'num', text: s.num_failed ? `${int(s.num_requests)} (${int(s.num_failed)} failed)` : int(s.num_requests) }),
        el('td', { class: 'num', text: int(s.total_cached_tokens) }),
        el('td', { class: 'num', text: int(s.total_prompt_tokens) }),
        el('td', { class: 'num', text: pct(s.last_turn_reuse, 0) }),
        el('td', { class: 'num', 'data-seen': '', text: agoSeconds(s.last_seen_seconds_ago) }),
      ),
    );
    const note = el('p', { class: 'muted', text: `Top ${sessions.length} of ${int(view.num_sessions)} sessions by cached tokens (ids are hashes of the session keys).` });
    this.sessionsEl.replaceChildren(el('div', { class: 'table-wrap' }, el('table', { class: 'table' }, el('thead', {}, head), el('tbody', {}, rows))), note);
  }
}
