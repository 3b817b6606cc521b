// diff.js: line diffs (Myers' O(ND) algorithm) and their rendering as a unified diff with
// collapsed unchanged runs. Used by the recompile, rank and compare views to show what changed.

import { h, append } from './dom.js';
import { maskVolatile } from './volatile.js';

/** Past this many differing lines the diff falls back to "replace the middle" (keeps it fast). */
const MAX_EDIT_DISTANCE = 4000;

/**
 * Diffs two texts line by line.
 * @param {string} before @param {string} after
 * @returns {{op: '=' | '-' | '+', text: string, a: number | null, b: number | null}[]}
 *   every line once, in order; `a`/`b` are 1-based line numbers in before/after.
 */
export function diffText(before, after) {
  return diffLines(splitLines(before), splitLines(after));
}

/** A line diff of two payloads (of the artifact `name`) whose lines are compared masked, so a
 * line that differs only in ids is no change, and shown as logged (nothing masked): such a line carries B's text in `ids`. */
export function maskedDiff(textA, textB, name = '') {
  const [ra, rb] = [splitLines(textA), splitLines(textB)];
  const mask = (line) => maskVolatile(line, name);
  return diffLines(ra.map(mask), rb.map(mask)).map((o) => {
    if (o.op === '+') return { ...o, text: rb[o.b - 1] };
    if (o.op === '-') return { ...o, text: ra[o.a - 1] };
    const [x, y] = [ra[o.a - 1], rb[o.b - 1]];
    return x === y ? { ...o, text: x } : { ...o, text: x, ids: y };
  });
}

/** Text → lines without their line breaks (no phantom empty last line). */
export function splitLines(text) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Diffs two arrays of lines (see {@link diffText}). */
export function diffLines(a, b) {
  // Common prefix and suffix first: recompiled code usually differs in a few places.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
  const out = [];
  for (let i = 0; i < start; i++) out.push({ op: '=', text: a[i], a: i + 1, b: i + 1 });
  const middle = myers(a.slice(start, endA), b.slice(start, endB));
  for (const e of middle) {
    out.push({ op: e.op, text: e.text, a: e.a == null ? null : e.a + start + 1, b: e.b == null ? null : e.b + start + 1 });
  }
  for (let i = endA, j = endB; i < a.length; i++, j++) out.push({ op: '=', text: a[i], a: i + 1, b: j + 1 });
  return out;
}

/** Myers' shortest edit script, with 0-based line indices. */
function myers(a, b) {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[offset + k] = x;
      if (x >= n && y >= m) { found = d; break; }
    }
  }
  if (found < 0) {
    // Too different to diff cheaply: everything before is removed, everything after added.
    return [...a.map((text, i) => ({ op: '-', text, a: i, b: null })), ...b.map((text, j) => ({ op: '+', text, a: null, b: j }))];
  }
  // Walk the trace back from (n, m).
  const edits = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) { x--; y--; edits.push({ op: '=', text: a[x], a: x, b: y }); }
    if (x === prevX) { y--; edits.push({ op: '+', text: b[y], a: null, b: y }); } else { x--; edits.push({ op: '-', text: a[x], a: x, b: null }); }
  }
  while (x > 0 && y > 0) { x--; y--; edits.push({ op: '=', text: a[x], a: x, b: y }); }
  return edits.reverse();
}

/** Counts of added and removed lines. */
export function diffStats(ops) {
  let added = 0;
  let removed = 0;
  for (const o of ops) { if (o.op === '+') added++; else if (o.op === '-') removed++; }
  return { added, removed };
}

/**
 * A unified diff view: changed lines with `context` lines around them; longer unchanged runs
 * collapse into a button that expands them. An unchanged op with `ids` (a line that differs only
 * in ids, see pages/compare.js's maskedDiff) is drawn as two muted `≈` lines, its text then `ids`.
 */
export function diffView(ops, { context = 3 } = {}) {
  const { added, removed } = diffStats(ops);
  const body = h('div', { class: 'diff-body' });
  const keep = new Uint8Array(ops.length);
  // Lines that differ only in ids fold away among real changes; alone, they are what is shown.
  const ids = ops.some((o) => o.ids != null);
  const shown = (o) => o.op !== '=' || (added + removed === 0 && o.ids != null);
  ops.forEach((o, i) => {
    if (!shown(o)) return;
    for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j++) keep[j] = 1;
  });
  const row = (cls, a, b, mark, text) => h('div', { class: ['diff-line', cls] },
    h('span', { class: 'ln' }, a ?? ''), h('span', { class: 'ln' }, b ?? ''), h('span', { class: 'mark' }, mark), h('span', { class: 'text' }, text));
  const line = (o) => (o.ids != null
    ? [row('ids', o.a, null, '≈', o.text), row('ids', null, o.b, '≈', o.ids)]
    : row(o.op === '+' ? 'add' : o.op === '-' ? 'del' : null, o.a, o.b, o.op === '=' ? ' ' : o.op, o.text));
  for (let i = 0; i < ops.length;) {
    if (keep[i]) { append(body, [line(ops[i])]); i++; continue; }
    let j = i;
    while (j < ops.length && !keep[j]) j++;
    const hidden = ops.slice(i, j);
    const idLines = hidden.filter((o) => o.ids != null).length;
    const fold = h('button', { type: 'button', class: 'diff-fold', on: { click: () => fold.replaceWith(...hidden.flatMap(line)) } },
      `⋯ ${hidden.length} unchanged line${hidden.length === 1 ? '' : 's'}${idLines ? ` (${idLines} differing only in ids)` : ''}`);
    body.append(fold);
    i = j;
  }
  return h('div', { class: 'diff', dataset: { added, removed } },
    h('div', { class: 'diff-stats' }, h('span', { class: 'add-count' }, `+${added}`), ' ', h('span', { class: 'del-count' }, `−${removed}`)),
    added + removed === 0 && !ids ? h('p', { class: 'empty' }, 'No differences.') : body);
}
