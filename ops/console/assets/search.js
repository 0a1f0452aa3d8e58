// The search page: the query form, results, per-stage timings and the request's waterfall.

import { el, clear, announce, fmtMs, traceLink, safeURL } from './dom.js';
import { postJSON, errorBox } from './api.js';
import { snippetNode } from './snippets.js';
import { waterfall } from './waterfall.js';

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

export function searchPage(main, r) {
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
  if (q0) { input.value = q0; run(q0); } else if (r.routed) window.setTimeout(() => input.focus(), 0);
}
