// A stand-in for the console's Go backend, for working on the UI without a
// pipeline: it serves ../assets under /console/ with the console's headers and
// answers the API of docs (console contract) with made-up data, hostile
// strings included. It is NOT what the tests check the console against: they
// run the real binary (console.test.mjs); KRETRIEVE_CONSOLE_MOCK=1 runs them
// against this instead, to try UI changes quickly.
//
//   node mock-server.mjs [port]   then open http://127.0.0.1:PORT/console/

import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const assets = path.join(here, '..', 'assets');

export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
export const CANARY = '<img src=x onerror="window.__xss=1">';

const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

function traceId() {
  let s = '';
  for (let i = 0; i < 32; i++) s += '0123456789abcdef'[Math.floor(Math.random() * 16)];
  return s;
}

// spansFor is a made-up trace as the API answers it: in the waterfall's
// order (the server's spans.Tree: depth-first from the roots, children by
// start), each span with its depth.
function spansFor() {
  const S = (depth, id, parent, name, service, kind, start, dur, category, topic) => ({
    span_id: id, parent_span_id: parent, name, service, kind, start_us: start, duration_us: dur, category,
    attributes: topic ? { 'messaging.destination.name': topic } : {}, status: 'ok', depth,
  });
  return [
    S(0, 'a1', '', 'POST /v1/search', 'kretrieve-gateway', 'SERVER', 0, 9800, 'other'),
    S(1, 'a2', 'a1', 'send retrieval.requests', 'kretrieve-gateway', 'PRODUCER', 120, 450, 'send', 'retrieval.requests'),
    S(2, 'a3', 'a2', 'wait retrieval.requests', 'kretrieve-retrieval', 'CONSUMER', 570, 2100, 'wait', 'retrieval.requests'),
    S(2, 'a4', 'a2', 'process retrieval.requests', 'kretrieve-retrieval', 'CONSUMER', 2670, 2300, 'work', 'retrieval.requests'),
    S(3, 'a5', 'a4', 'search', 'kretrieve-retrieval', 'INTERNAL', 2700, 1900, 'work'),
    S(3, 'a6', 'a4', 'send retrieval.candidates', 'kretrieve-retrieval', 'PRODUCER', 4650, 300, 'send', 'retrieval.candidates'),
    S(4, 'a7', 'a6', 'wait retrieval.candidates', 'kretrieve-enrichment', 'CONSUMER', 4950, 1600, 'wait', 'retrieval.candidates'),
    S(4, 'a8', 'a6', 'process retrieval.candidates', 'kretrieve-enrichment', 'CONSUMER', 6550, 1200, 'work', 'retrieval.candidates'),
    S(5, 'a9', 'a8', 'send retrieval.results', 'kretrieve-enrichment', 'PRODUCER', 7700, 250, 'send', 'retrieval.results'),
    S(6, 'b1', 'a9', 'wait retrieval.results', 'kretrieve-gateway', 'CONSUMER', 7950, 1700, 'wait', 'retrieval.results'),
  ];
}

const traces = new Map();
let tick = 0;

function map() {
  tick++;
  const r = 20 + (tick % 5);
  return {
    updated: new Date().toISOString(),
    stages: [
      { name: 'retrieval', group: 'retrieval', input: 'retrieval.requests', output: 'retrieval.candidates', processed_per_sec: r, dead_letters: 2,
        top_reasons: [{ reason: 'invalid request: ' + CANARY, count: 1 }, { reason: 'invalid request: unexpected end of JSON input', count: 1 }] },
      { name: 'enrichment', group: 'enrichment', input: 'retrieval.candidates', output: 'retrieval.results', processed_per_sec: r, dead_letters: 0, top_reasons: [] },
    ],
    edges: [
      { topic: 'retrieval.requests', from: 'origin', to: 'retrieval', msgs_per_sec: r, edge_p50_ms: 1.8, edge_p99_ms: 7.5, origin_p50_ms: 1.8, origin_p99_ms: 7.5, lag_records: 0, lag_seconds: 0 },
      { topic: 'retrieval.candidates', from: 'retrieval', to: 'enrichment', msgs_per_sec: r, edge_p50_ms: 1.4, edge_p99_ms: 5.2, origin_p50_ms: 5.9, origin_p99_ms: 16.3, lag_records: 3, lag_seconds: 0.2 },
      { topic: 'retrieval.results', from: 'enrichment', to: 'results', msgs_per_sec: r, edge_p50_ms: 1.1, edge_p99_ms: 4.0, origin_p50_ms: 8.1, origin_p99_ms: 22.7, lag_records: null, lag_seconds: null },
    ],
    indexes: [
      { name: 'index', topic: 'retrieval.documents', applied_per_sec: 0.4, freshness_p50_ms: 6.2, freshness_p99_ms: 31.0, lag_records: 0, lag_seconds: 0,
        workers: [{ instance: 'kretrieve@mock/1-abcdef', stale: false, ready: true, position: 8352, documents: 8352, newest_document_age_ms: 4200, lag_records: 0, lag_seconds: 0 }] },
    ],
  };
}

