// kretrieve console: the browser side. Plain ES module, no framework, no
// build step, nothing fetched but this console's own api/ (relative URLs, so
// it works under /console/ or /). Every value from the server is put in the
// page with textContent or as an attribute of an element built with
// createElement: never innerHTML, never eval, no inline styles in HTML (bar
// geometry is set through the CSSOM, which the CSP allows).

const POLL_MS = 2000;

// ---------- small DOM helpers ----------

/** el builds an element: el('div', {class: 'x', 'data-y': 1}, child, 'text'). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = String(v);
      else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function announce(text) {
  const a = document.getElementById('announce');
  a.textContent = '';
  // A new text node is announced even when the text repeats.
  window.setTimeout(() => { a.textContent = text; }, 50);
}

function fmtMs(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '–';
  if (v >= 1000) return (v / 1000).toFixed(2) + ' s';
  if (v >= 100) return v.toFixed(0) + ' ms';
  return v.toFixed(1) + ' ms';
}

function fmtUs(us) {
  return fmtMs(us / 1000);
}

function fmtRate(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '–';
  return (v >= 100 ? v.toFixed(0) : v.toFixed(1)) + ' msg/s';
}

// UNKNOWN is what the map shows for a number the server does not know
// (null in /api/map): what `kretrieve pathways` prints too (status.Unknown).
const UNKNOWN = '-';

/** known formats v with f, or UNKNOWN when the server sent null. */
function known(v, f) {
  return typeof v === 'number' && Number.isFinite(v) ? f(v) : UNKNOWN;
}

function fmtNum(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v.toLocaleString('en') : '–';
}

function fmtTime(s) {
  if (!s) return '–';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? String(s) : d.toLocaleString();
}

/** traceLink links to the trace page of id (a hex trace id), or is plain text. */
function traceLink(id, label) {
  if (!id) return el('span', { text: '–' });
  return el('a', { href: '#/trace/' + encodeURIComponent(id), class: 'mono', 'data-trace-link': id, text: label || id });
}

/** safeURL returns u when it is an http(s) address, else null. */
function safeURL(u) {
  try {
    const p = new URL(String(u), document.baseURI);
    return p.protocol === 'https:' || p.protocol === 'http:' ? p.href : null;
  } catch {
    return null;
  }
}

// ---------- API ----------

class APIError extends Error {}

async function api(path, opts) {
  const res = await fetch(path, { credentials: 'same-origin', cache: 'no-store', ...opts });
  let body = null;
  const text = await res.text();
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (!res.ok) {
    let msg = res.status + ' ' + res.statusText;
    if (body && body.error) msg = typeof body.error === 'string' ? body.error : (body.error.message || msg);
    throw new APIError(msg);
  }
  return body;
}

// Every POST carries the console's CSRF header (console.CSRFHeader).
function postJSON(path, obj) {
  return api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Kretrieve-Console': '1' },
    body: JSON.stringify(obj),
  });
}

function errorBox(parent, err) {
  const box = el('p', { class: 'error', role: 'alert', text: (err && err.message) || String(err) });
  parent.append(box);
  return box;
}

// ---------- router ----------

let cleanup = null; // the current page's teardown (closes EventSource, timers)

