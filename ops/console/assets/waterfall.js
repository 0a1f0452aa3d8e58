// The trace waterfall: spans as rows with bars on one time axis.

import { el, fmtUs } from './dom.js';

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
export function waterfall(spans, traceId) {
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
