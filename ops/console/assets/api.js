// The console's API client: GETs, POSTs with the CSRF header, and error boxes.

import { el } from './dom.js';

class APIError extends Error {}

export async function api(path, opts) {
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
export function postJSON(path, obj) {
  return api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Kretrieve-Console': '1' },
    body: JSON.stringify(obj),
  });
}

export function errorBox(parent, err) {
  const box = el('p', { class: 'error', role: 'alert', text: (err && err.message) || String(err) });
  parent.append(box);
  return box;
}