function parseHash() {
  let h = location.hash.replace(/^#\/?/, '');
  let query = '';
  const qi = h.indexOf('?');
  if (qi >= 0) { query = h.slice(qi + 1); h = h.slice(0, qi); }
  const parts = h.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { page: parts[0] || 'map', rest: parts.slice(1), params: new URLSearchParams(query) };
}

const pages = { map: mapPage, search: searchPage, trace: tracePage, deadletters: deadLettersPage };
const titles = { map: 'Pipeline map', search: 'Search', trace: 'Trace', deadletters: 'Dead letters' };

function route() {
  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  const r = parseHash();
  const fn = pages[r.page] || notFound;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === r.page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  setConn('');
  const main = document.getElementById('main');
  clear(main);
  document.title = (titles[r.page] || 'Not found') + ' · kretrieve console';
  const c = fn(main, r);
  if (typeof c === 'function') cleanup = c;
  const h1 = main.querySelector('h1');
  if (h1 && routed) { h1.setAttribute('tabindex', '-1'); h1.focus(); }
  routed = true;
}
let routed = false;

function notFound(main) {
  main.append(el('h1', { text: 'Not found' }), el('p', {}, 'No such page. ', el('a', { href: '#/map', text: 'Go to the pipeline map' }), '.'));
}

function setConn(text, cls) {
  const c = document.getElementById('conn');
  c.textContent = text;
  c.className = 'conn' + (cls ? ' ' + cls : '');
}

// ---------- pipeline map ----------

/** chain orders the edges from origin along from→to; edges off the chain follow. */
function chain(m) {
  const edges = m.edges || [];
  const out = [];
  const used = new Set();
  let at = 'origin';
  for (let guard = 0; guard < edges.length; guard++) {
    const i = edges.findIndex((e, j) => !used.has(j) && e.from === at);
    if (i < 0) break;
    used.add(i);
    out.push(edges[i]);
    at = edges[i].to;
  }
  edges.forEach((e, j) => { if (!used.has(j)) out.push(e); });
  return out;
}

function stageBox(name, stage) {
  const box = el('section', { class: 'stage', 'data-stage': name, 'aria-label': 'stage ' + name });
  box.append(el('h3', { class: 'stage-name', text: name }));
  if (!stage) {
    box.classList.add('terminal');
    box.append(el('p', { class: 'muted', text: name === 'origin' ? 'producers' : 'consumers' }));
    return box;
  }
  const dl = el('dl', { class: 'kv' });
  const add = (k, v, cls) => dl.append(el('dt', { text: k }), el('dd', { text: v, class: cls }));
  if (stage.group && stage.group !== name) add('group', stage.group);
  add('processed', fmtRate(stage.processed_per_sec));
  add('dead letters', known(stage.dead_letters, fmtNum), stage.dead_letters > 0 ? 'bad' : '');
  box.append(dl);
  const reasons = stage.top_reasons || [];
  if (reasons.length) {
    const ul = el('ul', { class: 'reasons', 'aria-label': 'top dead-letter reasons of ' + name });
    for (const r of reasons.slice(0, 3)) {
      const a = el('a', { href: '#/deadletters?reason=' + encodeURIComponent(r.reason), class: 'reason', text: r.reason });
      ul.append(el('li', {}, el('span', { class: 'count', text: fmtNum(r.count) + '×' }), ' ', a));
    }
    box.append(ul);
  }
  return box;
}

function edgeBox(e) {
  const rate = typeof e.msgs_per_sec === 'number' ? e.msgs_per_sec : 0;
  const box = el('section', {
    class: 'edge' + (rate > 0 ? ' flowing' : ''),
    'data-edge': e.topic,
    'data-from': e.from,
    'data-to': e.to,
    'data-rate': String(rate),
    'aria-label': 'topic ' + e.topic + ' from ' + e.from + ' to ' + e.to,
  });
  box.append(el('div', { class: 'edge-arrow', 'aria-hidden': 'true' }));
  box.append(el('h3', { class: 'edge-topic mono', text: e.topic }));
  box.append(el('p', { class: 'edge-rate', 'data-field': 'rate', text: fmtRate(rate) }));
  const dl = el('dl', { class: 'kv' });
  const add = (k, v, cls) => dl.append(el('dt', { text: k }), el('dd', { text: v, class: cls }));
  add('edge p50 / p99', known(e.edge_p50_ms, fmtMs) + ' / ' + known(e.edge_p99_ms, fmtMs));
  add('origin p50 / p99', known(e.origin_p50_ms, fmtMs) + ' / ' + known(e.origin_p99_ms, fmtMs));
  add('lag', e.lag_records == null ? UNKNOWN : fmtNum(e.lag_records) + ' rec · ' + known(e.lag_seconds, (v) => v.toFixed(1) + ' s'),
    e.lag_records > 0 ? 'warn' : '');
  box.append(dl);
  return box;
}

function renderMap(target, m) {
  clear(target);
  const stages = new Map((m.stages || []).map((s) => [s.name, s]));
  const edges = chain(m);
  const flow = el('div', { class: 'flow', role: 'list', 'aria-label': 'stages and topics in pipeline order' });
  const shown = new Set();
  const item = (node) => flow.append(el('div', { class: 'flow-item', role: 'listitem' }, node));
  if (edges.length) {
    const first = edges[0].from;
    item(stageBox(first, stages.get(first)));
    shown.add(first);
  }
  for (const e of edges) {
    item(edgeBox(e));
    if (!shown.has(e.to)) { item(stageBox(e.to, stages.get(e.to))); shown.add(e.to); }
  }
  for (const [name, s] of stages) if (!shown.has(name)) item(stageBox(name, s));
  target.append(flow);
  target.append(el('p', { class: 'muted small', 'data-field': 'updated' }, 'Updated ', fmtTime(m.updated), '.'));
}

function renderSlowest(target, s) {
  clear(target);
  const reqs = (s && s.requests) || [];
  const ex = (s && s.exemplars) || [];
  target.append(el('h2', { text: 'Slowest recent requests' }));
  if (!reqs.length) target.append(el('p', { class: 'muted', text: 'No completed requests yet.' }));
  else {
    const t = el('table', { class: 'grid', 'data-table': 'slowest' });
    t.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Duration' }), el('th', { scope: 'col', text: 'Trace' }),
      el('th', { scope: 'col', text: 'Request' }), el('th', { scope: 'col', text: 'At' }))));
    const tb = el('tbody');
    for (const r of reqs) {
      tb.append(el('tr', {}, el('td', { class: 'num', text: fmtMs(r.duration_ms) }), el('td', {}, traceLink(r.trace_id)),
        el('td', { class: 'mono', text: r.request_id || '–' }), el('td', { text: fmtTime(r.at) })));
    }
    t.append(tb);
    target.append(t);
  }
  if (ex.length) {
    target.append(el('h2', { text: 'Exemplars of the latency histograms' }));
    const t = el('table', { class: 'grid', 'data-table': 'exemplars' });
    t.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Metric' }), el('th', { scope: 'col', text: 'Value' }),
      el('th', { scope: 'col', text: 'Trace' }))));
    const tb = el('tbody');
    for (const x of ex) {
      tb.append(el('tr', {}, el('td', { class: 'mono', text: x.metric || '–' }), el('td', { class: 'num', text: fmtMs(x.value_ms) }),
        el('td', {}, traceLink(x.trace_id))));
    }
    t.append(tb);
    target.append(t);
  }
}

