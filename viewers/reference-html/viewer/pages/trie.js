// pages/trie.js: the stack trie (`#/trie?s=&q=`): where in user code torch.compile kicked in. Each
// row is a frame of the dynamo_start stacks (file:line, function, source line); the compiles whose
// stack ends at a frame sit on its row, coloured by status, linking to the compile page. The tree
// is flattened into rows and only the rows in view are drawn, so a trie of 100,000 frames
// expands, collapses and searches smoothly. `q` filters to matching frames and compile ids.

import { h, section, note, empty, count, plural, statusBadge, STATUS, stepSelection, replaceUrl } from '../dom.js';
import { loadDirectory, shortPath } from '../compile-data.js';

const ROW_HEIGHT = 26; // px; must match .trie-row in style.css
const MAX_ROWS = 30; // rows visible before the tree scrolls
const INLINE_COMPILES = 6; // a frame with more compiles lists them on rows of their own
const EXPAND_ALL_UNDER = 5000; // tries with fewer nodes open fully expanded

export async function render(ctx) {
  const [trie, dir, stacks] = await Promise.all([ctx.table('stack_trie'), loadDirectory(ctx), ctx.stacks().catch(() => null)]);
  if (!trie || !trie.nodes.length && !trie.unknown_nodes?.length) {
    return h('div', null, h('h1', null, 'Stack trie'),
      section('No stacks', empty('This stream logged no dynamo_start stacks, so there is nothing to place in a trie. ' +
        'The Compiles tab lists the compile ids.')));
  }
  const frames = stacks?.frames ?? [];
  const byId = dir?.byId ?? new Map();

  const known = buildTree(trie.nodes, trie.roots, frames, byId);
  const inTrie = new Set(known.allCompiles);
  const unstacked = (dir?.compiles ?? []).filter((c) => !inTrie.has(c.compile_id));
  ctx.expose('trie', { compileIds: known.allCompiles, nodes: trie.nodes.length, unstacked: unstacked.map((c) => c.compile_id) });

  const q = ctx.params.get('q') ?? '';
  const view = treeView(ctx, known, q, 'trie');
  const search = h('input', {
    type: 'search', class: 'trie-search', placeholder: 'Search frames, files, code or compile ids…',
    'aria-label': 'Search the trie', value: q,
  });
  let timer;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const value = search.value.trim();
      replaceUrl(ctx.href('trie', { q: value || undefined }));
      view.search(value);
    }, 120);
  });

  const unknown = trie.unknown_nodes?.length ? buildTree(trie.unknown_nodes, trie.unknown_roots, frames, byId) : null;
  return h('div', null,
    h('h1', null, 'Stack trie'),
    h('section', { class: 'card' },
      h('p', { class: 'lead' }, `${plural(known.allCompiles.length, 'compile id')} from `,
        `${plural(trie.nodes.length, 'frame node')}. Each row is a frame of the user stack that triggered a compile; `,
        'the compiles whose stack ends there sit on the row.'),
      h('div', { class: 'toolbar' }, search,
        h('button', { type: 'button', on: { click: () => view.expandAll() } }, 'Expand all'),
        h('button', { type: 'button', on: { click: () => view.collapseAll() } }, 'Collapse all'),
        view.counter),
      view.el,
      legend()),
    unstacked.length
      ? section(`Compiles without a stack (${count(unstacked.length)})`,
        note('These compile ids logged no dynamo_start stack of their own (e.g. a compile refused by the ' +
          'recompile limit, or a compiled-autograd capture, which never logs one), so they have no place in the trie.'),
        h('div', { class: 'trie-unstacked' }, unstacked.map((c) => compileLink(ctx, c.compile_id, c.status))))
      : null,
    unknown
      ? section('Stacks outside any compile', note('Entries logged with a stack but no compile id (tlparse\'s ' +
        '"Unknown stacks"); the number is how many entries end at the frame.'), treeView(ctx, unknown, '', 'unknown').el)
      : null);
}

/** Nodes with their frame resolved, compiles (with the attempts that replaced restarted ones). */
function buildTree(nodes, roots, frames, byId) {
  const allCompiles = [];
  const items = nodes.map((n) => {
    const f = frames[n.frame] ?? { file: null, line: null, name: '?' };
    const compiles = (n.compiles ?? []).map((c) => {
      const chain = [];
      let next = byId.get(c.compile_id)?.restarted_as;
      for (let hops = 0; next && hops < 8; hops++) {
        const r = byId.get(next);
        chain.push({ compile_id: next, status: r?.status ?? 'metrics_missing' });
        next = r?.restarted_as;
      }
      return { compile_id: c.compile_id, status: byId.get(c.compile_id)?.status ?? c.status, chain };
    });
    const text = `${f.name ?? ''}\n${f.file ?? ''}:${f.line ?? ''}\n${f.loc ?? ''}`.toLowerCase();
    return { ...n, f, compiles, text, entries: n.entries?.length ?? 0 };
  });
  // Trie order (depth first), so the list reads like the tree.
  const walk = (pos) => {
    for (const c of items[pos].compiles) { allCompiles.push(c.compile_id); for (const r of c.chain) allCompiles.push(r.compile_id); }
    for (const child of items[pos].children) walk(child);
  };
  for (const r of roots) walk(r);
  return { items, roots, allCompiles };
}