function letters(q) {
  const all = [
    { dlq_topic: 'retrieval.requests.dlq', partition: 0, offset: 7, timestamp: new Date().toISOString(), key: CANARY, reason: 'invalid request: ' + CANARY,
      error_type: 'permanent', original_topic: 'retrieval.requests', original_partition: 2, original_offset: 40, attempts: 1, consumer_group: 'retrieval',
      trace_id: '', truncated: false, value_bytes: 44, headers: [{ key: 'x-canary', value: CANARY }, { key: 'kretrieve-correlation', value: 'c0ffee' }] },
    { dlq_topic: 'retrieval.requests.dlq', partition: 1, offset: 3, timestamp: new Date().toISOString(), key: 'req-1', reason: 'invalid request: unexpected end of JSON input',
      error_type: 'permanent', original_topic: 'retrieval.requests', original_partition: 1, original_offset: 12, attempts: 1, consumer_group: 'retrieval',
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', truncated: false, value_bytes: 9, headers: [] },
  ];
  const l = all.filter((x) => (!q.get('reason') || x.reason === q.get('reason')) && (!q.get('error_type') || x.error_type === q.get('error_type')));
  return { letters: l, reasons: [{ reason: all[0].reason, count: 1 }, { reason: all[1].reason, count: 1 }], error_types: [{ error_type: 'permanent', count: 2 }],
    replay_allowed: process.env.MOCK_ALLOW_REPLAY === '1' };
}

function json(res, code, body) {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
  res.end(JSON.stringify(body));
}

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

export function startMock(port = 0) {
  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://x');
    let p = u.pathname;
    if (!p.startsWith('/console/')) { res.writeHead(p === '/console' ? 301 : 404, { Location: '/console/' }); res.end(); return; }
    p = p.slice('/console'.length);
    try {
      if (p === '/' || p.startsWith('/assets/')) {
        const f = p === '/' ? 'index.html' : path.basename(p);
        const data = await readFile(path.join(assets, f));
        res.writeHead(200, { 'Content-Type': types[path.extname(f)] || 'application/octet-stream', 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
        res.end(data);
        return;
      }
      if (p === '/api/map') return json(res, 200, map());
      if (p === '/api/events') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'Content-Security-Policy': CSP });
        const send = () => res.write('event: map\ndata: ' + JSON.stringify(map()) + '\n\n');
        send();
        const t = setInterval(send, 2000);
        req.on('close', () => clearInterval(t));
        return;
      }
      if (p === '/api/search' && req.method === 'POST') {
        if (req.headers['x-kretrieve-console'] !== '1') return json(res, 403, { error: 'missing X-Kretrieve-Console header' });
        const b = await body(req);
        const id = traceId();
        const spans = spansFor();
        traces.set(id, spans);
        const snippet = 'func ParseQuery(query string) (Values, error) — ParseQuery parses the URL-encoded query string « ' + String(b.query) + ' »';
        const enc = new TextEncoder();
        const at = (s) => enc.encode(snippet.slice(0, snippet.indexOf(s))).length;
        return json(res, 200, {
          request_id: 'req-' + id.slice(0, 8), trace_id: id,
          documents: [
            { id: 'net/url.ParseQuery', title: 'net/url.ParseQuery', url: 'https://pkg.go.dev/net/url#ParseQuery', score: 1, snippet, highlights: [[at('ParseQuery parses'), at('ParseQuery parses') + 10], [at('query string'), at('query string') + 12]] },
            { id: 'x', title: CANARY, url: 'javascript:window.__xss=1', score: 0.5, snippet: CANARY, highlights: [[0, 4]] },
          ],
          timings: { stages: [{ stage: 'retrieval', queue_ms: 2.1, work_ms: 2.3 }, { stage: 'enrichment', queue_ms: 1.6, work_ms: 1.2 }] },
          spans,
        });
      }
      const m = p.match(/^\/api\/traces\/([^/]+)$/);
      if (m) {
        const s = traces.get(m[1]);
        return s ? json(res, 200, { trace_id: m[1], source: 'console', spans: s }) : json(res, 404, { error: 'trace ' + m[1] + ' not found' });
      }
      if (p === '/api/slowest') {
        return json(res, 200, { requests: [...traces.keys()].map((id) => ({ trace_id: id, request_id: 'req-' + id.slice(0, 8), duration_ms: 9.8, at: new Date().toISOString() })), exemplars: [] });
      }
      if (p === '/api/deadletters') return json(res, 200, letters(u.searchParams));
      if (p === '/api/deadletters/replay' && req.method === 'POST') {
        if (req.headers['x-kretrieve-console'] !== '1') return json(res, 403, { error: 'missing X-Kretrieve-Console header' });
        if (process.env.MOCK_ALLOW_REPLAY !== '1') return json(res, 403, { error: 'replay is disabled: start the console with --allow-replay' });
        return json(res, 200, { replayed: 1, skipped: 0, failed: 0 });
      }
      json(res, 404, { error: 'not found' });
    } catch (e) {
      json(res, 500, { error: String(e) });
    }
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const s = await startMock(Number(process.argv[2] || 8099));
  console.log('mock console at http://127.0.0.1:' + s.address().port + '/console/');
}