function mapPage(main) {
  main.append(el('h1', { text: 'Pipeline map' }));
  main.append(el('p', { class: 'lede' }, 'Stages as boxes, topics as edges: throughput, edge and from-origin latency (p50 / p99), consumer lag and dead letters. It updates live.'));
  const mapBox = el('div', { class: 'map', id: 'map', 'aria-busy': 'true' });
  const err = el('div');
  const slow = el('div', { class: 'slowest' });
  main.append(err, mapBox, slow);
  mapBox.append(el('p', { class: 'muted', text: 'Loading…' }));

  let es = null;
  let timer = 0;
  let stopped = false;
  let slowTimer = 0;
  let firstOK = false;
  const show = (m) => {
    clear(err);
    renderMap(mapBox, m);
    mapBox.setAttribute('aria-busy', 'false');
    if (!firstOK) { firstOK = true; announce('Pipeline map loaded.'); }
  };
  const poll = async () => {
    if (stopped) return;
    try { show(await api('api/map')); } catch (e) { clear(err); errorBox(err, e); }
    if (!stopped) timer = window.setTimeout(poll, POLL_MS);
  };
  const startPolling = () => {
    if (stopped || timer) return;
    setConn('polling', 'poll');
    poll();
  };
  if (typeof EventSource === 'function') {
    es = new EventSource('api/events');
    es.addEventListener('map', (ev) => {
      setConn('live', 'live');
      try { show(JSON.parse(ev.data)); } catch (e) { clear(err); errorBox(err, e); }
    });
    es.addEventListener('error', () => {
      // The server went away or does not stream: poll instead.
      if (es) { es.close(); es = null; }
      startPolling();
    });
  } else startPolling();

  const loadSlow = async () => {
    try { renderSlowest(slow, await api('api/slowest')); } catch (e) { clear(slow); errorBox(slow, e); }
    if (!stopped) slowTimer = window.setTimeout(loadSlow, 5 * POLL_MS);
  };
  loadSlow();

  return () => {
    stopped = true;
    if (es) es.close();
    window.clearTimeout(timer);
    window.clearTimeout(slowTimer);
  };
}

