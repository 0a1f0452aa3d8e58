// The kretrieve console in a real browser: playwright-core drives Debian's
// Chromium against a running pipeline (`kretrieve run --serve`, whose gateway
// serves the console at /console/) and against `kretrieve console` reading
// the same Kafka. Run it with `make console-test` (which builds bin/kretrieve
// and bin/console-e2e-poison first), or here with `npm ci && npm test`.
//
// It checks that the map shows every stage and edge with non-zero
// throughput and the documents topic into run's index, that a search shows results and a waterfall whose spans are the
// trace's (api/traces/{id}), that a poison record appears on the dead-letter
// page, and that a stored-XSS canary, as a query and as a poison record's
// key, value and headers, is shown as text and never executed. It saves
// 1280×800 screenshots of each page to docs/img/console-*.png.
//
// Environment:
//   KRETRIEVE_BIN            the binary (default: <repo>/bin/kretrieve)
//   KRETRIEVE_POISON_BIN     the poison publisher (default: <repo>/bin/console-e2e-poison)
//   CHROMIUM                 the browser (default: /usr/bin/chromium)
//   KRETRIEVE_CONSOLE_SHOTS  where screenshots go (default: <repo>/docs/img)
//   KRETRIEVE_CONSOLE_MOCK=1 run the browser checks against mock-server.mjs
//                            instead of a pipeline (UI work only; screenshots
//                            then go to a temporary directory)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, mkdirSync, existsSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const execFileP = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..');
const MOCK = process.env.KRETRIEVE_CONSOLE_MOCK === '1';
const BIN = process.env.KRETRIEVE_BIN || path.join(repo, 'bin', 'kretrieve');
const POISON_BIN = process.env.KRETRIEVE_POISON_BIN || path.join(repo, 'bin', 'console-e2e-poison');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.KRETRIEVE_CONSOLE_SHOTS || (MOCK ? mkdtempSync(path.join(os.tmpdir(), 'console-shots-')) : path.join(repo, 'docs', 'img'));
const LOGS = mkdtempSync(path.join(os.tmpdir(), 'console-e2e-'));

const CANARY = '<img src=x onerror="window.__xss=1">';
const QUERY = 'parse a URL query string';
const QUERIES = ['parse a URL query string', 'gzip a file', 'read a CSV file', 'format a time', 'sort a slice', 'open a TCP connection', 'json decode a stream'];

const procs = [];
let gateway = ''; // http://127.0.0.1:PORT/
let base = ''; // the console: http://127.0.0.1:PORT/console/
let brokers = '';
let browser;
let loadTimer = null;
let mockServer = null;

