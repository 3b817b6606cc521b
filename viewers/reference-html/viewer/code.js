// code.js: the code view used for payloads (generated code, FX graphs, repros, JSON, text). A
// small tokenizer per language emits [class, text] tokens that become text spans (never HTML);
// only the lines in view are in the DOM, so a 20,000-line output code scrolls smoothly. Lines are
// numbered (click one to anchor it), indented blocks fold, and one-line JSON is pretty-printed
// token by token (numbers stay as logged: JSON.parse would round 64-bit integers).

import { h } from './dom.js';

const LINE_HEIGHT = 19; // px; must match .cv-line in style.css
const OVERSCAN = 30; // lines drawn above and below the visible ones

const PY_KEYWORDS = new Set(('False None True and as assert async await break class continue def del elif else except ' +
  'finally for from global if import in is lambda nonlocal not or pass raise return try while with yield').split(' '));
const PY_CONSTS = new Set(['self', 'cls']);
const NUMBER = /^(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)/;
const IDENT = /^[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*/;
const STRING_START = /^([rRbBuUfF]{0,2})('''|"""|'|")/;

/**
 * Splits text into lines as an editor numbers them: a trailing newline ends in an empty last
 * line. This matches the `lines` of a payload (its line count in the log).
 * @param {string} text @returns {string[]}
 */
export function splitLines(text) {
  return text.split(/\r?\n/);
}

/**
 * Tokenizes one line of Python. `state` is the string still open from the previous line
 * (`{quote, raw}` for a triple-quoted string) or null; returns {tokens, state} for the next line.
 * Token classes: kw, str, num, com, fn, deco, self, op; null for plain text.
 * @param {string} line @param {{quote: string, raw: boolean} | null} state
 * @returns {{tokens: [string | null, string][], state: {quote: string, raw: boolean} | null}}
 */
export function tokenizePython(line, state) {
  const tokens = [];
  const push = (cls, text) => {
    const last = tokens[tokens.length - 1];
    if (last && last[0] === cls) last[1] += text; else tokens.push([cls, text]);
  };
  let i = 0;
  if (state) {
    const end = findStringEnd(line, 0, state.quote, state.raw);
    if (end < 0) return { tokens: line ? [['str', line]] : [], state };
    push('str', line.slice(0, end));
    i = end;
    state = null;
  }
  let prevWord = '';
  while (i < line.length) {
    const rest = line.slice(i);
    const c = line[i];
    if (c === '#') { push('com', rest); break; }
    if (c === ' ' || c === '\t') { const m = /^[ \t]+/.exec(rest)[0]; push(null, m); i += m.length; continue; }
    const s = STRING_START.exec(rest);
    if (s && /^[rRbBuUfF]*$/.test(s[1]) && (s[1] === '' || !/[\w]/.test(line[i - 1] ?? ''))) {
      const raw = /[rR]/.test(s[1]);
      const start = i + s[0].length;
      const end = findStringEnd(line, start, s[2], raw);
      if (end < 0) {
        push('str', rest);
        // A single-quoted string left open is an error in Python; only triple quotes continue.
        if (s[2].length === 3) state = { quote: s[2], raw };
        break;
      }
      push('str', line.slice(i, end));
      i = end;
      prevWord = '';
      continue;
    }
    if (c === '@' && /^\s*$/.test(line.slice(0, i))) {
      const m = /^@[\w.]*/.exec(rest)[0]; push('deco', m); i += m.length; continue;
    }
    const num = /[\d.]/.test(c) && !/[\w]/.test(line[i - 1] ?? '') ? NUMBER.exec(rest) : null;
    if (num && num[0] !== '.') { push('num', num[0]); i += num[0].length; continue; }
    const id = IDENT.exec(rest);
    if (id) {
      const word = id[0];
      const after = line.slice(i + word.length);
      let cls = null;
      if (PY_KEYWORDS.has(word)) cls = 'kw';
      else if (prevWord === 'def' || prevWord === 'class') cls = 'fn';
      else if (PY_CONSTS.has(word)) cls = 'self';
      else if (/^\s*\(/.test(after)) cls = 'fn';
      push(cls, word);
      prevWord = word;
      i += word.length;
      continue;
    }
    push('op', c);
    prevWord = '';
    i++;
  }
  return { tokens, state };
}

/** Position just past the closing quote of a string whose body starts at `from`, or -1. */
function findStringEnd(line, from, quote, raw) {
  for (let i = from; i < line.length; i++) {
    if (line[i] === '\\') { i++; continue; } // in raw strings too: r"\"" does not end at \"
    if (line.startsWith(quote, i)) return i + quote.length;
  }
  return -1;
}

/**
 * Tokenizes one line of JSON (pretty-printed or not). Classes: key, str, num, kw, op.
 * @param {string} line @returns {[string | null, string][]}
 */
export function tokenizeJson(line) {
  const tokens = [];
  let i = 0;
  while (i < line.length) {
    const rest = line.slice(i);
    const c = line[i];
    if (c === '"') {
      let end = i + 1;
      while (end < line.length && line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
      end = Math.min(end + 1, line.length);
      const isKey = /^\s*:/.test(line.slice(end));
      tokens.push([isKey ? 'key' : 'str', line.slice(i, end)]);
      i = end;
      continue;
    }
    const lit = /^(?:true|false|null)\b/.exec(rest);
    if (lit) { tokens.push(['kw', lit[0]]); i += lit[0].length; continue; }
    const num = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(rest);
    if (num) { tokens.push(['num', num[0]]); i += num[0].length; continue; }
    const ws = /^\s+/.exec(rest);
    if (ws) { tokens.push([null, ws[0]]); i += ws[0].length; continue; }
    tokens.push(['op', c]);
    i++;
  }
  return tokens;
}

/**
 * Pretty-prints JSON text with 2-space indentation, copying every string and number token as
 * written. Returns null when the text is not JSON.
 * @param {string} text @returns {string | null}
 */
export function prettyJson(text) {
  try { JSON.parse(text); } catch { return null; }
  const out = [];
  let depth = 0;
  const newline = () => out.push('\n', '  '.repeat(depth));
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out.push(text.slice(i, end + 1));
      i = end + 1;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let j = i + 1;
      while (/\s/.test(text[j] ?? '')) j++;
      if (text[j] === close) { out.push(c + close); i = j + 1; continue; }
      depth++;
      out.push(c);
      newline();
      i++;
    } else if (c === '}' || c === ']') {
      depth--;
      newline();
      out.push(c);
      i++;
    } else if (c === ',') {
      out.push(',');
      newline();
      i++;
    } else if (c === ':') {
      out.push(': ');
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      const m = /^[^\s,:\]}]+/.exec(text.slice(i))[0];
      out.push(m);
      i += m.length;
    }
  }
  return out.join('');
}

/** Width of a line's leading whitespace (tabs count 4), or -1 for a blank line. */
function indentOf(line) {
  let n = 0;
  for (const ch of line) {
    if (ch === ' ') n++;
    else if (ch === '\t') n += 4;
    else return n;
  }
  return -1;
}

/**
 * Foldable blocks by indentation: a line starts a block when the next non-blank line is indented
 * deeper; the block runs until a non-blank line indented no deeper than it (trailing blank lines
 * stay outside). Works for Python bodies, FX graph modules and pretty-printed JSON alike.
 * @param {string[]} lines @returns {Int32Array} end[i] = last line of the block started by line i, or -1
 */
export function foldRanges(lines) {
  const n = lines.length;
  const end = new Int32Array(n).fill(-1);
  const indent = lines.map(indentOf);
  const stack = []; // open block starts, innermost last
  let lastNonBlank = -1;
  for (let i = 0; i < n; i++) {
    if (indent[i] < 0) continue;
    while (stack.length && indent[stack[stack.length - 1]] >= indent[i]) end[stack.pop()] = lastNonBlank;
    if (lastNonBlank >= 0 && indent[i] > indent[lastNonBlank]) stack.push(lastNonBlank);
    lastNonBlank = i;
  }
  while (stack.length) end[stack.pop()] = lastNonBlank;
  for (let i = 0; i < n; i++) if (end[i] <= i) end[i] = -1;
  return end;
}

/**
 * A code view: highlighted, numbered, foldable, windowed. Returns the element and controls.
 * @param {string} text the payload (already pretty-printed if wanted)
 * @param {object} [o]
 * @param {'python'|'json'|'text'} [o.language]
 * @param {number} [o.line] 1-based line to scroll to and highlight once shown
 * @param {(line: number) => void} [o.onLine] called when the user clicks a line number
 * @param {(line: number) => void} [o.onClickLine] called when the user clicks a line's text
 * @param {(line: number) => boolean} [o.hasMatch] lines to underline as clickable (with onClickLine)
 * @param {string} [o.name] test id (data-code attribute)
 * @returns {{el: HTMLElement, lineCount: number, lines: string[], foldAll(): void, unfoldAll(): void,
 *   goTo(line: number): void, visibleLines(): number[], foldable: number,
 *   mark(lines: number[], scrollTo?: number): void, marked(): number[]}}
 */
export function codeView(text, o = {}) {
  const language = o.language ?? 'text';
  const lines = splitLines(text);
  const n = lines.length;
  const blockEnd = foldRanges(lines);
  let foldable = 0;
  for (let i = 0; i < n; i++) if (blockEnd[i] >= 0) foldable++;
  const folded = new Set();
  const marks = new Set(); // 0-based lines marked by mark()
  let selected = o.line >= 1 && o.line <= n ? o.line - 1 : -1;

  // Python string state at the start of each line: one pass, so any line can be tokenized alone.
  const startState = language === 'python' ? new Array(n) : null;
  if (startState) {
    let state = null;
    for (let i = 0; i < n; i++) {
      startState[i] = state;
      state = lineOpensString(lines[i], state) ? tokenizePython(lines[i], state).state : state;
    }
  }
  const tokensOf = (i) => {
    if (language === 'python') return tokenizePython(lines[i], startState[i]).tokens;
    if (language === 'json') return tokenizeJson(lines[i]);
    return [[null, lines[i]]];
  };

  let findQuery = ''; // lower-cased text marked in the drawn lines
  let visible = []; // line indices shown, in order
  const recompute = () => {
    visible = [];
    for (let i = 0; i < n; i++) {
      visible.push(i);
      if (folded.has(i)) i = blockEnd[i];
    }
  };
  recompute();

  let maxChars = 0;
  for (const l of lines) maxChars = Math.max(maxChars, l.length + (l.match(/\t/g)?.length ?? 0) * 3);
  const digits = String(n).length;
  const body = h('div', { class: 'cv-body' });
  const sizer = h('div', { class: 'cv-sizer', style: { width: `calc(${maxChars + 12}ch + ${digits + 4}ch)` } }, body);
  const viewport = h('div', { class: 'cv-viewport', tabindex: '0', role: 'region', 'aria-label': 'Code' }, sizer);
  viewport.style.setProperty('--cv-gutter', `${digits + 1}ch`); // custom properties need setProperty
  const root = h('div', { class: ['cv', `cv-${language}`], dataset: { code: o.name ?? '' } }, viewport);

  let drawn = '';
  function draw(force = false) {
    sizer.style.height = `${visible.length * LINE_HEIGHT}px`;
    const height = viewport.clientHeight || 800;
    const first = Math.max(0, Math.floor(viewport.scrollTop / LINE_HEIGHT) - OVERSCAN);
    const last = Math.min(visible.length, Math.ceil((viewport.scrollTop + height) / LINE_HEIGHT) + OVERSCAN);
    const key = `${first}:${last}:${visible.length}`;
    if (!force && key === drawn) return;
    drawn = key;
    body.style.transform = `translateY(${first * LINE_HEIGHT}px)`;
    body.replaceChildren(...visible.slice(first, last).map(lineEl));
  }

  function lineEl(i) {
    const isFolded = folded.has(i);
    return h('div', {
      class: ['cv-line', i === selected && 'cv-hl', marks.has(i) && 'cv-mark', o.hasMatch?.(i + 1) && 'cv-match'],
      dataset: { line: i + 1 },
      on: o.onClickLine ? { click: (e) => { if (!e.target.closest('button, .cv-ln')) o.onClickLine(i + 1); } } : undefined,
    },
      h('span', { class: 'cv-ln', title: `Link to line ${i + 1}`, on: { click: () => select(i) } }, i + 1),
      blockEnd[i] >= 0
        ? h('button', {
          type: 'button', class: 'cv-fold', 'aria-expanded': String(!isFolded),
          title: isFolded ? 'Expand' : 'Collapse', on: { click: () => toggle(i) },
        }, isFolded ? '▸' : '▾')
        : h('span', { class: 'cv-fold' }),
      h('span', { class: 'cv-text' },
        tokensOf(i).map(([cls, t]) => {
          const text = findQuery ? markText(t, findQuery) : t;
          return cls ? h('span', { class: `tk-${cls}` }, text) : text;
        }),
        isFolded ? h('button', { type: 'button', class: 'cv-folded', on: { click: () => toggle(i) } },
          `⋯ ${blockEnd[i] - i} lines`) : null));
  }

  function toggle(i) {
    if (folded.has(i)) folded.delete(i); else folded.add(i);
    recompute();
    draw(true);
  }

  function select(i) {
    selected = i;
    draw(true);
    o.onLine?.(i + 1);
  }

  /** Unfolds the blocks that hide line i. */
  function reveal(i) {
    for (const f of [...folded]) if (f < i && blockEnd[f] >= i) folded.delete(f);
  }

  /** Unfolds the blocks hiding line i and scrolls it to about a third of the view. */
  function goTo(line) {
    const i = line - 1;
    if (!(i >= 0 && i < n)) return;
    reveal(i);
    recompute();
    selected = i;
    const row = visible.indexOf(i);
    viewport.scrollTop = Math.max(0, row * LINE_HEIGHT - (viewport.clientHeight || 600) / 3);
    draw(true);
  }

  viewport.addEventListener('scroll', () => requestAnimationFrame(() => draw()), { passive: true });
  new ResizeObserver(() => draw()).observe(viewport);
  draw(true);
  if (selected >= 0) {
    // The view is not in the document yet: scroll once it has a size.
    const target = selected + 1;
    const tryScroll = (tries) => {
      if (viewport.clientHeight) goTo(target);
      else if (tries) requestAnimationFrame(() => tryScroll(tries - 1));
    };
    requestAnimationFrame(() => tryScroll(60));
  }

  return {
    el: root,
    lines,
    lineCount: n,
    foldable,
    goTo,
    foldAll() {
      // Fold the outermost blocks only: their insides stay as they were for when they reopen.
      folded.clear();
      for (let i = 0; i < n; i++) if (blockEnd[i] >= 0) { folded.add(i); i = blockEnd[i]; }
      recompute();
      viewport.scrollTop = 0;
      draw(true);
    },
    unfoldAll() {
      folded.clear();
      recompute();
      draw(true);
    },
    visibleLines: () => visible.map((i) => i + 1),
    /**
     * Marks these lines (1-based; others are unmarked), unfolding what hides them, and scrolls
     * `scrollTo` (a line) to the middle of the view.
     */
    mark(lines, scrollTo = null) {
      marks.clear();
      for (const line of lines) if (line >= 1 && line <= n) { marks.add(line - 1); reveal(line - 1); }
      recompute();
      const row = scrollTo != null ? visible.indexOf(scrollTo - 1) : -1;
      if (row >= 0) viewport.scrollTop = Math.max(0, row * LINE_HEIGHT - (viewport.clientHeight || 600) / 2);
      draw(true);
    },
    marked: () => [...marks].sort((a, b) => a - b).map((i) => i + 1),
    /**
     * Marks `query` in the lines and goes to the next line holding it after the selected one
     * (wrapping); returns its number, or 0 when no line has it.
     */
    find(query, backwards = false) {
      findQuery = query.toLowerCase();
      if (!findQuery) { draw(true); return 0; }
      for (let k = 1; k <= n; k++) {
        const i = ((selected < 0 ? (backwards ? 0 : -1) : selected) + (backwards ? -k : k) + n * 2) % n;
        if (lines[i].toLowerCase().includes(findQuery)) { goTo(i + 1); o.onLine?.(i + 1); return i + 1; }
      }
      draw(true);
      return 0;
    },
  };
}

/** Cheap pre-check: can this line change the open-string state (has a quote or is inside one)? */
function lineOpensString(line, state) {
  return state != null || line.includes('"""') || line.includes("'''");
}

/** A token's text with the occurrences of `query` (lower-cased) in <mark>. */
function markText(text, query) {
  const lower = text.toLowerCase();
  let at = lower.indexOf(query);
  if (at < 0) return text;
  const out = [];
  let from = 0;
  for (; at >= 0; at = lower.indexOf(query, at + query.length)) {
    out.push(text.slice(from, at), h('mark', null, text.slice(at, at + query.length)));
    from = at + query.length;
  }
  out.push(text.slice(from));
  return out;
}