// ---------- snippets with highlights ----------

/**
 * highlightRanges turns byte offsets into the UTF-8 encoding of s into
 * sorted, merged [start, end) ranges of string (UTF-16) indexes.
 */
function highlightRanges(s, highlights) {
  if (!Array.isArray(highlights) || !highlights.length) return [];
  const enc = new TextEncoder();
  // byteToIndex[b] = string index of the code point starting at byte b.
  const byteToIndex = new Map();
  let b = 0;
  let i = 0;
  for (const ch of s) {
    byteToIndex.set(b, i);
    b += enc.encode(ch).length;
    i += ch.length;
  }
  byteToIndex.set(b, i);
  const total = b;
  const toIndex = (x) => {
    x = Math.max(0, Math.min(total, Math.trunc(Number(x) || 0)));
    while (!byteToIndex.has(x) && x < total) x++; // inside a code point: move to its end
    return byteToIndex.get(x);
  };
  const rs = highlights
    .filter((h) => Array.isArray(h) && h.length >= 2)
    .map(([a, z]) => [toIndex(a), toIndex(z)])
    .filter(([a, z]) => z > a)
    .sort((x, y) => x[0] - y[0]);
  const out = [];
  for (const r of rs) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/**
 * snippetNode renders s with its highlights as <mark> elements, all text
 * through text nodes. Without highlights, the literal tokens "<mark>" and
 * "</mark>" (as the index writes them) are read as highlight bounds; any
 * other markup stays text.
 */
function snippetNode(s, highlights) {
  s = String(s || '');
  let ranges = highlightRanges(s, highlights);
  if (!ranges.length && (!highlights || !highlights.length) && s.includes('<mark>')) {
    let plain = '';
    const rs = [];
    const re = /<mark>([\s\S]*?)<\/mark>/g;
    let last = 0;
    let m;
    while ((m = re.exec(s)) !== null) {
      plain += s.slice(last, m.index);
      rs.push([plain.length, plain.length + m[1].length]);
      plain += m[1];
      last = re.lastIndex;
    }
    plain += s.slice(last);
    s = plain;
    ranges = rs.filter(([a, z]) => z > a);
  }
  const p = el('p', { class: 'snippet' });
  let at = 0;
  for (const [a, z] of ranges) {
    if (a > at) p.append(document.createTextNode(s.slice(at, a)));
    p.append(el('mark', { text: s.slice(a, z) }));
    at = z;
  }
  if (at < s.length) p.append(document.createTextNode(s.slice(at)));
  return p;
}

// ---------- waterfall ----------

const CATEGORIES = [
  ['wait', 'queue wait', 'time a record sat in a topic before a worker took it'],
  ['work', 'work', 'a stage processing or searching'],
  ['send', 'send', 'publishing to a topic'],
  ['other', 'other', 'HTTP and everything else'],
];

function legend() {
  const ul = el('ul', { class: 'legend', 'aria-label': 'waterfall legend' });
  for (const [cat, label, help] of CATEGORIES) {
    ul.append(el('li', {}, el('span', { class: 'swatch cat-' + cat, 'aria-hidden': 'true' }), el('strong', { text: label }), ' ', el('span', { class: 'muted', text: help })));
  }
  return ul;
}

function category(s) {
  const c = String(s.category || 'other');
  return ['wait', 'work', 'send', 'other'].includes(c) ? c : 'other';
}

/**
 * waterfall draws spans as a table of rows with bars on one time axis, in the
 * order the API gives them (the server's tree: depth-first from the roots),
 * each indented by its depth.
 */
function waterfall(spans, traceId) {
  const wrap = el('div', { class: 'waterfall-wrap' });
  spans = (spans || []).filter((s) => s && s.span_id);
  if (!spans.length) {
    wrap.append(el('p', { class: 'muted', text: 'No spans.' }));
    return wrap;
  }
  const t0 = Math.min(...spans.map((s) => Number(s.start_us) || 0));
  const end = Math.max(...spans.map((s) => (Number(s.start_us) || 0) + (Number(s.duration_us) || 0)));
  const total = Math.max(1, end - t0);
  const totals = { wait: 0, work: 0, send: 0, other: 0 };
  for (const s of spans) totals[category(s)] += Number(s.duration_us) || 0;

  wrap.append(legend());
  const t = el('table', { class: 'waterfall', 'data-trace-id': traceId || '' });
  t.append(el('caption', { class: 'sr-only', text: 'Spans of trace ' + (traceId || '') + ', ' + spans.length + ' spans over ' + fmtUs(total) }));
  const ticks = el('div', { class: 'ticks', 'aria-hidden': 'true' });
  for (let i = 0; i <= 4; i++) {
    const tk = el('span', { class: 'tick', text: fmtUs((total * i) / 4) });
    tk.style.left = (i * 25) + '%';
    ticks.append(tk);
  }
  t.append(el('thead', {}, el('tr', {},
    el('th', { scope: 'col', text: 'Span' }),
    el('th', { scope: 'col', text: 'Service' }),
    el('th', { scope: 'col', class: 'tl-head' }, el('span', { class: 'sr-only', text: 'Timeline' }), ticks),
    el('th', { scope: 'col', class: 'num', text: 'Duration' }))));
  const tb = el('tbody');
  for (const s of spans) {
    const depth = Math.max(0, Math.floor(Number(s.depth) || 0));
    const cat = category(s);
    const start = (Number(s.start_us) || 0) - t0;
    const dur = Number(s.duration_us) || 0;
    const row = el('tr', {
      'data-span-id': s.span_id,
      'data-depth': String(depth),
      'data-category': cat,
      class: 'span-row' + (s.status === 'error' ? ' span-error' : ''),
    });
    const name = el('td', { class: 'span-name' });
    const label = el('span', { class: 'span-label', text: s.name || '(unnamed)' });
    label.style.paddingLeft = (Math.min(depth, 12) * 0.9) + 'em';
    name.append(label);
    if (s.kind) name.append(el('span', { class: 'kind', text: String(s.kind).toLowerCase() }));
    const dest = s.attributes && s.attributes['messaging.destination.name'];
    const track = el('div', { class: 'track' });
    const bar = el('div', { class: 'bar cat-' + cat, role: 'img',
      'aria-label': (cat === 'wait' ? 'queue wait' : cat) + ' ' + fmtUs(dur) + ' starting at ' + fmtUs(start) + (s.status === 'error' ? ', error' : ''),
      title: (s.name || '') + (dest ? ' (' + dest + ')' : '') + ': ' + fmtUs(dur) + ' at +' + fmtUs(start) });
    bar.style.left = ((start / total) * 100).toFixed(3) + '%';
    bar.style.width = Math.max(0.2, (dur / total) * 100).toFixed(3) + '%';
    track.append(bar);
    row.append(name, el('td', { class: 'mono small', text: s.service || '–' }), el('td', { class: 'tl' }, track),
      el('td', { class: 'num', text: fmtUs(dur) }));
    tb.append(row);
  }
  t.append(tb);
  wrap.append(t);
  wrap.append(el('p', { class: 'muted small', 'data-field': 'totals' },
    'Total ', fmtUs(total), ' · queue wait ', fmtUs(totals.wait), ' · work ', fmtUs(totals.work), ' · send ', fmtUs(totals.send), ' (span sums).'));
  return wrap;
}

// ---------- search ----------

function timingsTable(tm) {
  const stages = (tm && Array.isArray(tm.stages)) ? tm.stages : [];
  if (!stages.length) return el('p', { class: 'muted', text: 'No per-stage timings.' });
  const t = el('table', { class: 'grid', 'data-table': 'timings' });
  t.append(el('caption', { class: 'sr-only', text: 'Per-stage timings: queue wait and work, milliseconds' }));
  t.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Stage' }), el('th', { scope: 'col', class: 'num', text: 'Queue wait' }),
    el('th', { scope: 'col', class: 'num', text: 'Work' }))));
  const tb = el('tbody');
  for (const st of stages) {
    tb.append(el('tr', { 'data-stage-timing': st.stage }, el('th', { scope: 'row', class: 'mono', text: st.stage }),
      el('td', { class: 'num', text: fmtMs(st.queue_ms) }), el('td', { class: 'num', text: fmtMs(st.work_ms) })));
  }
  t.append(tb);
  return t;
}

