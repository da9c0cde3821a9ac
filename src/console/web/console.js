// Entry point: tabs, theme, login, the "disconnected" banner and the once-a-second poll.
// Polling rather than server-sent events: EventSource cannot send an Authorization header,
// and an open stream would hold one of the server's HTTP workers per tab.

import * as api from './api.js';
import { LineChart, redrawAll } from './charts.js';
import { NodesView, summarize } from './nodes.js';
import { ModelsView } from './models.js';
import { CacheView } from './cache.js';
import { RequestsView } from './requests.js';
import { Playground } from './playground.js';
import { setText, setAttr, num, int, secs, errorText } from './util.js';

const POLL_MS = 1000;
const RETRY_MS = 2000;
const MODELS_EVERY_MS = 5000;
const CACHE_EVERY_MS = 2000;
const TABS = ['overview', 'models', 'cache', 'requests', 'playground'];
const THEME_KEY = 'llmesh.theme';

const $ = (sel) => document.querySelector(sel);

// Everything the page knows, on window for the browser test and for debugging from devtools.
const state = (window.__consoleState = {
  tab: 'overview',
  needsLogin: false,
  connected: true,
  polls: 0,
  nodes: null,
  models: null,
  requests: null,
  cache: null,
  sessions: null,
  history: [], // samples, oldest first, the server's 15-minute window
  windowMs: 900_000,
  nowMs: null, // the server's clock at the last history answer
  clockOffsetMs: 0, // server clock minus ours
  playground: { sent: 0, completed: 0, deltas: 0, errors: 0, busy: false, lastAnswerLength: 0, lastFinish: null, lastError: null },
});

const serverNowS = () => (Date.now() + state.clockOffsetMs) / 1000;

// ---- views ----

const nodesView = new NodesView($('[data-nodes]'));
const modelsView = new ModelsView($('[data-models-loaded]'), $('[data-models-library]'), $('[data-library-section]'));
const cacheView = new CacheView($('#view-cache'));
const requestsView = new RequestsView($('#view-requests'));
const playground = new Playground($('[data-playground]'), state.playground);

const rate = (v) => (v == null ? '—' : v < 10 && v % 1 ? num(v, 1) : int(v));
const rateAxis = (v) => (v >= 10000 ? `${int(v / 1000)}k` : v >= 1000 ? `${num(v / 1000, 1)}k` : rate(v));
const msAxis = (v) => (v === 0 ? '0' : v < 1 ? `${Math.round(v * 1000)} ms` : `${num(v, 1)} s`);
const charts = [
  new LineChart($('[data-chart=tokens]'), {
    series: [
      { key: 'prompt_tokens_per_s', label: 'in', color: '--c1' },
      { key: 'output_tokens_per_s', label: 'out', color: '--c2' },
    ],
    format: rate,
    axisFormat: rateAxis,
    minMax: 10,
  }),
  new LineChart($('[data-chart=load]'), {
    series: [
      { key: 'running', label: 'running', color: '--c1' },
      { key: 'waiting', label: 'waiting', color: '--c4' },
    ],
    format: (v) => (v == null ? '—' : int(v)),
    integer: true,
    minMax: 4,
  }),
  new LineChart($('[data-chart=ttft]'), {
    series: [
      { key: 'ttft_p50_s', label: 'p50', color: '--c3' },
      { key: 'ttft_p95_s', label: 'p95', color: '--c2' },
    ],
    format: secs,
    axisFormat: msAxis,
    minMax: 0.1,
  }),
];

function showPanelError(name, err) {
  const box = document.querySelector(`[data-error="${name}"]`);
  if (!box) return;
  // Auth and connection failures have their own prompt and banner.
  const text = err && !(err instanceof api.AuthError) && !(err instanceof api.NetError) ? errorText(err) : '';
  setText(box, text);
  box.hidden = !text;
}

// ---- polling ----