// ---------- helpers ----------

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** until calls fn until it returns a truthy value (returned) or ms pass. */
async function until(fn, ms, what) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}` + (last ? `: ${last.message}` : ''));
    await new Promise((r) => setTimeout(r, 200));
  }
}

function start(name, args) {
  const log = path.join(LOGS, name + '.log');
  const fd = openSync(log, 'a');
  const p = spawn(BIN, args, { stdio: ['ignore', fd, fd] });
  p.logFile = log;
  p.exited = new Promise((resolve) => p.on('exit', (code, sig) => resolve({ code, sig })));
  procs.push(p);
  return p;
}

function tail(p) {
  try { return readFileSync(p.logFile, 'utf8').split('\n').slice(-25).join('\n'); } catch { return ''; }
}

async function getJSON(url, opts) {
  const res = await fetch(url, opts);
  const body = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** newPage opens a 1280×800 page that records dialogs, page errors and CSP reports. */
async function newPage() {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  page.dialogs = [];
  page.problems = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => page.problems.push('page error: ' + e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text())) page.problems.push('console ' + m.type() + ': ' + m.text());
  });
  return page;
}

/** assertClean: the canary never ran, no dialog opened, no image was inserted. */
async function assertClean(page, where) {
  assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined', `${where}: the XSS canary ran`);
  assert.deepEqual(page.dialogs, [], `${where}: a dialog opened`);
  assert.equal(await page.locator('img').count(), 0, `${where}: an <img> element is in the page`);
}

function noProblems(page, where) {
  // The failed polls of a stopped server are not the page's fault; CSP
  // violations and script errors are.
  const bad = page.problems.filter((p) => !/Failed to load resource|net::ERR_/.test(p));
  assert.deepEqual(bad, [], `${where}: console errors`);
}

async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `console-${name}.png`) });
}

function startLoad() {
  let i = 0;
  loadTimer = setInterval(() => {
    const query = QUERIES[i++ % QUERIES.length];
    fetch(gateway + 'v1/requests', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query, top_k: 5 }) })
      .then((r) => r.arrayBuffer()).catch(() => {});
  }, 40);
}

async function publishPoison() {
  if (MOCK) return; // the mock's dead letters carry the canary already
  const { stdout } = await execFileP(POISON_BIN, [
    '--brokers', brokers, '--topic', 'retrieval.requests',
    '--key', CANARY, '--value', '{"query": ' + CANARY,
    '--header', 'x-canary=' + CANARY, '--header', 'x-note=poison from console.test.mjs',
  ]);
  return stdout.trim();
}

// ---------- set-up ----------

before(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  if (MOCK) {
    const { startMock } = await import('./mock-server.mjs');
    mockServer = await startMock(0);
    gateway = `http://127.0.0.1:${mockServer.address().port}/`;
    base = gateway + 'console/';
    return;
  }
  assert.ok(existsSync(BIN), `${BIN} is missing: run make build (or make console-test)`);
  const httpPort = await freePort();
  const brokerPort = await freePort();
  gateway = `http://127.0.0.1:${httpPort}/`;
  base = gateway + 'console/';
  brokers = `127.0.0.1:${brokerPort}`;
  const run = start('run', ['run', '--serve', '--requests', '50', '--http-listen', `127.0.0.1:${httpPort}`,
    '--listen', brokers, '--pathways-interval', '1s', '--log-level', 'warn']);
  await until(async () => {
    const ended = await Promise.race([run.exited, Promise.resolve(null)]);
    if (ended) throw new Error(`kretrieve run exited (${JSON.stringify(ended)}):\n${tail(run)}`);
    return (await fetch(gateway + 'readyz')).ok;
  }, 120000, 'kretrieve run --serve to be ready');
  const res = await fetch(base);
  assert.equal(res.status, 200, `GET /console/ on the gateway: ${res.status} (is the console backend in this binary?)`);
  startLoad();
});

after(async () => {
  if (loadTimer) clearInterval(loadTimer);
  if (browser) await browser.close();
  if (mockServer) mockServer.close();
  for (const p of procs) {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
  }
  await Promise.all(procs.map((p) => Promise.race([p.exited, new Promise((r) => setTimeout(r, 20000))])));
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  console.log(`# logs in ${LOGS}; screenshots in ${SHOTS}`);
});

// ---------- the checks ----------

test('the console is served with a strict CSP and no inline script or style', async () => {
  const res = await fetch(base);
  const csp = res.headers.get('content-security-policy') || '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  const html = await res.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/i, 'an inline <script>');
  assert.doesNotMatch(html, /\sstyle=/i, 'an inline style attribute');
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'an inline event handler');
  assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//i, 'a resource from elsewhere');
  // app.js and every module it imports, transitively.
  const seen = new Set();
  const queue = [new URL('assets/app.js', base).href];
  while (queue.length) {
    const u = queue.shift();
    if (seen.has(u)) continue;
    seen.add(u);
    const r = await fetch(u);
    assert.equal(r.status, 200, u);
    assert.match(r.headers.get('content-type') || '', /^(text|application)\/javascript\b/, u + ' is not served as JavaScript');
    const js = await r.text();
    assert.doesNotMatch(js, /\.innerHTML\s*=|outerHTML\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function\(/, u + ' writes HTML or evaluates strings');
    for (const m of js.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)) queue.push(new URL(m[1], u).href);
  }
  assert.ok(seen.size > 1, 'app.js imports no modules: ' + [...seen]);
});

