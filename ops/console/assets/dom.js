// The console's small DOM helpers and formatting, shared by every page.

/** el builds an element: el('div', {class: 'x', 'data-y': 1}, child, 'text'). */
export function el(tag, attrs, ...children) {
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

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

export function announce(text) {
  const a = document.getElementById('announce');
  a.textContent = '';
  // A new text node is announced even when the text repeats.
  window.setTimeout(() => { a.textContent = text; }, 50);
}

export function fmtMs(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '–';
  if (v >= 1000) return (v / 1000).toFixed(2) + ' s';
  if (v >= 100) return v.toFixed(0) + ' ms';
  return v.toFixed(1) + ' ms';
}

export function fmtUs(us) {
  return fmtMs(us / 1000);
}

export function fmtRate(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '–';
  return (v >= 100 ? v.toFixed(0) : v.toFixed(1)) + ' msg/s';
}

// UNKNOWN is what the map shows for a number the server does not know
// (null in /api/map): what `kretrieve pathways` prints too (status.Unknown).
export const UNKNOWN = '-';

/** known formats v with f, or UNKNOWN when the server sent null. */
export function known(v, f) {
  return typeof v === 'number' && Number.isFinite(v) ? f(v) : UNKNOWN;
}

export function fmtNum(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v.toLocaleString('en') : '–';
}

export function fmtTime(s) {
  if (!s) return '–';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? String(s) : d.toLocaleString();
}

/** traceLink links to the trace page of id (a hex trace id), or is plain text. */
export function traceLink(id, label) {
  if (!id) return el('span', { text: '–' });
  return el('a', { href: '#/trace/' + encodeURIComponent(id), class: 'mono', 'data-trace-link': id, text: label || id });
}

/** safeURL returns u when it is an http(s) address, else null. */
export function safeURL(u) {
  try {
    const p = new URL(String(u), document.baseURI);
    return p.protocol === 'https:' || p.protocol === 'http:' ? p.href : null;
  } catch {
    return null;
  }
}

/** setConn shows the page's connection state (live, polling) in the header. */
export function setConn(text, cls) {
  const c = document.getElementById('conn');
  c.textContent = text;
  c.className = 'conn' + (cls ? ' ' + cls : '');
}