async function pollNodes() {
  try {
    state.nodes = await api.getJSON('/console/api/nodes');
    nodesView.render(state.nodes, serverNowS());
    const s = summarize(state.nodes);
    setText($('#server-name'), s.name);
    setText($('#server-state'), s.text);
    setAttr($('#server-state'), 'data-state', s.state);
    const title = `${s.name} · llmesh console`;
    if (document.title !== title) document.title = title;
    showPanelError('nodes', null);
  } catch (e) {
    showPanelError('nodes', e);
  }
}

async function pollHistory() {
  try {
    const h = state.history;
    const last = h.length ? h[h.length - 1].t_ms : null;
    // The first load takes the whole window; then only the samples after the last one seen.
    const data = await api.getJSON(`/console/api/history${last != null ? `?since=${last}` : ''}`);
    for (const s of data.samples || []) if (last == null || s.t_ms > last) h.push(s);
    if (data.window_s) state.windowMs = data.window_s * 1000;
    if (data.now_ms) {
      state.nowMs = data.now_ms;
      state.clockOffsetMs = data.now_ms - Date.now();
    }
    const cutoff = (state.nowMs ?? Date.now()) - state.windowMs;
    let drop = 0;
    while (drop < h.length && h[drop].t_ms < cutoff) drop++;
    if (drop) h.splice(0, drop);
    for (const c of charts) {
      c.windowMs = state.windowMs;
      c.setData(h, state.nowMs);
    }
    cacheView.hitChart.windowMs = cacheView.evictChart.windowMs = state.windowMs;
    cacheView.renderHistory(h, state.nowMs);
    showPanelError('history', null);
  } catch (e) {
    showPanelError('history', e);
  }
}

let modelsAt = 0;
async function pollModels() {
  modelsAt = Date.now();
  try {
    state.models = await api.getJSON('/console/api/models');
    modelsView.render(state.models);
    showPanelError('models', null);
  } catch (e) {
    modelsAt = 0;
    showPanelError('models', e);
  }
}

async function pollRequests() {
  try {
    state.requests = await api.getJSON('/console/api/requests?limit=100');
    requestsView.render(state.requests);
    showPanelError('requests', null);
  } catch (e) {
    showPanelError('requests', e);
  }
}

let cacheAt = 0;
let cacheMissing = false;
let sessionsMissing = false;
async function pollCache() {
  cacheAt = Date.now();
  // A router keeps no cache of its own (its upstreams do): no /v1/cache or /v1/sessions to ask.
  if (state.nodes?.nodes?.[0]?.role === 'route') cacheMissing = sessionsMissing = true;
  // A 404 means this process has no such view (a router): ask once, not every poll.
  const one = async (path, missing) => {
    if (missing) return { missing: true };
    try {
      return { data: await api.getJSON(path) };
    } catch (e) {
      return { error: e };
    }
  };
  const [cache, sessions] = await Promise.all([one('/v1/cache', cacheMissing), one('/v1/sessions', sessionsMissing)]);
  if (cache.error?.status === 404) cacheMissing = true;
  if (sessions.error?.status === 404) sessionsMissing = true;
  state.cache = cache.data ?? state.cache;
  state.sessions = sessions.data ?? state.sessions;
  const why = (r) => (r.missing ? 'this process keeps no prefix cache of its own (a router: see its upstreams)' : r.error ? errorText(r.error) : null);
  if (!(cache.error instanceof api.NetError)) cacheView.renderTiers(cache.data, why(cache));
  if (!(sessions.error instanceof api.NetError)) cacheView.renderSessions(sessions.data, why(sessions));
}

let timer = null;
let polling = false;
let again = false;

async function tick() {
  timer = null;
  // Hidden tab: stop; visibilitychange restarts. Login pending: wait for the key.
  if (document.visibilityState === 'hidden' || state.needsLogin) return;
  if (polling) {
    again = true;
    return;
  }
  polling = true;
  try {
    const tasks = [pollNodes(), pollHistory()];
    const now = Date.now();
    if (state.tab === 'models' && now - modelsAt >= MODELS_EVERY_MS) tasks.push(pollModels());
    if (state.tab === 'requests') tasks.push(pollRequests());
    if (state.tab === 'cache' && now - cacheAt >= CACHE_EVERY_MS) tasks.push(pollCache());
    if (state.tab === 'playground') tasks.push(playground.loadModels().catch(() => {}));
    await Promise.allSettled(tasks);
    state.polls++;
  } finally {
    polling = false;
  }
  if (state.needsLogin) return;
  if (again) {
    again = false;
    pollNow();
  } else schedule(state.connected ? POLL_MS : RETRY_MS);
}

