// Search result snippets with their highlights, as <mark> elements over text nodes.

import { el } from './dom.js';

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
export function snippetNode(s, highlights) {
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