/**
 * The windowed tree. Rows: {pos, depth, compiles (shown on the row), group?: compiles on rows of
 * their own}. Returns {el, counter, search(q), expandAll(), collapseAll()}.
 */
function treeView(ctx, tree, initialQuery, name) {
  const { items, roots } = tree;
  let query = '';
  let expanded = new Set();
  let matched = null; // Set of node positions whose frame matches, or null without a search
  let keep = null; // nodes on a path to a match
  let rows = [];

  const defaultExpanded = () => {
    if (items.length <= EXPAND_ALL_UNDER) return new Set(items.keys());
    // Big trie: open the single-child chains from the roots, down to the first real branching.
    const open = new Set();
    const stack = [...roots];
    while (stack.length) {
      const p = stack.pop();
      if (items[p].children.length === 1 || roots.includes(p)) { open.add(p); stack.push(...items[p].children); }
    }
    return open;
  };

  const compileMatches = (c) => [c.compile_id, ...c.chain.map((r) => r.compile_id)].some((id) => id.toLowerCase().includes(query));

  function applySearch(q) {
    query = q.toLowerCase();
    if (!query) {
      matched = null;
      keep = null;
      expanded = defaultExpanded();
      return;
    }
    matched = new Set();
    keep = new Set();
    expanded = new Set();
    for (let p = 0; p < items.length; p++) {
      const it = items[p];
      const frameHit = it.text.includes(query);
      const compileHit = it.compiles.some(compileMatches);
      if (!frameHit && !compileHit) continue;
      if (frameHit) matched.add(p);
      keep.add(p);
      if (compileHit && !frameHit) expanded.add(p); // the matching compiles may be on child rows
      for (let a = it.parent; a != null && !keep.has(a); a = items[a].parent) keep.add(a);
      for (let a = it.parent; a != null; a = items[a].parent) expanded.add(a);
    }
  }

  function flatten() {
    rows = [];
    const shownIds = [];
    // Iterative DFS: deep stacks must not overflow the JS stack.
    const todo = roots.filter((r) => !keep || keep.has(r)).reverse().map((pos) => ({ pos, depth: 0, under: false }));
    while (todo.length) {
      const { pos, depth, under } = todo.pop();
      const it = items[pos];
      const free = !keep || under || matched.has(pos); // show this node's contents unfiltered
      const compiles = free ? it.compiles : it.compiles.filter(compileMatches);
      const inline = compiles.length <= INLINE_COMPILES;
      const open = expanded.has(pos);
      rows.push({ pos, depth, compiles: inline ? compiles : [], grouped: inline ? 0 : compiles.length, open });
      if (inline) for (const c of compiles) shownIds.push(c.compile_id, ...c.chain.map((r) => r.compile_id));
      if (!open) continue;
      if (!inline) {
        for (const c of compiles) {
          rows.push({ pos, depth: depth + 1, single: c });
          shownIds.push(c.compile_id, ...c.chain.map((r) => r.compile_id));
        }
      }
      const kids = it.children.filter((k) => free || keep.has(k));
      for (let i = kids.length - 1; i >= 0; i--) todo.push({ pos: kids[i], depth: depth + 1, under: free && Boolean(keep) });
    }
    if (name === 'trie') {
      ctx.expose('trieShown', shownIds);
      ctx.expose('trieRows', rows.length);
    }
    counter.textContent = query
      ? `${plural(matched.size, 'matching frame')}, ${plural(shownIds.length, 'compile id')} shown`
      : `${plural(rows.length, 'row')} shown`;
  }

  const counter = h('span', { class: 'vt-count' });
  const body = h('div', { class: 'trie-body' });
  const sizer = h('div', { class: 'trie-sizer' }, body);
  const viewport = h('div', { class: 'trie-viewport', role: 'tree', 'aria-label': 'Stack trie' }, sizer);
  const el = h('div', { class: 'trie', dataset: { trie: name, keynav: '' } }, viewport);
  let selected = -1; // keys.js: the row selected with j/k

  let drawnKey = '';
  function draw(force = false) {
    sizer.style.height = `${rows.length * ROW_HEIGHT}px`;
    viewport.style.height = `${Math.max(1, Math.min(rows.length, MAX_ROWS)) * ROW_HEIGHT + 2}px`;
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_HEIGHT) - 10);
    const last = Math.min(rows.length, first + MAX_ROWS + 20);
    const key = `${first}:${last}:${selected}`;
    if (!force && key === drawnKey) return;
    drawnKey = key;
    body.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    body.replaceChildren(...(rows.length ? rows.slice(first, last).map((r, i) => {
      const row = rowEl(r);
      if (first + i === selected) { row.classList.add('kb-selected'); row.setAttribute('aria-selected', 'true'); }
      return row;
    })
      : [h('div', { class: 'trie-row trie-none' }, `Nothing matches “${query}”.`)]));
  }

  function rowEl(r) {
    const indent = { paddingLeft: `${8 + Math.min(r.depth, 60) * 14}px` };
    if (r.single) {
      return h('div', { class: 'trie-row trie-compile-row', role: 'treeitem', style: indent },
        h('span', { class: 'trie-toggle' }), compileChip(ctx, r.single, query));
    }
    const it = items[r.pos];
    const f = it.f;
    const openable = it.children.length > 0 || r.grouped > 0;
    return h('div', { class: ['trie-row', matched?.has(r.pos) && 'trie-hit'], role: 'treeitem', 'aria-expanded': openable ? String(r.open) : null, style: indent },
      openable
        ? h('button', { type: 'button', class: 'trie-toggle', 'aria-label': r.open ? 'Collapse' : 'Expand', on: { click: () => toggle(r.pos) } }, r.open ? '▾' : '▸')
        : h('span', { class: 'trie-toggle' }),
      h('span', { class: 'trie-frame', title: `${f.file ?? '?'}:${f.line ?? '?'} in ${f.name ?? '?'}` },
        h('span', { class: 'trie-fn' }, mark(f.name ?? '?', query)), ' ',
        h('span', { class: 'trie-file' }, mark(`${shortPath(f.file, 2)}:${f.line ?? '?'}`, query))),
      f.loc ? h('code', { class: 'trie-loc', title: f.loc }, mark(f.loc, query)) : null,
      r.compiles.length ? h('span', { class: 'trie-compiles' }, r.compiles.map((c) => compileChip(ctx, c, query))) : null,
      r.grouped ? h('span', { class: 'trie-group' }, `${plural(r.grouped, 'compile')} ${r.open ? '' : '(expand)'}`) : null,
      it.entries ? h('span', { class: 'trie-group' }, plural(it.entries, 'entry', 'entries')) : null,
      openable && it.total > 1 ? h('span', { class: 'trie-total', title: `${it.total} below this frame` }, count(it.total)) : null);
  }

  function toggle(pos) {
    if (expanded.has(pos)) expanded.delete(pos); else expanded.add(pos);
    flatten();
    draw(true);
  }

  viewport.addEventListener('scroll', () => requestAnimationFrame(() => draw()), { passive: true });
  el.keynav = {
    move(delta) {
      if (!rows.length) return false;
      selected = stepSelection(selected, delta, rows.length, ROW_HEIGHT, viewport);
      draw(true);
      body.querySelector('.kb-selected')?.scrollIntoView({ block: 'nearest' });
      return true;
    },
    /** Enter: the row's first compile, else opens or closes the frame. */
    open() {
      const row = body.querySelector('.kb-selected');
      const target = row?.querySelector('a[href]') ?? row?.querySelector('button.trie-toggle');
      target?.click();
      return Boolean(target);
    },
    clear() { selected = -1; draw(true); },
    get selected() { return selected; },
  };
  applySearch(initialQuery);
  flatten();
  draw(true);

  return {
    el,
    counter,
    search(q) {
      applySearch(q);
      flatten();
      viewport.scrollTop = 0;
      draw(true);
    },
    expandAll() {
      expanded = new Set(keep ? [...keep] : items.keys());
      flatten();
      draw(true);
    },
    collapseAll() {
      expanded = new Set();
      flatten();
      viewport.scrollTop = 0;
      draw(true);
    },
  };
}