test('the map shows every stage and edge with non-zero throughput, live', async () => {
  const page = await newPage();
  await page.goto(base + '#/map');
  const m = await until(async () => {
    const m = await getJSON(base + 'api/map');
    return m.stages.length && m.edges.length && m.edges.every((e) => e.msgs_per_sec > 0) ? m : null;
  }, 60000, 'api/map to report throughput on every edge');
  const names = m.stages.map((s) => s.name);
  for (const want of ['retrieval', 'enrichment']) assert.ok(names.includes(want), `api/map has no stage ${want}: ${names}`);
  for (const want of ['retrieval.requests', 'retrieval.candidates', 'retrieval.results']) {
    assert.ok(m.edges.some((e) => e.topic === want), `api/map has no edge ${want}`);
  }
  for (const s of m.stages) await page.locator(`[data-stage="${s.name}"]`).waitFor();
  for (const e of m.edges) {
    const edge = page.locator(`[data-edge="${e.topic}"]`);
    await edge.waitFor();
    await until(async () => Number(await edge.getAttribute('data-rate')) > 0, 30000, `edge ${e.topic} to show throughput`);
    const rate = await edge.locator('[data-field="rate"]').textContent();
    assert.match(rate, /[1-9]/, `edge ${e.topic} shows ${rate}`);
    assert.match(await edge.textContent(), /p50 \/ p99/);
  }
  // The ingestion edge: run follows the documents topic into its index
  // (named "index"), every document applied, nothing left to apply.
  const ix = await until(async () => {
    const m = await getJSON(base + 'api/map');
    const ix = (m.indexes || []).find((i) => i.name === 'index');
    return ix && ix.workers.length === 1 && ix.workers[0].documents > 1000 && ix.workers[0].lag_records === 0 ? ix : null;
  }, 60000, 'api/map to show run\'s index with its documents and no lag');
  assert.equal(ix.topic, 'retrieval.documents');
  assert.ok(ix.workers[0].ready, 'run\'s index is not ready');
  const box = page.locator('[data-index="index"]');
  await box.waitFor();
  assert.match(await box.textContent(), /freshness p50 \/ p99/);
  const worker = box.locator(`[data-worker="${ix.workers[0].instance}"]`);
  await worker.waitFor();
  await until(async () => /[1-9]/.test(await worker.locator('[data-field="documents"]').textContent()), 15000, 'the worker row to show its documents');
  assert.match(await worker.textContent(), /ready/);
  assert.match(await worker.locator('[data-field="lag"]').textContent(), /^0 rec/);
  // Completeness by origin time: once the first cohorts are judged (30 s
  // after them), how many requests entered and ended, and nothing
  // unfinished on a healthy pipeline.
  await page.locator('[data-field="completeness"]').waitFor();
  const summary = page.locator('[data-field="completeness-summary"]');
  await until(async () => /[1-9][\d,]* entered/.test(await summary.textContent().catch(() => '')), 90000, 'the completeness summary');
  assert.match(await summary.textContent(), / 0 unfinished/);
  // Live: the server's events (or the polling fallback) update the page.
  const first = await page.locator('[data-field="updated"]').textContent();
  await until(async () => (await page.locator('[data-field="updated"]').textContent()) !== first, 15000, 'the map to update');
  assert.match(await page.locator('#conn').textContent(), /live|polling/);
  await shot(page, 'map');
  noProblems(page, 'map');
  await assertClean(page, 'map');
  await page.context().close();
});

let searchTrace = '';

test('a search by keyboard shows results, timings and a waterfall whose spans are the trace', async () => {
  const page = await newPage();
  await page.goto(base + '#/map');
  await page.locator('h1').waitFor();
  // Keyboard only: the first Tab reaches the skip link, then the nav.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'skip');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'main');
  await page.locator('[data-nav="search"]').focus();
  await page.keyboard.press('Enter');
  await page.locator('#q').waitFor();
  await page.locator('#q').focus();
  await page.keyboard.type(QUERY);
  await page.keyboard.press('Enter');
  const results = page.locator('.result');
  await results.first().waitFor({ timeout: 30000 });
  assert.ok(await results.count() > 0);
  assert.ok(await page.locator('.result mark').count() > 0, 'no highlights in the snippets');
  await page.locator('[data-table="timings"] [data-stage-timing="retrieval"]').waitFor();
  const rows = page.locator('table.waterfall tr[data-span-id]');
  await rows.first().waitFor();
  const traceId = await page.locator('table.waterfall').getAttribute('data-trace-id');
  assert.match(traceId, /^[0-9a-f]{32}$/);
  searchTrace = traceId;
  const shown = await rows.evaluateAll((rs) => rs.map((r) => ({ id: r.dataset.spanId, cat: r.dataset.category, name: r.querySelector('.span-label').textContent })));
  // Queue wait and work are both there and look different (hatched vs solid).
  assert.ok(shown.some((s) => s.cat === 'wait'), 'no queue-wait span in the waterfall');
  assert.ok(shown.some((s) => s.cat === 'work'), 'no work span in the waterfall');
  const look = (cat) => page.locator(`tr[data-category="${cat}"] .bar`).first().evaluate((b) => getComputedStyle(b).backgroundImage);
  assert.match(await look('wait'), /repeating-linear-gradient/, 'queue wait is not hatched');
  assert.equal(await look('work'), 'none', 'work is not solid');
  assert.ok(await page.locator('.legend').isVisible());
  // The waterfall's spans are the trace's: same ids, names and categories.
  const trace = await until(async () => {
    const t = await getJSON(base + 'api/traces/' + traceId);
    const ids = new Set(t.spans.map((s) => s.span_id));
    return shown.every((s) => ids.has(s.id)) ? t : null;
  }, 15000, 'api/traces to hold every span of the search waterfall');
  const byId = new Map(trace.spans.map((s) => [s.span_id, s]));
  for (const s of shown) {
    assert.equal(s.name, byId.get(s.id).name, `span ${s.id}'s name`);
    assert.equal(s.cat, byId.get(s.id).category, `span ${s.id}'s category`);
  }
  await shot(page, 'search');
  noProblems(page, 'search');
  await assertClean(page, 'search');
  await page.context().close();
});

