// The trace page: a trace's waterfall by id, and the slowest recent requests.

import { el, clear, announce } from './dom.js';
import { api, errorBox } from './api.js';
import { renderSlowest } from './map.js';
import { waterfall } from './waterfall.js';

export function tracePage(main, r) {
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
