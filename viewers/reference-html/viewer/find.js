// find.js: Find in a code view ("k of N", next/previous) and the keys that open it: Ctrl+F (⌘F)
// and "/" open the page's Find (a code view's, else a table's filter) instead of the browser's,
// which cannot see the lines a virtualized view has not drawn; with neither on the page, Ctrl+F
// is the browser's and "/" goes to the global search. Keys typed in a field are left alone.

import { h, count } from './dom.js';

/**
 * Every occurrence of `query` (case-insensitive) in `lines`, as the 1-based line of each, in
 * order: a line holding it twice appears twice, so "k of N" counts occurrences.
 * @param {string[]} lines @param {string} query @returns {number[]}
 */
export function occurrences(lines, query) {
  const q = query.toLowerCase();
  const out = [];
  if (!q) return out;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].toLowerCase();
    for (let at = line.indexOf(q); at >= 0; at = line.indexOf(q, at + q.length)) out.push(i + 1);
  }
  return out;
}

/**
 * A find box for a code view (code.js): typing finds every occurrence and goes to the first,
 * Enter / Shift+Enter and the arrows move to the next / previous, Escape clears.
 * @param {any} view what codeView() returns
 * @param {{label?: string, onLine?: (line: number) => void}} [o] `onLine`: called with the line
 *   gone to (the page keeps it in its URL)
 */
export function findBox(view, o = {}) {
  const result = h('span', { class: 'muted find-result', role: 'status' });
  const input = h('input', {
    type: 'search', class: 'code-find', placeholder: 'Find…  (Ctrl+F)', 'aria-label': o.label ?? 'Find in this payload',
  });
  let hits = [];
  let k = -1;
  const show = () => {
    result.textContent = !input.value ? '' : hits.length ? `${count(k + 1)} of ${count(hits.length)}` : 'not found';
    result.dataset.k = String(k + 1);
    result.dataset.n = String(hits.length);
  };
  const go = (step) => {
    if (!hits.length) { show(); return; }
    k = (k + step + hits.length) % hits.length;
    view.goTo(hits[k]);
    o.onLine?.(hits[k]);
    show();
  };
  const run = () => {
    hits = occurrences(view.lines, input.value);
    // The view marks every occurrence in the lines it draws (its own find), then goes to ours.
    view.find(input.value);
    k = -1;
    go(1);
  };
  input.addEventListener('input', run);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      go(e.shiftKey || e.key === 'ArrowUp' ? -1 : 1);
    } else if (e.key === 'Escape') {
      input.value = '';
      run();
      input.blur();
    }
  });
  const button = (label, title, step) => h('button', {
    type: 'button', class: 'find-step', title, 'aria-label': title, on: { click: () => go(step) },
  }, label);
  return h('span', { class: 'find' }, input, button('↑', 'Previous match (Shift+Enter)', -1),
    button('↓', 'Next match (Enter)', 1), result);
}

/** Whether keys go to a field the user is typing in. */
function typing(target) {
  return target instanceof Element && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

/** The first element matching `selector` inside `root` that is shown. */
function shown(root, selector) {
  return [...root.querySelectorAll(selector)].find((el) => el.getClientRects().length > 0) ?? null;
}

/**
 * Binds Ctrl+F / ⌘F and "/" for the whole viewer. `main()` is the page's container;
 * `globalSearch()` the header's search input.
 * @param {{main: () => Element | null, globalSearch: () => HTMLInputElement | null}} o
 */
export function installFindKeys(o) {
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || typing(e.target)) return;
    const ctrlF = (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f';
    const slash = e.key === '/' && !e.ctrlKey && !e.metaKey && !e.altKey;
    if (!ctrlF && !slash) return;
    const page = o.main();
    const target = page && (shown(page, 'input.code-find') ?? shown(page, 'input.vt-filter'));
    const focus = target ?? (slash ? o.globalSearch() : null);
    if (!focus) return; // Ctrl+F on a page with no code or table: the browser's own find
    e.preventDefault();
    focus.focus();
    focus.select();
  });
}
