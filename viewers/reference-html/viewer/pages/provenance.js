// pages/provenance.js: Inductor provenance (`#/provenance?s=&id=&g=&pane=&line=`). Reads the
// `provenance` table (docs/tables/provenance.md): per compile, its pre-grad graph and every graph
// Inductor compiled in it (forward, backward, inference), each with its post-grad graph, generated
// code and line maps. Shows one graph (`id`, `g` its index) as three panes, pre-grad | post-grad |
// code, as tlparse's provenance page does; clicking a line marks the lines it maps to in the other
// panes (`pane`, `line` keep the click in the URL). Then the compile's kernels' stack traces.

import { h, section, note, empty, plural, facts, code } from '../dom.js';
import { codeView } from '../code.js';
import { keepInUrl, lazyDetails } from '../analysis.js';
import { artifactHref, tlparseName } from '../compile-data.js';

const PANES = ['pre', 'post', 'code'];

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const table = await ctx.table('provenance');
  const compiles = table?.compiles ?? [];
  if (!compiles.length) {
    return h('div', null, h('h1', null, 'Provenance'),
      section('No provenance', empty('This stream logged no usable provenance node mappings. Set ' +
        'torch._inductor.config.trace.provenance_tracking_level = 1 to log them.')));
  }
  const idParam = ctx.params.get('id');
  const compile = compiles.find((c) => (c.compile_id ?? '') === (idParam ?? compiles[0].compile_id ?? '')) ?? compiles[0];
  const gi = Math.max(0, Math.min(Number(ctx.params.get('g')) || 0, compile.graphs.length - 1));
  const graph = compile.graphs[gi];
  ctx.expose('provenance', {
    compiles: compiles.map((c) => ({ compile_id: c.compile_id, graphs: c.graphs.map(graphLabel) })),
    compile: compile.compile_id,
    graph: gi,
    label: graphLabel(graph, gi),
    empty: mapsEmpty(graph),
  });

  const panes = await threePanes(ctx, compile, graph);
  const traces = (table.kernel_stack_traces ?? []).filter((t) => t.compile_id === compile.compile_id);
  return h('div', null,
    h('h1', null, 'Provenance'),
    section('Compiles with provenance',
      h('ul', { class: 'prov-list' }, compiles.map((c) => h('li', null,
        h('span', { class: 'mono' }, c.compile_id ?? 'no compile id'), ' ',
        c.graphs.map((g, i) => h('a', {
          class: ['prov-graph', c === compile && i === gi && 'active'],
          href: ctx.href('provenance', { id: c.compile_id ?? '', g: i || null }),
        }, graphLabel(g, i)))))),
      note('Each graph Inductor compiled has its own maps: a training compile has a forward and a backward. ',
        'Click a line in a pane to mark the lines it became (or came from) in the others.')),
    graphSection(ctx, compile, graph, gi, panes),
    traces.length ? tracesSection(traces) : null);
}

/** "forward", "backward", "inference", or "graph 2" when the log does not say. */
function graphLabel(g, i) {
  return g.graph ?? `graph ${i + 1}`;
}

/** Whether a graph's maps map nothing (torch logs a backward's as just a version). */
function mapsEmpty(g) {
  return Object.values(g.line_mappings).every((m) => Object.keys(m).length === 0);
}

/** The graph's panes with their text, each {title, pane, text}; text null when not logged. */
async function threePanes(ctx, compile, graph) {
  const codePane = graph.cpp_code ?? graph.python_code;
  const specs = [
    ['pre', 'Pre-grad graph', compile.pre_grad],
    ['post', 'Post-grad graph', graph.post_grad],
    ['code', graph.cpp_code ? 'Generated C++ code' : 'Generated Python code', codePane],
  ];
  return Promise.all(specs.map(async ([key, title, pane]) => ({
    key, title, pane, text: pane ? await ctx.bundle.text(pane.artifact.blob) : null,
  })));
}