/** A compile id on a trie row: coloured by status, a link; a restarted one shows its replacement. */
function compileChip(ctx, c, query) {
  return h('span', { class: 'trie-chip' },
    compileLink(ctx, c.compile_id, c.status, query),
    c.chain.map((r) => [h('span', { class: 'muted', title: 'restarted as' }, ' → '), compileLink(ctx, r.compile_id, r.status, query)]));
}

function compileLink(ctx, id, status, query = '') {
  const cls = { ok: 'st-ok', ok_with_restart: 'st-restart', restarted: 'st-restart', empty_graph: 'st-empty', failed: 'st-failed' }[status] ?? 'st-missing';
  return h('a', { class: ['badge', 'cid', cls], href: ctx.href('compile', { id }), title: `${id}: ${status}`, dataset: { cid: id } },
    mark(id, query));
}

/** Text with the (case-insensitive) occurrences of `query` in <mark>. */
function mark(text, query) {
  if (!query) return text;
  const lower = text.toLowerCase();
  const out = [];
  let at = 0;
  for (let i = lower.indexOf(query); i >= 0; i = lower.indexOf(query, i + query.length)) {
    out.push(text.slice(at, i), h('mark', null, text.slice(i, i + query.length)));
    at = i + query.length;
  }
  out.push(text.slice(at));
  return out;
}

function legend() {
  return h('p', { class: 'note trie-legend' }, 'Status: ',
    Object.keys(STATUS).map((s) => [statusBadge(s), ' ']),
    '· a → b: attempt a restarted as b. Hover a status for what it means.');
}
