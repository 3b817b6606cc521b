// reveal.js: no text is cut off for good. Any element the stylesheet clips with an ellipsis
// (table cells, rank grid cells and row labels, phase names, source lines) shows its whole text as
// a tooltip on hover, and a click on it (not on a link inside it, nor in a table row that opens
// something on click) opens the whole text in a box under it, selectable; Esc, a click elsewhere
// or the box's button closes it.

import { h } from './dom.js';

/** What the stylesheet clips (style.css: text-overflow: ellipsis / overflow: hidden). */
export const CLIPPED = ['.vt-cell', '.rk-cell', '.rk-row-head', '.rk-col-head', '.phase-name', '.trie-loc', '.stack-loc',
  'header .title', '.local-badge', '.prov-pane h3',
  '[data-full]', // text shortened by a page (a path cut from the left), its whole text in data-full
].join(', ');

let box = null;

/** Starts the delegated listeners (once, on the document). */
export function installReveal() {
  document.addEventListener('pointerover', (e) => {
    const el = clippedAt(e.target);
    if (el && !el.hasAttribute('title')) el.setAttribute('title', fullText(el));
  }, { passive: true });
  document.addEventListener('click', (e) => {
    if (box && !box.contains(e.target)) close();
    const el = clippedAt(e.target);
    if (!el || e.target.closest('a[href], button, input, select, summary')) return;
    // A row that opens something on click (a compile, a graph break's details) keeps its click:
    // what it opens shows the text whole; the tooltip has it too.
    if (el.closest('.vt-row.clickable')) return;
    e.stopPropagation();
    e.preventDefault();
    open(el);
  }, { capture: true });
  document.addEventListener('keydown', (e) => { if (box && e.key === 'Escape') { close(); e.stopPropagation(); } }, { capture: true });
}

/** The clipped element at `target` whose text does not fit, or null. */
function clippedAt(target) {
  const el = target instanceof Element ? target.closest(CLIPPED) : null;
  return el && (isClipped(el) || fullText(el) !== el.textContent.trim()) ? el : null;
}

/** Whether the element's text overflows its box (one pixel of rounding allowed). */
export function isClipped(el) {
  return el.scrollWidth > el.clientWidth + 1;
}

/** The element's whole text: what a page shortened (data-full), else its text as shown. */
function fullText(el) {
  const full = el.dataset.full ?? el.querySelector('[data-full]')?.dataset.full;
  return full ?? el.textContent.trim();
}

/** Shows the whole text of `el` in a box under it (in the page, so it scrolls with it). */
function open(el) {
  close();
  const r = el.getBoundingClientRect();
  const width = Math.min(Math.max(r.width, 360), document.documentElement.clientWidth - 24);
  const left = Math.max(8, Math.min(r.left, document.documentElement.clientWidth - width - 12)) + scrollX;
  box = h('div', { class: 'reveal-box', role: 'dialog', 'aria-label': 'Whole text', style: { left: `${left}px`, top: `${r.bottom + scrollY + 4}px`, width: `${width}px` } },
    h('pre', { class: 'reveal-text' }, fullText(el)),
    h('button', { type: 'button', class: 'reveal-close', on: { click: close } }, 'Close'));
  box.__source = el;
  document.body.append(box);
}

function close() {
  box?.remove();
  box = null;
}

/** The open box's text (tests), or null. */
export function revealed() {
  return box ? box.querySelector('.reveal-text').textContent : null;
}
