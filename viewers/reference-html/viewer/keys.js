// keys.js: the viewer's keyboard shortcuts. j/k (and ↓/↑ once a row is selected) move a selection
// in the page's tables and lists, Enter opens it, "g" then a letter goes to a tab, ? lists every
// shortcut. Keys typed in a text field, and "/" and Ctrl+F (Find, owned by the search module), are
// left alone.

import { h } from './dom.js';

/** "g" + letter → tab (route name). Only the tabs the bundle shows work. */
export const GO = [
  ['o', 'overview', 'Overview'], ['c', 'compiles', 'Compiles'], ['t', 'trie', 'Stack trie'],
  ['r', 'recompiles', 'Recompiles'], ['b', 'graph-breaks', 'Graph breaks'], ['f', 'failures', 'Failures'],
  ['p', 'provenance', 'Provenance'], ['s', 'sizes', 'Graph sizes'], ['i', 'time', 'Compile time'],
  ['v', 'volume', 'Log volume'], ['e', 'entries', 'Log entries'], ['n', 'ranks', 'Ranks'],
];

/** Every shortcut, as the help lists it. */
export const SHORTCUTS = [
  ['j  or  ↓', 'select the next row of a table or list (↓ once a row is selected)'],
  ['k  or  ↑', 'select the previous row'],
  ['Enter', 'open the selected row (its link)'],
  ['[  and  ]', 'move the selection to the previous / next table on the page'],
  ['/', 'search (the search box in the header)'],
  ['Ctrl+F', 'find in this code or table, with match counts'],
  ...GO.map(([k, , label]) => [`g  ${k}`, `go to ${label}`]),
  ['?', 'show this help'],
  ['Esc', 'close this help; clear the selection'],
];

let list = null; // the list the selection is in: an element with `keynav` (dom.js dataTable, trie)
let pendingG = false;
let help = null;

/** Starts listening. `go(page)` navigates to a tab (app.js keeps the stream). */
export function installKeys({ go, tabs }) {
  document.addEventListener('keydown', (e) => onKey(e, go, tabs));
  // A click in a list makes it the one j/k moves in.
  document.addEventListener('click', (e) => {
    const l = e.target.closest?.('[data-keynav]');
    if (l?.keynav && l !== list) { list?.keynav?.clear(); list = l; }
  }, { capture: true });
}

/** Keys typed into a field, or with Ctrl/Alt/Meta, are not ours. */
function ignored(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return true;
  const t = e.target;
  return t instanceof Element && (t.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]') != null);
}

function onKey(e, go, tabs) {
  if (help && e.key === 'Escape') { closeHelp(); e.preventDefault(); return; }
  if (ignored(e) || e.key === '/') return;
  if (pendingG) {
    pendingG = false;
    const target = GO.find(([k]) => k === e.key);
    if (target && tabs().includes(target[1])) { e.preventDefault(); go(target[1]); }
    return;
  }
  const l = currentList();
  const selecting = l?.keynav.selected >= 0;
  switch (e.key) {
    case 'g': pendingG = true; return;
    case '?': e.preventDefault(); openHelp(); return;
    case 'Escape': if (selecting) { l.keynav.clear(); e.preventDefault(); } return;
    case 'j': case 'k':
      if (l && l.keynav.move(e.key === 'j' ? 1 : -1)) e.preventDefault();
      return;
    case 'ArrowDown': case 'ArrowUp':
      // Arrows scroll the page as usual until a row is selected.
      if (selecting && l.keynav.move(e.key === 'ArrowDown' ? 1 : -1)) e.preventDefault();
      return;
    case 'Enter':
      if (selecting && !(e.target instanceof Element && e.target.closest('a, button'))) {
        if (l.keynav.open()) e.preventDefault();
      }
      return;
    case '[': case ']': {
      const all = lists();
      if (!all.length) return;
      const i = all.indexOf(l);
      const next = all[(i + (e.key === ']' ? 1 : all.length - 1) + (i < 0 ? 1 : 0)) % all.length];
      l?.keynav.clear();
      list = next;
      next.keynav.move(1);
      e.preventDefault();
      return;
    }
    default:
  }
}

/** The page's lists, in document order. */
function lists() {
  return [...document.querySelectorAll('main [data-keynav]')].filter((el) => el.keynav && el.getClientRects().length);
}

/** The list last clicked or moved in, while it is on the page; else the first one in view. */
function currentList() {
  if (list?.isConnected) return list;
  const all = lists();
  list = all.find((el) => {
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight;
  }) ?? all[0] ?? null;
  return list;
}

function openHelp() {
  if (help) return;
  const close = h('button', { type: 'button', class: 'kb-close', on: { click: closeHelp } }, 'Close');
  help = h('div', { class: 'kb-backdrop', on: { click: (e) => { if (e.target === help) closeHelp(); } } },
    h('div', { class: 'kb-help', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'kb-help-title' },
      h('h2', { id: 'kb-help-title' }, 'Keyboard shortcuts'),
      h('table', { class: 'kb-table' }, h('tbody', null, SHORTCUTS.map(([keys, what]) =>
        h('tr', null, h('td', null, keys.split(/\s+(?:or|and)\s+|\s{2}/).map((k, i, all) =>
          [h('kbd', null, k), i < all.length - 1 ? (/ or /.test(keys) ? ' or ' : /and/.test(keys) ? ' and ' : ' ') : null])),
        h('td', null, what))))),
      h('p', { class: 'note' }, 'Shortcuts do nothing while you type in a box.'),
      close));
  document.body.append(help);
  close.focus();
}

function closeHelp() {
  help?.remove();
  help = null;
}
