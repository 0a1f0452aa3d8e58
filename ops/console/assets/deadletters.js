// The dead letters page: filters, the letters with their headers, and replay.
//
// The page's functions share one state object (see deadLettersPage): the
// filter controls, the output regions, and the mutable wantReason, stopped
// and confirming flags.

import { el, clear, announce, fmtNum, fmtTime, traceLink } from './dom.js';
import { api, postJSON, errorBox } from './api.js';

/** deadLettersPage renders the dead letters page into main for route r and returns its stop function. */
export function deadLettersPage(main, r) {
  main.append(el('h1', { text: 'Dead letters' }));
  const { form, reason, etype, limit } = filterForm();
  const replayBox = el('div', { class: 'replay' });
  const summary = el('div', { class: 'dl-summary' });
  const out = el('div', { class: 'dl-out', 'aria-live': 'polite' });
  main.append(form, replayBox, summary, out);

  const st = {
    reason, etype, limit, replayBox, summary, out,
    wantReason: r.params.get('reason') || '',
    stopped: false,
    confirming: false,
  };
  etype.value = r.params.get('error_type') || '';

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    st.wantReason = reason.value;
    load(st);
  });
  load(st);
  return () => { st.stopped = true; };
}

/** filterForm builds the filter form and its reason, error type and limit selects. */
function filterForm() {
  const reason = el('select', { id: 'dl-reason', name: 'reason' }, el('option', { value: '', text: 'any reason' }));
  const etype = el('select', { id: 'dl-type', name: 'error_type' },
    el('option', { value: '', text: 'any' }), el('option', { value: 'permanent', text: 'permanent' }), el('option', { value: 'transient', text: 'transient' }));
  const limit = el('select', { id: 'dl-limit', name: 'limit' }, ...[20, 50, 100, 500].map((n) => el('option', { value: String(n), text: String(n), selected: n === 50 })));
  const form = el('form', { class: 'filters', 'aria-label': 'filter dead letters' },
    el('label', { for: 'dl-reason', text: 'Reason' }), reason,
    el('label', { for: 'dl-type', text: 'Error type' }), etype,
    el('label', { for: 'dl-limit', text: 'Show' }), limit,
    el('button', { type: 'submit', text: 'Apply' }));
  return { form, reason, etype, limit };
}

/** load fetches the letters matching st's filters and renders them, unless the page was left meanwhile. */
async function load(st) {
  const { etype, limit, out } = st;
  const qs = new URLSearchParams();
  if (st.wantReason) qs.set('reason', st.wantReason);
  if (etype.value) qs.set('error_type', etype.value);
  qs.set('limit', limit.value);
  clear(out);
  out.append(el('p', { class: 'muted', text: 'Loading…' }));
  try {
    const d = await api('api/deadletters?' + qs.toString());
    if (st.stopped) return;
    fillReasons(st, d.reasons || []);
    renderSummary(st.summary, d);
    renderReplay(st, d.replay_allowed === true);
    clear(out);
    renderLetters(out, d.letters || []);
    announce((d.letters || []).length + ' dead letters shown.');
  } catch (e) {
    if (st.stopped) return;
    clear(out);
    errorBox(out, e);
  }
}

/** fillReasons refills the reason select with the reasons and their counts, keeping st.wantReason selected. */
function fillReasons(st, reasons) {
  const { reason, wantReason } = st;
  while (reason.options.length > 1) reason.remove(1);
  let found = false;
  for (const x of reasons) {
    const o = el('option', { value: x.reason, text: x.reason + ' (' + fmtNum(x.count) + ')' });
    if (x.reason === wantReason) { o.selected = true; found = true; }
    reason.append(o);
  }
  if (wantReason && !found) reason.append(el('option', { value: wantReason, text: wantReason, selected: true }));
}

/** renderSummary shows the letters' counts by error type in summary. */
function renderSummary(summary, d) {
  clear(summary);
  const types = d.error_types || [];
  if (types.length) {
    summary.append(el('p', { class: 'muted' }, 'By error type: ',
      types.map((x, i) => [i ? ', ' : '', el('strong', { text: x.error_type }), ' ', fmtNum(x.count)])));
  }
}

/** renderReplay shows the two-step replay button in st.replayBox when allowed, else why replay is off. */
function renderReplay(st, allowed) {
  const { replayBox } = st;
  clear(replayBox);
  st.confirming = false;
  if (!allowed) {
    replayBox.append(el('p', { class: 'muted small', text: 'Replay is off (read-only console; start it with --allow-replay to enable).' }));
    return;
  }
  const status = el('span', { class: 'replay-status', role: 'status' });
  const b = el('button', { type: 'button', class: 'danger', 'data-action': 'replay', text: 'Replay matching letters' });
  const cancel = el('button', { type: 'button', class: 'secondary', text: 'Cancel', hidden: true });
  b.addEventListener('click', async () => {
    if (!st.confirming) {
      st.confirming = true;
      b.textContent = 'Confirm replay of the letters matching these filters';
      cancel.hidden = false;
      status.textContent = 'Replay republishes the original records to their topics.';
      return;
    }
    b.disabled = true;
    cancel.hidden = true;
    status.textContent = 'Replaying…';
    try {
      const res = await postJSON('api/deadletters/replay', { reason: st.wantReason, error_type: st.etype.value });
      status.textContent = 'Replayed ' + fmtNum(res.replayed) + ', skipped ' + fmtNum(res.skipped) + ', failed ' + fmtNum(res.failed) + '.';
    } catch (e) {
      status.textContent = 'Replay failed: ' + e.message;
    } finally {
      st.confirming = false;
      b.disabled = false;
      b.textContent = 'Replay matching letters';
    }
  });
  cancel.addEventListener('click', () => {
    st.confirming = false;
    cancel.hidden = true;
    b.textContent = 'Replay matching letters';
    status.textContent = '';
    b.focus();
  });
  replayBox.append(b, ' ', cancel, ' ', status);
}

/** renderLetters appends the letters to out as a list, or says none match. */
function renderLetters(out, letters) {
  if (!letters.length) {
    out.append(el('p', { class: 'muted', 'data-field': 'no-letters', text: 'No dead letters match.' }));
    return;
  }
  const list = el('ol', { class: 'letters', 'aria-label': 'dead letters' });
  for (const l of letters) list.append(letterItem(l));
  out.append(list);
}

/** letterItem is one letter's list item: its reason, its fields and its original headers. */
function letterItem(l) {
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
  return el('li', { class: 'letter', 'data-offset': String(l.offset), 'data-dlq': l.dlq_topic || '' },
    el('h2', { class: 'letter-reason', text: l.reason || '(no reason)' }), kv, headersTable(l.headers || []));
}

/** headersTable is a table of a letter's original headers (binary values summarised), or a note that it has none. */
function headersTable(headers) {
  if (!headers.length) return el('p', { class: 'muted small', text: 'No headers.' });
  const ht = el('table', { class: 'grid headers', 'data-table': 'headers' });
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
  return ht;
}