function resultsList(docs) {
  if (!docs || !docs.length) return el('p', { class: 'muted', 'data-field': 'no-results', text: 'No documents matched.' });
  const ol = el('ol', { class: 'results', 'aria-label': 'results' });
  for (const d of docs) {
    const href = safeURL(d.url);
    const title = href
      ? el('a', { href, rel: 'noopener noreferrer', target: '_blank', text: d.title || d.id || href })
      : el('span', { text: d.title || d.id || '(untitled)' });
    ol.append(el('li', { class: 'result', 'data-doc-id': d.id || '' },
      el('h3', { class: 'result-title' }, title, ' ', el('span', { class: 'score', text: 'score ' + (typeof d.score === 'number' ? d.score.toFixed(3) : '–') })),
      d.id && d.id !== d.title ? el('p', { class: 'mono small muted', text: d.id }) : null,
      snippetNode(d.snippet, d.highlights)));
  }
  return ol;
}

function searchPage(main, r) {
  main.append(el('h1', { text: 'Search' }));
  const input = el('input', { type: 'search', id: 'q', name: 'q', required: true, maxlength: '4096', autocomplete: 'off', spellcheck: 'false', placeholder: 'parse a URL query string' });
  const topk = el('select', { id: 'topk', name: 'top_k' }, ...[3, 5, 10, 20].map((n) => el('option', { value: String(n), text: String(n), selected: n === 5 })));
  const btn = el('button', { type: 'submit', text: 'Search' });
  const form = el('form', { class: 'search-form', role: 'search', 'aria-label': 'search the index' },
    el('label', { for: 'q', text: 'Query' }), input, el('label', { for: 'topk', text: 'Results' }), topk, btn);
  const out = el('div', { class: 'search-out', 'aria-live': 'polite', 'aria-busy': 'false' });
  main.append(form, out);
  let seq = 0;
  const run = async (q) => {
    const my = ++seq;
    clear(out);
    out.setAttribute('aria-busy', 'true');
    btn.disabled = true;
    out.append(el('p', { class: 'muted', text: 'Searching…' }));
    try {
      const res = await postJSON('api/search', { query: q, top_k: Number(topk.value) });
      if (my !== seq) return;
      clear(out);
      const head = el('p', { class: 'meta' }, 'Trace ', traceLink(res.trace_id), ' · request ', el('span', { class: 'mono', text: res.request_id || '–' }));
      const cols = el('div', { class: 'cols' },
        el('section', { class: 'col-main', 'aria-label': 'results' }, el('h2', {}, 'Results for ', el('q', { class: 'query-echo', text: q })), resultsList(res.documents)),
        el('section', { class: 'col-side', 'aria-label': 'timings' }, el('h2', { text: 'Per-stage timings' }), timingsTable(res.timings)));
      out.append(head, cols, el('section', { class: 'trace-section', 'aria-label': 'trace waterfall' },
        el('h2', { text: 'Trace waterfall' }), waterfall(res.spans, res.trace_id)));
      announce((res.documents || []).length + ' results.');
    } catch (e) {
      if (my !== seq) return;
      clear(out);
      errorBox(out, e);
    } finally {
      if (my === seq) { out.setAttribute('aria-busy', 'false'); btn.disabled = false; }
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = input.value.trim();
    if (!q) { input.focus(); return; }
    run(q);
  });
  const q0 = r.params.get('q');
  if (q0) { input.value = q0; run(q0); } else if (routed) window.setTimeout(() => input.focus(), 0);
}

