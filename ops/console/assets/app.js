// kretrieve console, the entry module (index.html): the router and the start.
//
// The browser side is plain ES modules (assets/*.js, imported by relative
// URL), no framework, no build step, nothing fetched but this console's own
// assets and api/ (relative URLs, so it works under /console/ or /). Every
// value from the server is put in the page with textContent or as an
// attribute of an element built with createElement: never innerHTML, never
// eval, no inline styles in HTML (bar geometry is set through the CSSOM,
// which the CSP allows).

import { el, clear, setConn } from './dom.js';
import { mapPage } from './map.js';
import { searchPage } from './search.js';
import { tracePage } from './trace.js';
import { deadLettersPage } from './deadletters.js';

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

/**
 * pages are the pages by the hash's first part. A page is called as
 * fn(main, r) with r the parsed hash ({page, rest, params}) and r.routed,
 * whether a page was shown before (only then may it move the focus); it may
 * return its teardown.
 */
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
  const c = fn(main, { ...r, routed });
  if (typeof c === 'function') cleanup = c;
  const h1 = main.querySelector('h1');
  if (h1 && routed) { h1.setAttribute('tabindex', '-1'); h1.focus(); }
  routed = true;
}
let routed = false;

function notFound(main) {
  main.append(el('h1', { text: 'Not found' }), el('p', {}, 'No such page. ', el('a', { href: '#/map', text: 'Go to the pipeline map' }), '.'));
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
