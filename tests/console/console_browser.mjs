// The console in a real browser (headless Debian chromium driven by playwright-core), against a
// running `llmesh serve --api-key KEY`. Run by tests/e2e/test_console_browser.sh.
//   env: CONSOLE_URL, CONSOLE_KEY, NODE_MODULES, CHROMIUM (default /usr/bin/chromium),
//        SHOTS_DIR (where the screenshots go); ROUTE_URL, ROUTE_KEY: also a `llmesh route` in front of it
// Each step throws on failure; the process exits non-zero. Waits are waitForFunction on the
// page's own state (never fixed sleeps): the test machine may be slow.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const BASE = process.env.CONSOLE_URL;
const KEY = process.env.CONSOLE_KEY;
const SHOTS = process.env.SHOTS_DIR;
const WAIT = { timeout: 20_000 };
assert.ok(BASE && KEY && SHOTS, 'CONSOLE_URL, CONSOLE_KEY and SHOTS_DIR are required');
const { chromium } = await import(pathToFileURL(`${process.env.NODE_MODULES}/playwright-core/index.mjs`).href);

fs.mkdirSync(SHOTS, { recursive: true });
const t0 = Date.now();
const step = (what) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${what}`);

// Console errors and page errors, with the step they happened in.
let phase = 'load';
const problems = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // Root (as in CI containers) cannot use chromium's sandbox.
  args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
});

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push({ phase, text: m.text() });
  });
  page.on('pageerror', (e) => problems.push({ phase, text: `page error: ${e.message}` }));
  const state = (expr) => page.evaluate(expr);

  phase = 'redirect';
  step('1. / redirects to /console');
  await page.goto(`${BASE}/`);
  assert.equal(new URL(page.url()).pathname, '/console', `landed on ${page.url()}`);

  phase = 'login';
  step('2. the login shows; enter the key');
  await page.waitForSelector('#login-form', { state: 'visible', ...WAIT });
  assert.equal(await page.isVisible('#view-overview'), false, 'the views hide behind the login');
  // A wrong key first: the prompt comes back saying so, and the wrong key is not kept.
  await page.fill('#login-key', `${KEY}-wrong`);
  await page.click('#login-submit');
  await page.waitForFunction(() => /rejected/.test(document.querySelector('#login-reason').textContent) && !document.querySelector('#login').hidden, null, WAIT);
  assert.equal(await state(() => sessionStorage.getItem('llmesh.apiKey')), null, 'a rejected key is dropped');
  await page.fill('#login-key', KEY);
  await page.click('#login-submit');
  await page.waitForSelector('#login', { state: 'hidden', ...WAIT });
  phase = 'signed-in'; // from here on, any console error fails the test
  const stored = await state(() => sessionStorage.getItem('llmesh.apiKey'));
  assert.equal(stored, KEY, 'the key is kept in sessionStorage');
  assert.ok(!page.url().includes(KEY), 'the key is never in the URL');

  step('3. the node panel fills');
  await page.waitForFunction(() => document.querySelector('[data-node-state]')?.textContent === 'up', null, WAIT);
  assert.ok(await page.isVisible('[data-bar="kv_pool"]'), 'the KV pool bar shows');
  assert.equal(await page.getAttribute('[data-bar="kv_pool"]', 'data-state'), 'on', 'the KV pool bar has a value');
  assert.equal(await page.textContent('#server-state'), 'up');

  step('4. the model panel fills');
  await page.click('[data-tab="models"]');
  await page.waitForFunction(
    () => [...document.querySelectorAll('[data-field="architecture"]')].some((e) => e.textContent === 'qwen3'),
    null,
    WAIT,
  );
  await page.screenshot({ path: path.join(SHOTS, 'models-light.png') });

  step('5. a playground message streams an answer');
  await page.click('[data-tab="playground"]');
  await page.waitForFunction(() => document.querySelector('[data-pg-model]')?.value, null, WAIT);
  await page.fill('[data-pg-max-tokens]', '48');
  await page.fill('[data-pg-input]', 'Tell me a short story about a lighthouse.');
  await page.click('[data-pg-send]');
  // Watch the answer from inside the page (every animation frame), so a fast stream is still seen growing.
  await state(() => {
    window.__answerLengths = [];
    const watch = () => {
      const els = document.querySelectorAll('.msg-assistant [data-content]');
      const n = els.length ? els[els.length - 1].textContent.length : 0;
      const seen = window.__answerLengths;
      if (n && seen[seen.length - 1] !== n) seen.push(n);
      if (window.__consoleState.playground.completed < 1) requestAnimationFrame(watch);
    };
    watch();
  });
  await page.waitForFunction(() => window.__consoleState.playground.completed >= 1, null, { timeout: 60_000 });
  const pg = await state(() => ({ ...window.__consoleState.playground, lengths: window.__answerLengths }));
  const answer = await page.textContent('.msg-assistant:last-child [data-content]');
  const shownError = (await page.textContent('[data-pg-error]')) || '';
  step(`   answer: ${answer.length} chars in ${pg.deltas} deltas, seen growing ${JSON.stringify(pg.lengths)}`);
  assert.equal(pg.lastError, null, `the playground failed: ${pg.lastError}`);
  assert.equal(shownError, '', `an error shows: ${shownError}`);
  assert.ok(answer.trim().length > 0 && !answer.includes('(empty answer)'), 'the answer is non-empty');
  assert.ok(pg.deltas >= 2 || pg.lengths.length >= 2, 'the answer streamed in more than one piece');

  phase = 'extra-requests';
  step('   two more requests, outside the page');
  const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const model = await page.inputValue('[data-pg-model]'); // the served name, from /v1/models
  for (const body of [
    { model, messages: [{ role: 'user', content: 'Count to five.' }], max_tokens: 8, ignore_eos: true },
    { model, prompt: 'Once upon a time', max_tokens: 8, ignore_eos: true },
  ]) {
    const url = `${BASE}/v1/${body.prompt ? 'completions' : 'chat/completions'}`;
    const res = await fetch(url, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, 200, `${url}: ${text}`);
  }
  phase = 'signed-in';

  step('6. the requests view lists them; a click shows the timeline');
  await page.click('[data-tab="requests"]');
  await page.waitForFunction(() => document.querySelectorAll('tr[data-request-id]').length >= 3, null, WAIT);
  const rows = await page.$$eval('tr[data-request-id]', (trs) =>
    trs.map((tr) => ({
      id: tr.dataset.requestId,
      prompt: Number(tr.querySelector('[data-field="prompt_tokens"]').textContent.replace(/,/g, '')),
      output: Number(tr.querySelector('[data-field="output_tokens"]').textContent.replace(/,/g, '')),
      status: tr.querySelector('[data-field="status"]').textContent,
    })),
  );
  for (const r of rows.slice(0, 3)) {
    assert.ok(r.prompt > 0 && r.output > 0, `request ${r.id}: prompt ${r.prompt}, output ${r.output}`);
    assert.equal(r.status, '200', `request ${r.id}: status ${r.status}`);
  }
  // The playground's request: the oldest of the three.
  await page.click(`tr[data-request-id="${rows[2].id}"]`);
  await page.waitForSelector('[data-timeline] [data-phase="decode"]', WAIT);
  const phases = await page.$$eval('[data-timeline] [data-phase]', (segs) => segs.map((s) => s.dataset.phase));
  step(`   timeline: ${phases.join(' ')}`);
  for (const p of ['queued', 'prefill', 'first_token', 'decode', 'done']) assert.ok(phases.includes(p), `timeline has ${p}`);
  await page.screenshot({ path: path.join(SHOTS, 'requests-light.png') });

  step('7. the charts show the output tokens/s');
  await page.click('[data-tab="overview"]');
  await page.waitForFunction(() => window.__consoleState.history.some((s) => s.output_tokens_per_s > 0), null, WAIT);
  // The charts drew it: the canvas carries its point count.
  await page.waitForFunction(() => Number(document.querySelector('[data-chart="tokens"] canvas').dataset.points) > 0, null, WAIT);

  step('   screenshots');
  await page.screenshot({ path: path.join(SHOTS, 'overview-light.png') });
  // Dark through the header toggle (kept in localStorage), not only the media query.
  await page.click('#theme-toggle');
  await page.waitForFunction(() => document.documentElement.dataset.effectiveTheme === 'dark', null, WAIT);
  assert.equal(await state(() => localStorage.getItem('llmesh.theme')), 'dark');
  await page.screenshot({ path: path.join(SHOTS, 'overview-dark.png') });
  await page.click('[data-tab="cache"]');
  await page.waitForSelector('[data-cache-tiers] table', WAIT);
  await page.waitForSelector('[data-cache-sessions] table, [data-cache-sessions] p', WAIT);
  await page.screenshot({ path: path.join(SHOTS, 'cache-dark.png') });
  await page.click('[data-tab="playground"]');
  await page.screenshot({ path: path.join(SHOTS, 'playground-dark.png') });
  await page.click('#theme-toggle'); // back to the system's light
  await page.click('[data-tab="overview"]');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => document.documentElement.scrollWidth <= 390, null, WAIT);
  await page.screenshot({ path: path.join(SHOTS, 'phone-overview.png'), fullPage: true });

  if (process.env.ROUTE_URL) {
    step('9. through llmesh route: the router and its upstream as nodes, the upstream with its own memory');
    const routed = await context.newPage();
    routed.on('console', (m) => {
      if (m.type() === 'error') problems.push({ phase, text: `route: ${m.text()}` });
    });
    routed.on('pageerror', (e) => problems.push({ phase, text: `route page error: ${e.message}` }));
    phase = 'login'; // another origin: its own key, its own first 401
    await routed.goto(`${process.env.ROUTE_URL}/console`);
    await routed.waitForSelector('#login-form', { state: 'visible', ...WAIT });
    await routed.fill('#login-key', process.env.ROUTE_KEY);
    await routed.click('#login-submit');
    await routed.waitForSelector('#login', { state: 'hidden', ...WAIT });
    phase = 'signed-in';
    await routed.waitForFunction(() => {
      const states = [...document.querySelectorAll('[data-node-state]')].map((e) => e.textContent);
      return states.length === 2 && states.every((s) => s === 'up');
    }, null, WAIT);
    await routed.waitForFunction(() => document.querySelector('[data-bar="kv_pool"][data-state="on"]'), null, WAIT);
    await routed.screenshot({ path: path.join(SHOTS, 'route-overview.png') });
    await routed.close();
  }

  step('8. no console errors');
  // Before the key is entered the browser logs the expected 401 ("Failed to load resource");
  // everything else, and anything at all after signing in, is a failure.
  const expected401 = (p) => p.phase === 'login' || p.phase === 'load' ? /status of 401/.test(p.text) : false;
  const bad = problems.filter((p) => !expected401(p));
  assert.deepEqual(bad, [], `console errors: ${JSON.stringify(bad, null, 1)}`);
  step(`PASS (${problems.length} expected 401 messages before the login)`);
} finally {
  await browser.close();
}