// ---------- trace ----------

function tracePage(main, r) {
  const id = r.rest[0] || '';
  main.append(el('h1', { text: id ? 'Trace' : 'Trace' }));
  const input = el('input', { type: 'text', id: 'trace-id', name: 'trace', value: id, required: true, pattern: '[0-9a-fA-F]{1,32}', autocomplete: 'off', spellcheck: 'false', class: 'mono', placeholder: '32 hex digits' });
  const form = el('form', { class: 'search-form', 'aria-label': 'open a trace' }, el('label', { for: 'trace-id', text: 'Trace id' }), input, el('button', { type: 'submit', text: 'Open' }));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = input.value.trim().toLowerCase();
    if (v) location.hash = '#/trace/' + encodeURIComponent(v);
  });
  const out = el('div', { class: 'trace-out', 'aria-live': 'polite' });
  const slow = el('div', { class: 'slowest' });
  main.append(form, out, slow);
  let stopped = false;
  if (id) {
    out.append(el('p', { class: 'muted', text: 'Loading…' }));
    api('api/traces/' + encodeURIComponent(id)).then((t) => {
      if (stopped) return;
      clear(out);
      out.append(el('p', { class: 'meta' }, 'Trace ', el('span', { class: 'mono', 'data-field': 'trace-id', text: t.trace_id || id }),
        ' · from ', el('span', { 'data-field': 'source', text: t.source || '–' }), ' · ', String((t.spans || []).length), ' spans'));
      out.append(waterfall(t.spans, t.trace_id || id));
      announce('Trace loaded, ' + (t.spans || []).length + ' spans.');
    }).catch((e) => { if (!stopped) { clear(out); errorBox(out, e); } });
  }
  api('api/slowest').then((s) => { if (!stopped) renderSlowest(slow, s); }).catch((e) => { if (!stopped) errorBox(slow, e); });
  return () => { stopped = true; };
}