function schedule(ms) {
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => {
    tick().catch((e) => console.warn('poll failed', e));
  }, ms);
}

function pollNow() {
  schedule(0);
}

// ---- connection, login ----

api.on('offline', () => {
  state.connected = false;
  $('#banner').hidden = false;
  document.body.classList.add('offline');
  setText($('#server-state'), 'disconnected');
  setAttr($('#server-state'), 'data-state', 'down');
});
api.on('online', () => {
  if (!state.connected) {
    state.connected = true;
    $('#banner').hidden = true;
    document.body.classList.remove('offline');
    modelsAt = cacheAt = 0; // the server may have restarted with other models
  }
});

api.on('auth', (err) => {
  if (err.hadKey) api.setKey(''); // a rejected key is not kept for the next reload
  showLogin(err.hadKey ? 'The key was rejected. Enter it again.' : 'This server needs an API key.');
});

function showLogin(reason) {
  const wasShown = state.needsLogin;
  state.needsLogin = true;
  setText($('#login-reason'), reason);
  $('#login').hidden = false;
  document.body.classList.add('needs-login');
  if (!wasShown) $('#login-key').focus();
}

$('#login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = $('#login-key');
  const key = input.value.trim();
  if (!key) return;
  api.setKey(key);
  input.value = '';
  state.needsLogin = false;
  $('#login').hidden = true;
  document.body.classList.remove('needs-login');
  modelsAt = cacheAt = 0;
  playground.modelsLoaded = false;
  pollNow();
});

// ---- tabs ----

function showTab(name) {
  if (!TABS.includes(name)) name = 'overview';
  state.tab = name;
  for (const v of document.querySelectorAll('[data-view]')) v.hidden = v.dataset.view !== name;
  for (const a of document.querySelectorAll('[data-tab]')) {
    if (a.dataset.tab === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (name === 'models') modelsAt = 0;
  if (name === 'cache') cacheAt = 0;
  pollNow();
}

window.addEventListener('hashchange', () => showTab(location.hash.slice(1)));
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') pollNow();
});

// ---- theme: the system's unless toggled; the choice is kept in localStorage ----

const systemDark = window.matchMedia('(prefers-color-scheme: dark)');

// 'light', 'dark', or null: follow the system.
let themeChoice = null;
try {
  const t = localStorage.getItem(THEME_KEY);
  if (t === 'light' || t === 'dark') themeChoice = t;
} catch {
  /* storage disabled: the toggle still works for this page */
}

const effectiveTheme = () => themeChoice || (systemDark.matches ? 'dark' : 'light');

function applyTheme() {
  const eff = effectiveTheme();
  document.documentElement.dataset.effectiveTheme = eff;  // the stylesheet's one switch
  setText($('#theme-toggle'), `Theme: ${eff}${themeChoice ? '' : ' (auto)'}`);
  redrawAll();
}

$('#theme-toggle').addEventListener('click', () => {
  const next = effectiveTheme() === 'dark' ? 'light' : 'dark';
  // Back to following the system when the toggle lands on its choice.
  themeChoice = next === (systemDark.matches ? 'dark' : 'light') ? null : next;
  try {
    if (themeChoice) localStorage.setItem(THEME_KEY, themeChoice);
    else localStorage.removeItem(THEME_KEY);
  } catch {
    /* not kept */
  }
  applyTheme();
});
systemDark.addEventListener('change', applyTheme);

// ---- start ----

window.addEventListener('unhandledrejection', (e) => {
  // Every call handles its own errors; this is the last net, so a slip never kills the page.
  console.warn('unhandled', e.reason);
  e.preventDefault();
});

applyTheme();
showTab(location.hash.slice(1));