test('the trace page draws api/traces/{id} and the slowest requests link to it', async () => {
  assert.ok(searchTrace, 'the search test found no trace');
  // Let the trace settle: its spans stop changing.
  let prev = '';
  const t = await until(async () => {
    const t = await getJSON(base + 'api/traces/' + searchTrace);
    const key = t.spans.map((s) => s.span_id + ':' + s.duration_us).sort().join(',');
    const same = key === prev;
    prev = key;
    return same ? t : null;
  }, 15000, 'the trace to settle');
  const page = await newPage();
  await page.goto(base + '#/trace/' + searchTrace);
  const rows = page.locator('table.waterfall tr[data-span-id]');
  await rows.first().waitFor();
  const drawn = await rows.evaluateAll((rs) => rs.map((r) => {
    const bar = r.querySelector('.bar');
    return { id: r.dataset.spanId, depth: Number(r.dataset.depth), left: parseFloat(bar.style.left), width: parseFloat(bar.style.width),
      indent: parseFloat(r.querySelector('.span-label').style.paddingLeft) || 0 };
  }));
  assert.deepEqual(drawn.map((d) => d.id).sort(), t.spans.map((s) => s.span_id).sort(), 'the trace page shows other spans than api/traces');
  // Drawn in api/traces' order (the server's tree), each at its depth.
  assert.deepEqual(drawn.map((d) => d.id + ':' + d.depth), t.spans.map((s) => s.span_id + ':' + s.depth), 'the trace page draws the spans out of api/traces\' order or depth');
  assert.ok(t.spans.some((s) => s.depth > 0), 'api/traces gave every span depth 0');
  for (const d of drawn) assert.ok(Math.abs(d.indent - Math.min(d.depth, 12) * 0.9) < 0.01, `span ${d.id} at depth ${d.depth} is indented ${d.indent}em`);
  const t0 = Math.min(...t.spans.map((s) => s.start_us));
  const total = Math.max(...t.spans.map((s) => s.start_us + s.duration_us)) - t0;
  const byId = new Map(t.spans.map((s) => [s.span_id, s]));
  for (const d of drawn) {
    const s = byId.get(d.id);
    assert.ok(Math.abs(d.left - ((s.start_us - t0) / total) * 100) < 0.01, `span ${d.id} (${s.name}) starts at ${d.left}%`);
    assert.ok(Math.abs(d.width - Math.max(0.2, (s.duration_us / total) * 100)) < 0.01, `span ${d.id} (${s.name}) is ${d.width}% wide`);
  }
  assert.equal(await page.locator('[data-field="source"]').textContent(), t.source);
  await shot(page, 'trace');
  // The slowest recent requests (run's 50 and the search's, at least) link
  // to their traces. The page read api/slowest when it loaded; requests
  // ending since may have reordered it, so the link is checked against the
  // page's own first row, which must still be among api/slowest's.
  const link = page.locator('[data-table="slowest"] a[data-trace-link]').first();
  await link.waitFor();
  const slowest = await link.getAttribute('data-trace-link');
  const slow = await getJSON(base + 'api/slowest');
  assert.ok(slow.requests.some((r) => r.trace_id === slowest), `the page's slowest request ${slowest} is not among api/slowest's`);
  await link.focus();
  await page.keyboard.press('Enter');
  await until(async () => (await page.locator('[data-field="trace-id"]').textContent().catch(() => '')) === slowest, 15000, 'the slowest request\'s trace');
  // An unknown trace is an error, shown as such.
  await page.goto(base + '#/trace/' + '0'.repeat(31) + '1');
  await page.locator('main .error[role="alert"]').waitFor();
  noProblems(page, 'trace');
  await assertClean(page, 'trace');
  await page.context().close();
});