/** The selected graph: what it is, its artifacts, and the three linked panes. */
function graphSection(ctx, compile, graph, gi, panes) {
  const id = compile.compile_id;
  const views = {};
  // `scroll`: also bring the clicked line into view (when it comes from the URL).
  const select = (key, line, scroll) => {
    const found = correspondingLines(compile, graph, key, line);
    views[key].mark([line], scroll ? line : null);
    for (const other of PANES) {
      if (other === key || !views[other]) continue;
      const lines = found[other] ?? [];
      views[other].mark(lines, lines[Math.floor(lines.length / 2)] ?? null);
    }
    ctx.expose('provenanceMarks', Object.fromEntries(PANES.map((k) => [k, views[k]?.marked() ?? []])));
  };
  const boxes = panes.map(({ key, title, pane, text }) => {
    if (text == null) return h('div', { class: 'prov-pane', dataset: { pane: key } }, h('h3', null, title), empty('Not logged.'));
    const matches = matchingLines(compile, graph, key);
    const view = codeView(text, {
      language: key === 'code' && graph.cpp_code ? 'text' : 'python', name: `prov-${key}`,
      hasMatch: (n) => matches.has(n),
      onClickLine: (n) => { keepInUrl(ctx, { pane: key, line: n }); select(key, n, false); },
    });
    views[key] = view;
    return h('div', { class: 'prov-pane', dataset: { pane: key } },
      h('h3', null, title, ' ', h('a', { class: 'small-link', href: artifactHref(ctx, pane.artifact, id) }, pane.artifact.name),
        tlparseName(pane.artifact)),
      view.el);
  });
  const fromUrl = ctx.params.get('pane');
  const line = Number(ctx.params.get('line'));
  ctx.expose('provenanceMarks', { pre: [], post: [], code: [] });
  if (views[fromUrl] && line) {
    // The panes can scroll only once they are in the document and have a size.
    const whenShown = (tries) => {
      if (views[fromUrl].el.isConnected && views[fromUrl].el.clientHeight) select(fromUrl, line, true);
      else if (tries) requestAnimationFrame(() => whenShown(tries - 1));
    };
    requestAnimationFrame(() => whenShown(60));
  }

  return h('section', { class: 'card', dataset: { graph: gi } },
    h('h2', null, id ?? 'no compile id', ' · ', graphLabel(graph, gi)),
    facts([
      ['AOT ID', graph.aot_id ? code(graph.aot_id) : null],
      ['node mappings', h('a', { href: artifactHref(ctx, graph.node_mappings, id) }, `log line ${graph.node_mappings.line}`)],
      ['mapped', `${plural(Object.keys(graph.line_mappings.preToPost).length, 'pre-grad line')}, ` +
        `${plural(Object.keys(graph.line_mappings.postToPre).length, 'post-grad line')}`],
    ]),
    mapsEmpty(graph) ? note('The node mappings of this graph map nothing', heldKeys(graph.raw_node_mappings),
      '. A backward often has none; its forward\'s are kept beside it.') : null,
    h('div', { class: 'prov-panes' }, boxes));
}

/** ": torch logged only `version`" for mappings that hold no map (null for other payloads). */
function heldKeys(raw) {
  const keys = raw && typeof raw === 'object' ? Object.keys(raw) : [];
  return keys.length ? [': torch logged only ', keys.map((k, i) => [i ? ', ' : '', code(k)])] : null;
}

/** The compile's kernels (of all its graphs) with their user stack traces, each opened on demand. */
function tracesSection(traces) {
  return section(`Kernel stack traces of this compile (${traces.length}, every graph)`,
    traces.map((t) => lazyDetails(h('span', { class: 'mono' }, t.kernel),
      () => h('div', null, t.traces.length ? t.traces.map((s) => h('pre', { class: 'an-pre' }, s)) : empty('No traces logged.')))));
}

/**
 * The maps of a graph, from its own numbering to blob lines: each pane's line offset applied.
 * Returns {toLines(mapName, line) → blob lines} for a blob line of the source pane.
 */
function maps(compile, graph) {
  const lm = graph.line_mappings;
  const cpp = graph.cpp_code != null;
  const offset = {
    pre: compile.pre_grad?.line_offset ?? 0,
    post: graph.post_grad?.line_offset ?? 0,
    code: (graph.cpp_code ?? graph.python_code)?.line_offset ?? 0,
  };
  const table = {
    pre: { post: lm.preToPost },
    post: { pre: lm.postToPre, code: cpp ? lm.postToCppCode : lm.postToPyCode },
    code: { post: cpp ? lm.cppCodeToPost : lm.pyCodeToPost },
  };
  /** Blob line `line` of pane `from` → blob lines of pane `to` (one step). */
  const step = (from, to, line) => (table[from][to]?.[String(line - offset[from])] ?? []).map((m) => m + offset[to]);
  return { step, table, offset };
}

/**
 * The lines of the other panes that blob line `line` of pane `key` maps to, as tlparse's
 * provenance.js finds them: pre → post → code, post → pre and code, code → post → pre.
 * @returns {{pre?: number[], post?: number[], code?: number[]}}
 */
function correspondingLines(compile, graph, key, line) {
  const { step } = maps(compile, graph);
  if (key === 'pre') {
    const post = step('pre', 'post', line);
    return { post, code: post.flatMap((p) => step('post', 'code', p)) };
  }
  if (key === 'post') return { pre: step('post', 'pre', line), code: step('post', 'code', line) };
  const post = step('code', 'post', line);
  return { post, pre: post.flatMap((p) => step('post', 'pre', p)) };
}

/** The blob lines of a pane that map somewhere (underlined as clickable). */
function matchingLines(compile, graph, key) {
  const { table, offset } = maps(compile, graph);
  const out = new Set();
  for (const m of Object.values(table[key])) {
    for (const [line, targets] of Object.entries(m ?? {})) if (targets.length) out.add(Number(line) + offset[key]);
  }
  return out;
}