// ---------- dead letters ----------

function deadLettersPage(main, r) {
  main.append(el('h1', { text: 'Dead letters' }));
  const reason = el('select', { id: 'dl-reason', name: 'reason' }, el('option', { value: '', text: 'any reason' }));
  const etype = el('select', { id: 'dl-type', name: 'error_type' },
    el('option', { value: '', text: 'any' }), el('option', { value: 'permanent', text: 'permanent' }), el('option', { value: 'transient', text: 'transient' }));
  const limit = el('select', { id: 'dl-limit', name: 'limit' }, ...[20, 50, 100, 500].map((n) => el('option', { value: String(n), text: String(n), selected: n === 50 })));
  const form = el('form', { class: 'filters', 'aria-label': 'filter dead letters' },
    el('label', { for: 'dl-reason', text: 'Reason' }), reason,
    el('label', { for: 'dl-type', text: 'Error type' }), etype,
    el('label', { for: 'dl-limit', text: 'Show' }), limit,
    el('button', { type: 'submit', text: 'Apply' }));
  const replayBox = el('div', { class: 'replay' });
  const summary = el('div', { class: 'dl-summary' });
  const out = el('div', { class: 'dl-out', 'aria-live': 'polite' });
  main.append(form, replayBox, summary, out);

  let wantReason = r.params.get('reason') || '';
  etype.value = r.params.get('error_type') || '';
  let stopped = false;

  const load = async () => {
    const qs = new URLSearchParams();
    if (wantReason) qs.set('reason', wantReason);
    if (etype.value) qs.set('error_type', etype.value);
    qs.set('limit', limit.value);
    clear(out);
    out.append(el('p', { class: 'muted', text: 'Loading…' }));
    try {
      const d = await api('api/deadletters?' + qs.toString());
      if (stopped) return;
      fillReasons(d.reasons || []);
      renderSummary(d);
      renderReplay(d.replay_allowed === true);
      clear(out);
      renderLetters(d.letters || []);
      announce((d.letters || []).length + ' dead letters shown.');
    } catch (e) {
      if (stopped) return;
      clear(out);
      errorBox(out, e);
    }
  };

  const fillReasons = (reasons) => {
    while (reason.options.length > 1) reason.remove(1);
    let found = false;
    for (const x of reasons) {
      const o = el('option', { value: x.reason, text: x.reason + ' (' + fmtNum(x.count) + ')' });
      if (x.reason === wantReason) { o.selected = true; found = true; }
      reason.append(o);
    }
    if (wantReason && !found) reason.append(el('option', { value: wantReason, text: wantReason, selected: true }));
  };

  const renderSummary = (d) => {
    clear(summary);
    const types = d.error_types || [];
    if (types.length) {
      summary.append(el('p', { class: 'muted' }, 'By error type: ',
        types.map((x, i) => [i ? ', ' : '', el('strong', { text: x.error_type }), ' ', fmtNum(x.count)])));
    }
  };

  let confirming = false;
  const renderReplay = (allowed) => {
    clear(replayBox);
    confirming = false;
    if (!allowed) {
      replayBox.append(el('p', { class: 'muted small', text: 'Replay is off (read-only console; start it with --allow-replay to enable).' }));
      return;
    }
    const status = el('span', { class: 'replay-status', role: 'status' });
    const b = el('button', { type: 'button', class: 'danger', 'data-action': 'replay', text: 'Replay matching letters' });
    const cancel = el('button', { type: 'button', class: 'secondary', text: 'Cancel', hidden: true });
    b.addEventListener('click', async () => {
      if (!confirming) {
        confirming = true;
        b.textContent = 'Confirm replay of the letters matching these filters';
        cancel.hidden = false;
        status.textContent = 'Replay republishes the original records to their topics.';
        return;
      }
      b.disabled = true;
      cancel.hidden = true;
      status.textContent = 'Replaying…';
      try {
        const res = await postJSON('api/deadletters/replay', { reason: wantReason, error_type: etype.value });
        status.textContent = 'Replayed ' + fmtNum(res.replayed) + ', skipped ' + fmtNum(res.skipped) + ', failed ' + fmtNum(res.failed) + '.';
      } catch (e) {
        status.textContent = 'Replay failed: ' + e.message;
      } finally {
        confirming = false;
        b.disabled = false;
        b.textContent = 'Replay matching letters';
      }
    });
    cancel.addEventListener('click', () => {
      confirming = false;
      cancel.hidden = true;
      b.textContent = 'Replay matching letters';
      status.textContent = '';
      b.focus();
    });
    replayBox.append(b, ' ', cancel, ' ', status);
  };

  const renderLetters = (letters) => {
    if (!letters.length) {
      out.append(el('p', { class: 'muted', 'data-field': 'no-letters', text: 'No dead letters match.' }));
      return;
    }
    const list = el('ol', { class: 'letters', 'aria-label': 'dead letters' });
    for (const l of letters) {
      const kv = el('dl', { class: 'kv wide' });
      const add = (k, v) => kv.append(el('dt', { text: k }), el('dd', {}, v));
      add('original', el('span', { class: 'mono', text: (l.original_topic || '?') + ' [' + l.original_partition + '] @' + l.original_offset }));
      add('dead letter', el('span', { class: 'mono', text: (l.dlq_topic || '?') + ' [' + l.partition + '] @' + l.offset }));
      add('at', fmtTime(l.timestamp));
      add('key', el('code', { class: 'letter-key', text: l.key == null ? '(none)' : String(l.key) }));
      add('error type', el('span', { class: 'tag tag-' + (l.error_type === 'transient' ? 'transient' : 'permanent'), text: l.error_type || '–' }));
      add('attempts', fmtNum(l.attempts));
      add('consumer group', l.consumer_group || '–');
      add('trace', traceLink(l.trace_id));
      add('value', fmtNum(l.value_bytes) + ' bytes' + (l.truncated ? ' (truncated)' : ''));
      const headers = l.headers || [];
      let ht;
      if (headers.length) {
        ht = el('table', { class: 'grid headers', 'data-table': 'headers' });
        ht.append(el('caption', { text: 'Original headers' }));
        ht.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Header' }), el('th', { scope: 'col', text: 'Value' }))));
        const tb = el('tbody');
        for (const h of headers) {
          const v = String(h.value == null ? '' : h.value);
          // Binary values (pathway sketches) show as such, not as mojibake.
          // eslint-disable-next-line no-control-regex
          const binary = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\ufffd]/.test(v);
          tb.append(el('tr', {}, el('td', { class: 'mono', text: h.key }),
            binary ? el('td', { class: 'muted small', text: '(binary, ' + fmtNum(new TextEncoder().encode(v).length) + ' bytes as text)' }) : el('td', { class: 'mono hv', text: v })));
        }
        ht.append(tb);
      } else ht = el('p', { class: 'muted small', text: 'No headers.' });
      list.append(el('li', { class: 'letter', 'data-offset': String(l.offset), 'data-dlq': l.dlq_topic || '' },
        el('h2', { class: 'letter-reason', text: l.reason || '(no reason)' }), kv, ht));
    }
    out.append(list);
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    wantReason = reason.value;
    load();
  });
  load();
  return () => { stopped = true; };
}

// ---------- start ----------

function start() {
  document.getElementById('skip').addEventListener('click', (ev) => {
    ev.preventDefault();
    const main = document.getElementById('main');
    main.focus();
  });
  window.addEventListener('hashchange', route);
  route();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