test('a canary query is shown as text and never executed', async () => {
  const page = await newPage();
  await page.goto(base + '#/search');
  await page.locator('#q').fill(CANARY);
  await page.locator('#q').press('Enter');
  await page.locator('.query-echo, .search-out .error').first().waitFor({ timeout: 30000 });
  if (await page.locator('.query-echo').count()) {
    assert.equal(await page.locator('.query-echo').textContent(), CANARY);
  }
  await assertClean(page, 'canary search');
  await page.context().close();
});

test('a poison record appears on the dead-letter page, its canaries as text', async () => {
  const published = await publishPoison();
  const page = await newPage();
  await page.goto(base + '#/deadletters');
  const letter = page.locator('li.letter').filter({ has: page.locator('.letter-key', { hasText: CANARY }) }).first();
  await until(async () => {
    if (await letter.count()) return true;
    await page.locator('.filters button[type="submit"]').click();
    await page.locator('.dl-out .letters, .dl-out [data-field="no-letters"], .dl-out .error').first().waitFor();
    return (await letter.count()) > 0;
  }, 60000, `the poison record (${published || 'mock'}) on the dead-letter page`);
  assert.equal(await letter.locator('.letter-key').textContent(), CANARY);
  const hv = await letter.locator('[data-table="headers"] td.hv').allTextContents();
  assert.ok(hv.includes(CANARY), `the canary header is not shown as text: ${JSON.stringify(hv)}`);
  assert.match(await letter.locator('.letter-reason').textContent(), /\S/);
  // Filtering by the letter's reason keeps it; the other error type hides it.
  const reason = await letter.locator('.letter-reason').textContent();
  await page.locator('#dl-reason').selectOption(reason);
  await page.locator('.filters button[type="submit"]').click();
  await letter.waitFor();
  const errType = (await letter.locator('.tag').textContent()).trim();
  await page.locator('#dl-type').selectOption(errType === 'permanent' ? 'transient' : 'permanent');
  await page.locator('.filters button[type="submit"]').click();
  await until(async () => (await letter.count()) === 0, 15000, 'the other error type to hide the letter');
  await page.locator('#dl-type').selectOption('');
  await page.locator('#dl-reason').selectOption('');
  await page.locator('.filters button[type="submit"]').click();
  await letter.waitFor();
  // Read-only by default: no replay button.
  const d = await getJSON(base + 'api/deadletters?limit=1');
  assert.equal(await page.locator('[data-action="replay"]').count(), d.replay_allowed ? 1 : 0);
  await letter.scrollIntoViewIfNeeded();
  await shot(page, 'deadletters');
  noProblems(page, 'dead letters');
  await assertClean(page, 'dead letters');
  // The map counts it on the retrieval stage, its reason as text.
  await page.goto(base + '#/map');
  await until(async () => Number((await page.locator('[data-stage="retrieval"] .kv dd.bad').textContent().catch(() => '0')).replace(/\D/g, '')) > 0,
    30000, 'the retrieval stage to count the dead letter');
  await assertClean(page, 'map with dead letters');
  await page.context().close();
});

test('kretrieve console reads the same Kafka: map and dead letters', { skip: MOCK && 'mock run' }, async () => {
  let help = '';
  try {
    help = (await execFileP(BIN, ['console', '--help'])).stdout;
  } catch (e) {
    assert.fail(`kretrieve console --help failed: ${e.message}`);
  }
  const port = await freePort();
  assert.match(help, /--listen /, 'kretrieve console has no --listen flag');
  const con = start('console', ['console', '--brokers', brokers, '--listen', `127.0.0.1:${port}`, '--log-level', 'warn']);
  const cbase = `http://127.0.0.1:${port}/console/`;
  await until(async () => {
    const ended = await Promise.race([con.exited, Promise.resolve(null)]);
    if (ended) throw new Error(`kretrieve console exited (${JSON.stringify(ended)}):\n${tail(con)}`);
    return (await fetch(cbase)).ok;
  }, 60000, 'kretrieve console to serve');
  const page = await newPage();
  await page.goto(cbase + '#/map');
  for (const s of ['retrieval', 'enrichment']) await page.locator(`[data-stage="${s}"]`).waitFor({ timeout: 30000 });
  await page.goto(cbase + '#/deadletters');
  await page.locator('.letter-key', { hasText: CANARY }).first().waitFor({ timeout: 30000 });
  noProblems(page, 'kretrieve console');
  await assertClean(page, 'kretrieve console');
  await page.context().close();
});
