// The pipeline map page, and the slowest requests' table it shares with the trace page.

import { el, clear, announce, fmtMs, fmtRate, UNKNOWN, known, fmtNum, fmtTime, traceLink, setConn } from './dom.js';
import { api, errorBox } from './api.js';

const POLL_MS = 2000;

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
  if (e.lag_health) {
    add('lag health', healthText(e.lag_health), HEALTH_CLASS[e.lag_health.status] || '');
  }
  box.append(dl);
  return box;
}

const secs = (v) => v.toFixed(1) + ' s';

/** HEALTH_CLASS marks a lag health status: stall, stop and rewind (gauge code >= 2) are bad. */
const HEALTH_CLASS = { warn: 'warn', stall: 'bad', stop: 'bad', rewind: 'bad' };

/** healthText is a lag health: its status, then velocity, time to drain and retention headroom when known. */
function healthText(h) {
  const parts = [h.status];
  if (h.velocity != null) parts.push((h.velocity > 0 ? '+' : '') + h.velocity.toFixed(1) + ' rec/s');
  if (h.drain_seconds != null) parts.push('drains in ' + secs(h.drain_seconds));
  if (h.retention_headroom_seconds != null) parts.push('headroom ' + secs(h.retention_headroom_seconds));
  return parts.join(' · ');
}
const lagText = (records, seconds) => (records == null ? UNKNOWN : fmtNum(records) + ' rec · ' + known(seconds, secs));

/** indexBox draws one ingestion edge: the documents topic into an index, and each worker's copy. */
function indexBox(ix) {
  const rate = typeof ix.applied_per_sec === 'number' ? ix.applied_per_sec : 0;
  const box = el('section', {
    class: 'edge index' + (rate > 0 ? ' flowing' : ''),
    'data-index': ix.name,
    'data-topic': ix.topic,
    'aria-label': 'topic ' + ix.topic + ' into the index ' + ix.name,
  });
  box.append(el('h3', { class: 'edge-topic mono', text: ix.topic + ' → ' + ix.name }));
  box.append(el('p', { class: 'edge-rate', 'data-field': 'rate', text: fmtRate(rate) + ' applied' }));
  const dl = el('dl', { class: 'kv' });
  const add = (k, v, cls) => dl.append(el('dt', { text: k }), el('dd', { text: v, class: cls }));
  add('freshness p50 / p99', known(ix.freshness_p50_ms, fmtMs) + ' / ' + known(ix.freshness_p99_ms, fmtMs));
  add('worst lag', lagText(ix.lag_records, ix.lag_seconds), ix.lag_records > 0 ? 'warn' : '');
  box.append(dl);
  const t = el('table', { class: 'grid', 'data-table': 'index-workers' });
  t.append(el('thead', {}, el('tr', {}, ...['Worker', 'State', 'Position', 'Documents', 'Newest', 'Lag'].map((h) => el('th', { scope: 'col', text: h })))));
  const tb = el('tbody');
  for (const w of ix.workers || []) {
    const state = w.stale ? 'stale' : (w.ready ? 'ready' : 'catching up');
    tb.append(el('tr', { 'data-worker': w.instance },
      el('td', { class: 'mono', text: w.instance }),
      el('td', { text: state, class: w.stale || !w.ready ? 'warn' : '' }),
      el('td', { class: 'num', text: fmtNum(w.position) }),
      el('td', { class: 'num', 'data-field': 'documents', text: fmtNum(w.documents) }),
      el('td', { class: 'num', text: known(w.newest_document_age_ms, fmtMs) + ' ago' }),
      el('td', { class: 'num', 'data-field': 'lag', text: lagText(w.lag_records, w.lag_seconds) })));
  }
  t.append(tb);
  box.append(t);
  return box;
}

/** completenessBox says how many requests of the judged origin cohorts ended, and where the unfinished wait. */
function completenessBox(c) {
  const box = el('section', { class: 'completeness', 'data-field': 'completeness', 'aria-label': 'completeness of requests by origin time' });
  box.append(el('h2', { text: 'Requests by origin time' }));
  if (!c || !c.entered) {
    box.append(el('p', { class: 'muted', text: 'No request counted yet.' }));
    return box;
  }
  box.append(el('p', { 'data-field': 'completeness-summary',
    text: `${fmtNum(c.entered)} entered, ${fmtNum(c.ended)} ended (${fmtNum(c.expired)} expired, ${fmtNum(c.dead_lettered)} dead-lettered), ` +
      `${fmtNum(c.unfinished)} unfinished; origins ${fmtTime(c.since)} to ${fmtTime(c.until)}, judged ${c.unfinished_after_seconds} s after.` }));
  const list = el('ul', { class: 'cohorts' });
  for (const co of (c.cohorts || []).slice(0, 10)) {
    const where = (co.waiting || []).map((w) => `${w.where} (${fmtNum(w.count)})`).join(', ') || 'a place not known';
    list.append(el('li', { class: 'warn', 'data-cohort': co.origin,
      text: `${fmtNum(co.unfinished)} requests from ${fmtTime(co.origin)} unfinished, waiting at ${where}` }));
  }
  if (list.childElementCount) box.append(list);
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
  target.append(completenessBox(m.completeness));
  const indexes = m.indexes || [];
  if (indexes.length) {
    target.append(el('h2', { text: 'Documents into the indexes' }));
    const ingest = el('div', { class: 'ingest', role: 'list', 'aria-label': 'the documents topic into each index' });
    for (const ix of indexes) ingest.append(el('div', { class: 'flow-item', role: 'listitem' }, indexBox(ix)));
    target.append(ingest);
  }
  target.append(el('p', { class: 'muted small', 'data-field': 'updated' }, 'Updated ', fmtTime(m.updated), '.'));
}

export function renderSlowest(target, s) {
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

export function mapPage(main) {
  main.append(el('h1', { text: 'Pipeline map' }));
  main.append(el('p', { class: 'lede' }, 'Stages as boxes, topics as edges: throughput, edge and from-origin latency (p50 / p99), consumer lag and dead letters; then the documents topic into each index: applied per second, freshness (publication to searchable) and each worker\'s lag. It updates live.'));
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
