// pages/compile.js: one compile (`#/compile?s=&id=[0/1]`). First what happened (status, time,
// failure or restart reasons, graph breaks; for a recompile the guard that failed), then a
// sticky list of the sections, then its artifacts (what most visits come for), then its facts and
// key metrics, phase timeline, cache lookups, guards, inputs and the user stack that triggered it.
// Reads the per-compile rows of compile_directory, compilation_metrics, compile_time,
// cache_outcomes, guards, inputs and runnables, the stream's stack table, and for a recompile the
// recompiles table.

import { h, section, facts, note, empty, dataTable, count, bytes, seconds, plural, statusBadge, code, externalLink } from '../dom.js';
import {
  loadDirectory, frameOf, fileLine, shortPath, cacheChip, cacheLabel, cacheVerdicts, artifactHref, artifactColumns,
  sameFrame, stackList, entryTimes, timingTimes, shownTimes, timeSummary, TIME_PARTS,
} from '../compile-data.js';
import { reasonSource } from '../analysis.js';

const OUTCOME_BADGE = { hit: 'st-ok', miss: 'st-failed', bypass: 'st-restart', disabled: 'st-empty' };

/**
 * compilation_metrics fields worth seeing first, with labels and, where the name misleads, a note
 * after the value. The rest go in a folded list.
 */
const KEY_METRICS = [
  ['graph_op_count', 'graph ops'], ['graph_node_count', 'graph nodes'], ['graph_input_count', 'graph inputs'],
  ['guard_count', 'guards'], ['shape_env_guard_count', 'shape-env guards'], ['guard_latency_us', 'guard latency (µs)'],
  ['cache_size', 'cache entries before'], ['num_graph_breaks', 'graph breaks so far', 'torch\'s running total for the process, not this compile\'s'], ['has_guarded_code', 'has guarded code'],
  ['is_forward', 'forward'], ['cuda_version', 'CUDA'], ['triton_version', 'Triton'],
];

export async function render(ctx) {
  const id = ctx.params.get('id');
  const dir = await loadDirectory(ctx);
  const c = id && dir ? dir.byId.get(id) : null;
  if (!c) {
    return h('div', null, crumbs(ctx, id), h('h1', null, `Compile ${id ?? ''}`),
      section('Not found', empty(id ? `This stream has no compile ${id}. Pick one on the Compiles tab (or another stream).`
        : 'No compile id in the link: pick a compile on the Compiles tab.')));
  }
  const t = (name) => (ctx.stream?.tables?.[name] ? ctx.table(name) : Promise.resolve(null));
  const [metrics, compileTime, caches, guards, inputs, runnables, stacks, recompiles] = await Promise.all([
    t('compilation_metrics'), t('compile_time'), t('cache_outcomes'), t('guards'), t('inputs'), t('runnables'),
    ctx.stacks().catch(() => null), c.cid?.frame_compile_id > 0 ? t('recompiles') : null]);
  const { byId, compiles } = dir;
  const frame = frameOf(c, byId);
  const replaced = compiles.find((x) => x.restarted_as === id) ?? null; // the attempt this one restarted
  const capture = captureOf(c, compiles); // the compiled-autograd capture whose graph this compiles
  const siblings = sameFrame(c, compiles);
  const at = siblings.indexOf(c);
  const prev = siblings[at - 1] ?? null;
  const next = siblings[at + 1] ?? null;

  const metricRows = (metrics?.metrics ?? []).filter((m) => m.compile_id === id);
  const timing = compileTime?.compiles.find((x) => x.compile_id === id) ?? null;
  const cacheRow = caches?.compiles.find((x) => x.compile_id === id) ?? null;
  const mine = (list) => (list ?? []).filter((r) => r.compile_id === id);
  const g = guards ? {
    summary: guards.compiles.find((x) => x.compile_id === id) ?? null,
    trees: mine(guards.guard_trees), shape: mine(guards.shape_guards), specializations: mine(guards.specializations),
    symbols: mine(guards.symbols), dataDependent: mine(guards.data_dependent), dynamo: mine(guards.dynamo_guards),
  } : null;
  const myInputs = mine(inputs?.inputs);
  const stackId = c.stack ?? replaced?.stack ?? null;
  const stack = stackId != null && stacks?.stacks?.[stackId] ? stacks.stacks[stackId].map((f) => stacks.frames[f]) : null;
  const times = entryTimes(c);
  const recompile = recompileOf(c, recompiles, byId);

  ctx.expose('compile', {
    id, status: c.status, frame: frame?.name ?? null,
    graphCompiles: c.graph_compiles ?? [], capturedBy: capture?.compile_id ?? null,
    artifacts: c.artifacts.map((a) => a.name),
    graphs: c.artifacts.map((a) => a.graph ?? null),
    recompile: recompile ? { frame: recompile.frame, step: recompile.step.compile_id, reasons: recompile.step.reasons,
      reasonsFrom: recompile.step.reasons_from ?? null, reasonsLoggedOn: recompile.step.reasons_logged_on ?? null } : null,
    noPayload: c.artifacts.filter((a) => a.no_payload).map((a) => a.name),
    guards: (g?.trees ?? []).flatMap((tr) => tr.guards.map((x) => x.code)),
    shapeGuards: (g?.shape ?? []).map((x) => x.expr),
    symbolsWhere: (g?.symbols ?? []).map((x) => (x.user_frame ? `${x.user_frame.file}:${x.user_frame.line}` : null)),
    inputs: myInputs.map((x) => x.sources.join(', ')),
    phases: timing?.phases.map((p) => p.name) ?? [],
    caches: cacheRow?.caches.map((v) => `${v.cache}:${v.outcome}`) ?? [],
    metricsKinds: metricRows.map((m) => m.kind),
    stackFrames: stack?.length ?? 0,
    prev: prev?.compile_id ?? null, next: next?.compile_id ?? null,
    times: shownTimes(times),
    phaseTimes: timing ? shownTimes(timingTimes(timing)) : null,
  });

  return h('div', { class: 'compile-page' },
    crumbs(ctx, id),
    h('div', { class: 'compile-head' },
      h('h1', null, 'Compile ', h('span', { class: 'mono' }, id), ' ', statusBadge(c.status)),
      siblings.length > 1 ? h('nav', { class: 'frame-nav', 'aria-label': 'Compiles of this frame' },
        prev ? h('a', { href: ctx.href('compile', { id: prev.compile_id }), rel: 'prev' }, `← ${prev.compile_id}`) : h('span', { class: 'muted' }, '← (first)'),
        h('span', { class: 'muted' }, ` · ${at + 1} of ${siblings.length} compiles of this frame · `),
        next ? h('a', { href: ctx.href('compile', { id: next.compile_id }), rel: 'next' }, `${next.compile_id} →`) : h('span', { class: 'muted' }, '(last) →')) : null),
    frame ? h('p', { class: 'compile-frame' }, h('b', null, frame.name ?? '?'), ' in ', fileLine(frame.file, frame.line, 3),
      frame.inherited ? h('span', { class: 'muted' }, ' (from the attempt that replaced this one)') : null) : null,
    recompile ? recompileCard(ctx, c, recompile) : null,
    verdict(ctx, c, byId, replaced),
    ...withNav([
      ['artifacts', 'Artifacts', artifactsSection(ctx, c, runnables)],
      ['facts', 'Facts & metrics', h('div', { class: 'grid-2' },
      section('Facts', facts([
        ['status', statusBadge(c.status)],
        ...timeFacts(times),
        ['started', c.start_ts ? h('span', { class: 'mono' }, c.start_ts) : null],
        ['ended', c.end_ts ? h('span', { class: 'mono' }, c.end_ts) : null],
        ['start time', c.start_time != null ? new Date(c.start_time * 1000).toISOString().replace('T', ' ').replace('Z', ' UTC') : null],
        ['restart of', replaced ? h('a', { href: ctx.href('compile', { id: replaced.compile_id }) }, replaced.compile_id) : null],
        ['restarted as', c.restarted_as ? h('a', { href: ctx.href('compile', { id: c.restarted_as }) }, c.restarted_as) : null],
        ['graph compiled as', c.graph_compiles?.length ? compileLinks(ctx, c.graph_compiles, byId) : null],
        ['graph captured by', capture ? h('a', { href: ctx.href('compile', { id: capture.compile_id }), class: 'mono' }, capture.compile_id) : null],
        ['frame compiles', siblings.length > 1 ? h('span', { class: 'sibling-list' }, siblings.map((s) => (s === c
          ? h('span', { class: 'badge current' }, s.compile_id)
          : h('a', { href: ctx.href('compile', { id: s.compile_id }), class: 'mono' }, s.compile_id)))) : null],
        ['log entries', `seq ${count(c.first_seq)} – ${count(c.last_seq)}`],
        ['directory', code(c.dir)],
      ])),
      metricsSection(metricRows, metrics?.shared ?? [], c))],
      ['phases', 'Phases', phasesSection(timing)],
      ['caches', 'Caches', cacheSection(ctx, cacheRow, c)],
      ['guards', 'Guards', guardsSection(ctx, g, c)],
      ['inputs', 'Inputs', inputsSection(myInputs)],
      ['stack', 'Stack', stackSection(stack, stackId, replaced, c)],
    ]));
}

/**
 * The sections (`[key, label, node or null]`) with ids, after a sticky list of links to them.
 * The links scroll rather than navigate: the URL's hash is the route.
 */
function withNav(sections) {
  const shown = sections.filter(([, , node]) => node);
  for (const [key, , node] of shown) node.id = `sec-${key}`;
  const go = (key) => (e) => {
    e.preventDefault();
    document.getElementById(`sec-${key}`)?.scrollIntoView({ block: 'start' });
  };
  const nav = h('nav', { class: 'section-nav', 'aria-label': 'Sections of this compile' },
    shown.map(([key, label]) => h('button', { type: 'button', class: 'link-button', dataset: { section: key }, on: { click: go(key) } }, label)));
  return [nav, ...shown.map(([, , node]) => node)];
}

/** A frame's key in the Recompiles view's URL (`frame=`): its id, after `!N/` for compiled autograd. */
function frameKey(f) {
  return f.compiled_autograd_id != null ? `!${f.compiled_autograd_id}/${f.frame_id}` : String(f.frame_id);
}

/**
 * A recompile's frame key in the recompiles table and its step there (null when not listed). The
 * table lists a frame compile by its final attempt; an attempt Dynamo restarted shares its reason,
 * so it is found by following `restarted_as`.
 */
function recompileOf(c, recompiles, byId) {
  if (!(c.cid?.frame_compile_id > 0)) return null;
  const same = (f) => f.frame_id === c.cid.frame_id && (f.compiled_autograd_id ?? null) === (c.cid.compiled_autograd_id ?? null);
  const f = (recompiles?.frames ?? []).find(same);
  let last = c;
  for (let hops = 0; last.restarted_as && byId.get(last.restarted_as) && hops < 64; hops++) last = byId.get(last.restarted_as);
  const step = f?.compiles.find((x) => x.compile_id === last.compile_id);
  return step ? { frame: frameKey(f), step } : null;
}

/** A recompile, first: the guard of each earlier compile that failed, and the Recompiles view. */
function recompileCard(ctx, c, r) {
  const reasons = r.step.reasons;
  return h('section', { class: ['card', 'recompile-reason'], 'aria-label': 'Why it recompiled' },
    // Recompile N of a frame is its frame compile N ([f/N]): [f/0] is the first compile, not a recompile.
    h('h2', null, `Recompile ${c.cid.frame_compile_id} of this frame: `,
      reasons.length ? (reasons.length > 1 ? `${reasons.length} earlier compiles' guards failed` : 'a guard failed') : 'no reason was logged'),
    reasons.map((x) => h('pre', { class: 'reason-text' }, x)),
    reasonSource(r.step),
    h('p', null, h('a', { href: ctx.href('recompiles', { frame: r.frame, id: r.step.compile_id }), class: 'recompiles-link' },
      'What changed since the previous compile, in the Recompiles view →')));
}

function crumbs(ctx, id) {
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: ctx.href('compiles') }, 'Compiles'), ' › ',
    h('span', { class: 'crumb-here' }, id ?? '?'));
}

/** The compile's time as facts: forward, backward, total, and other time when there is some. */
function timeFacts(t) {
  const fact = (part) => [part, t[part] != null ? h('span', { title: TIME_PARTS[part] }, seconds(t[part])) : null];
  const inside = t.inForward != null
    ? ['backward inside', h('span', { title: TIME_PARTS.inForward }, `${seconds(t.inForward)} (compiled inside the forward, part of it)`)] : [null, null];
  return [fact('forward'), inside, fact('backward'), fact('total'), t.other != null ? ['other (not in total)', h('span', { title: TIME_PARTS.other }, seconds(t.other))] : [null, null]];
}

/** The answer first: what happened to this compile, in words. */
function verdict(ctx, c, byId, replaced) {
  const parts = [];
  const replacement = c.restarted_as ? byId.get(c.restarted_as) : null;
  const errorArtifacts = c.artifacts.filter((a) => a.blob && /error|exception|traceback/i.test(a.name));
  if (c.status === 'failed') {
    parts.push(h('div', { class: 'verdict-error', role: 'alert' },
      h('h2', null, `Failed: ${c.fail_type ?? 'unknown error'}`),
      c.fail_reason ? reasonText(c.fail_reason) : note('No failure reason was logged.'),
      errorArtifacts.length ? note('Traceback: ', errorArtifacts.map((a, i) => [i ? ', ' : '', h('a', { href: artifactHref(ctx, a, c.compile_id) }, a.name)]), '.') : null));
  } else if (c.status === 'restarted') {
    parts.push(h('p', { class: 'verdict-line' }, 'Dynamo restarted this attempt',
      c.graph_breaks.length ? ` at a graph break (${c.graph_breaks.join('; ')})` : '', '; it was compiled again as ',
      h('a', { href: ctx.href('compile', { id: c.restarted_as }) }, c.restarted_as),
      replacement ? [' (', statusBadge(replacement.status), ')'] : '', '.'));
  } else if (c.status === 'empty_graph') {
    parts.push(h('p', { class: 'verdict-line' }, 'Dynamo captured no operations here (empty graph): the frame runs eagerly, ',
      'usually because of a graph break right at its start.'));
  } else if (c.status === 'compiled_autograd_capture') {
    parts.push(captureVerdict(ctx, c, byId));
  } else if (c.status === 'metrics_missing') {
    parts.push(h('p', { class: 'verdict-line' }, 'No compilation metrics were logged: the compile crashed, or the log ended before it finished.'));
  } else {
    const time = timeSummary(entryTimes(c));
    parts.push(h('p', { class: 'verdict-line' }, c.status === 'ok_with_restart' ? 'Compiled after a restart' : 'Compiled',
      time ? [' in ', time] : '', '.',
      replaced ? [' It replaces the restarted attempt ', h('a', { href: ctx.href('compile', { id: replaced.compile_id }) }, replaced.compile_id), '.'] : ''));
  }
  if (c.restart_reasons?.length) {
    parts.push(h('h3', null, plural(c.restart_reasons.length, 'restart reason')),
      c.restart_reasons.map((r) => h('div', { class: 'reason' }, reasonText(r))));
  }
  if (c.graph_breaks.length) {
    parts.push(h('h3', null, plural(c.graph_breaks.length, 'graph break')),
      h('ul', { class: 'break-list' }, c.graph_breaks.map((b) => h('li', null, b))),
      note('Full reasons and user stacks: the dynamo_graph_break_reason artifacts below, or the ',
        h('a', { href: ctx.href('graph-breaks') }, 'Graph breaks'), ' tab.'));
  }
  const cls = {
    failed: 'verdict-failed', restarted: 'verdict-warn', ok_with_restart: 'verdict-warn', empty_graph: 'verdict-empty',
    metrics_missing: 'verdict-missing', compiled_autograd_capture: 'verdict-capture',
  }[c.status] ?? 'verdict-ok';
  return h('section', { class: ['card', 'verdict', cls], 'aria-label': 'What happened' }, parts);
}

/**
 * A compiled-autograd capture: what it is (no metrics is normal), and the compiles of its graph.
 * torch logs no metrics for a capture; Dynamo compiles the captured graph as frames of their own.
 */
function captureVerdict(ctx, c, byId) {
  const graphs = c.graph_compiles ?? [];
  return h('p', { class: 'verdict-line' },
    'Compiled autograd captured a backward graph here. A capture logs no compilation metrics: ',
    graphs.length
      ? ['Dynamo compiled the captured graph as ', compileLinks(ctx, graphs, byId), '.']
      : 'no compile of the captured graph was logged (the capture failed, or the log ended first).');
}

/** Links to compile ids, each with its status. */
function compileLinks(ctx, ids, byId) {
  return ids.map((x, i) => [i ? ', ' : '', h('a', { href: ctx.href('compile', { id: x }), class: 'mono' }, x),
    byId.get(x) ? [' ', statusBadge(byId.get(x).status)] : null]);
}

/** The capture (`[!N/-/-]`) whose graph_compiles list a compile, if any. */
function captureOf(c, compiles) {
  return compiles.find((x) => x.graph_compiles?.includes(c.compile_id)) ?? null;
}

/** A logged reason: preformatted, its http(s) links clickable. */
function reasonText(text) {
  const out = [];
  let at = 0;
  for (const m of text.matchAll(/https?:\/\/[^\s)'"<>]+/g)) {
    out.push(text.slice(at, m.index), externalLink(m[0], m[0]) ?? m[0]);
    at = m.index + m[0].length;
  }
  out.push(text.slice(at));
  return h('pre', { class: 'reason-text' }, out);
}

function metricsSection(rows, shared, c) {
  if (!rows.length) {
    return section('Metrics', empty(c.status === 'compiled_autograd_capture'
      ? 'A compiled-autograd capture logs no compilation_metrics: the compiles of its graph do.'
      : 'No compilation_metrics entry was logged for this compile.'));
  }
  const main = rows.find((r) => !r.runtime) ?? rows[0];
  const m = main.metrics ?? {};
  const resolve = (v) => (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'shared' in v ? shared[v.shared] : v);
  const key = KEY_METRICS.filter(([k]) => m[k] != null && m[k] !== '')
    .map(([k, label, aside]) => [label, aside ? [fmt(m[k]), h('span', { class: 'muted' }, ` (${aside})`)] : fmt(m[k])]);
  const times = Object.entries(main.times_s ?? {}).filter(([, v]) => v != null).map(([k, v]) => [k.replace(/_time_s$/, '').replace(/_/g, ' '), seconds(v)]);
  return section('Metrics',
    rows.length > 1 ? note(`${plural(rows.length, 'metrics entry', 'metrics entries')}: ${rows.map((r) => r.kind).join(', ')}; showing ${main.kind}.`) : null,
    facts([...key, ...times]),
    rows.map((r) => h('details', { class: 'all-metrics' },
      h('summary', null, `All ${count(Object.keys(r.metrics ?? {}).length)} fields of ${r.kind}`, r.runtime ? ' (runtime)' : ''),
      h('dl', { class: 'facts metric-list' }, Object.entries(r.metrics ?? {}).map(([k, v]) => [h('dt', null, k), h('dd', null, valueView(resolve(v)))])))));
}

function fmt(v) {
  if (typeof v === 'number') return count(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
}

/** A metrics value: short ones inline, long or structured ones folded. */
function valueView(v) {
  if (v == null) return h('span', { class: 'muted' }, 'null');
  if (typeof v !== 'object' && String(v).length <= 120) return typeof v === 'string' ? v : fmt(v);
  const text = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  if (text.length <= 120 && !text.includes('\n')) return h('span', { class: 'mono' }, text);
  return h('details', null, h('summary', { class: 'muted' }, `${typeof v === 'string' ? 'text' : Array.isArray(v) ? `list of ${v.length}` : 'object'}, ${bytes(text.length)}`),
    h('pre', { class: 'metric-value' }, text));
}

/** Phases shown before "show all": the outer levels, and any phase over 2% of the compile. */
const MAIN_PHASE_DEPTH = 2;

/** The phases as a timeline: each bar from its first begin, as long as its total time. */
function phasesSection(timing) {
  if (!timing) return null;
  const span = timing.span_us || 1;
  const depth = timing.phases.map(() => 0);
  timing.phases.forEach((p, i) => { depth[i] = p.parent != null ? depth[p.parent] + 1 : 0; });
  const main = timing.phases.map((p, i) => depth[i] <= MAIN_PHASE_DEPTH || p.total_us >= span * 0.02 || p.unfinished > 0);
  const hidden = main.filter((m) => !m).length;
  const list = h('div', { class: 'phases', role: 'list' });
  const drawPhases = (all) => {
    list.replaceChildren(...timing.phases.map((p, i) => (all || main[i] ? phaseRow(p, depth[i], span) : null)).filter(Boolean));
  };
  drawPhases(false);
  let all = false;
  const more = hidden ? h('button', {
    type: 'button', class: 'show-more',
    on: { click: (e) => { all = !all; drawPhases(all); e.target.textContent = all ? 'Show the main phases only' : `Show all ${timing.phases.length} phases`; } },
  }, `Show all ${timing.phases.length} phases`) : null;
  const summary = timeSummary(timingTimes(timing));
  return section('Phases',
    summary ? h('p', { class: 'phases-total' }, 'Compile time ', summary,
      timing.counted_in ? ` (this attempt's frame compile counts in ${timing.counted_in})` : '', '.')
      : timing.counted_in ? note(`This attempt's frame compile counts in ${timing.counted_in}, which completed it.`) : null,
    list, more,
    timing.instants.length ? note('Events: ', timing.instants.map((x, i) => [i ? ', ' : '', code(x.name), x.count > 1 ? ` ×${x.count}` : ''])) : null,
    note('Bars are placed on the compile\'s wall-clock span (', seconds(timing.span_us / 1e6),
      ', from its first trace event to its last: not its compile time, which adds up its frame compile and lazy backward).',
      hidden ? ` ${plural(hidden, 'short nested phase')} hidden.` : ''),
    phaseLegend());
}

/** The phase bars' legend, drawn with the bars' own classes so that it reads right in both themes. */
function phaseLegend() {
  const item = (self, label) => h('span', { class: 'an-legend-item', role: 'listitem', dataset: { part: self ? 'self' : 'total' } },
    h('span', { class: 'phase-track phase-swatch', 'aria-hidden': 'true' },
      h('span', { class: 'phase-bar', style: { left: '0', width: '100%' } }, self ? h('span', { class: 'phase-self', style: { width: '100%' } }) : null)),
    label);
  return h('p', { class: 'an-legend', role: 'list' },
    item(false, 'time in the phase'), item(true, 'self time: in the phase itself, not in nested phases'));
}

function phaseRow(p, depth, span) {
  return h('div', { class: 'phase', role: 'listitem' },
    h('span', { class: 'phase-name', style: { paddingLeft: `${depth * 14}px` }, title: p.name },
      p.name, p.count > 1 ? h('span', { class: 'muted' }, ` ×${p.count}`) : null,
      p.unfinished ? h('span', { class: 'warn-text', title: 'began and never ended: its end was lost, or the log ended first' }, ` (${p.unfinished} unfinished)`) : null,
      p.outer ? h('span', { class: 'muted', title: `inside phase ${p.outer.phase} of ${p.outer.compile_id}` }, ` ⤴ ${p.outer.compile_id}`) : null),
    h('span', { class: 'phase-track' },
      h('span', {
        class: 'phase-bar',
        style: { left: `${Math.min(100, (p.offset_us / span) * 100)}%`, width: `max(2px, ${Math.min(100, (p.total_us / span) * 100)}%)` },
        title: `${p.name}: ${seconds(p.total_us / 1e6)}, self ${seconds(p.self_us / 1e6)}`,
      }, h('span', { class: 'phase-self', style: { width: `${p.total_us ? (p.self_us / p.total_us) * 100 : 0}%` } }))),
    h('span', { class: 'phase-time num' }, seconds(p.total_us / 1e6)));
}

function cacheSection(ctx, row, c) {
  if (!row) {
    return c.cache.length ? section('Caches', h('div', { class: 'cache-verdicts' }, cacheVerdicts(c).map((v) => cacheChip(v.cache, v.outcome)))) : null;
  }
  const metricPairs = Object.entries(row.metrics ?? {});
  return section('Caches',
    h('div', { class: 'cache-verdicts' }, row.caches.map((v) => cacheChip(v.cache, v.outcome,
      ` (${['hit', 'miss', 'bypass', 'disabled'].filter((k) => v[k]).map((k) => `${v[k]} ${k}`).join(', ')})`))),
    row.lookups.length ? dataTable({
      name: 'cache-lookups', maxRows: 10, rows: row.lookups, columns: [
        { key: 'cache', label: 'cache', width: '9em', render: (l) => cacheLabel(l.cache) },
        { key: 'outcome', label: 'outcome', width: '7em', render: (l) => h('span', { class: ['badge', OUTCOME_BADGE[l.outcome] ?? 'st-missing'] }, l.outcome) },
        { key: 'status', label: 'detail', width: '8em' },
        { key: 'time', label: 'time', align: 'right', width: '10em', value: (l) => l.time_saved_ms ?? l.time_taken_ms,
          render: (l) => (l.time_saved_ms != null ? `saved ${seconds(l.time_saved_ms / 1e3)}` : l.time_taken_ms != null ? `took ${seconds(l.time_taken_ms / 1e3)}` : '–') },
        { key: 'reason', label: 'reason / guard', width: 'minmax(12em, 2fr)', value: (l) => l.reason ?? l.guard_expr,
          render: (l) => h('span', { title: l.reason ?? l.guard_expr ?? '' }, l.reason ?? l.guard_expr ?? '') },
        { key: 'key', label: 'key', width: 'minmax(8em, 1fr)', render: (l) => (l.key ? h('span', { class: 'mono', title: l.key }, l.key) : '–') },
        { key: 'components', label: 'key parts', align: 'right', width: '7em', title: 'components of the cache key (in the payload)' },
        { key: 'blob', label: 'payload', width: '7em', render: (l) => (l.blob ? h('a', { href: artifactHref(ctx, { blob: l.blob, name: l.name }, c.compile_id) }, 'view') : '–') },
      ],
    }) : null,
    metricPairs.length ? h('details', { class: 'all-metrics' }, h('summary', null, `Cache counters from compilation_metrics (${metricPairs.length})`),
      facts(metricPairs.map(([k, v]) => [k, count(v)]))) : null);
}

function guardsSection(ctx, g, c) {
  if (!g || !(g.summary || g.trees.length || g.shape.length || g.symbols.length || g.dynamo.length)) return null;
  const s = g.summary;
  const tree = g.trees[g.trees.length - 1] ?? null;
  const treeArtifact = tree ? c.artifacts.find((a) => a.blob === tree.blob) : null;
  const userLine = (r) => (r.user_frame
    ? h('span', { title: `${r.user_frame.file}:${r.user_frame.line} in ${r.user_frame.name}` },
      r.user_frame.loc ? h('code', null, r.user_frame.loc) : null, ' ', h('span', { class: 'muted' }, `${shortPath(r.user_frame.file, 1)}:${r.user_frame.line}`))
    : h('span', { class: 'muted' }, '–'));
  return section('Guards',
    s ? facts([
      ['guards (metrics)', s.guard_count != null ? count(s.guard_count) : null],
      ['shape-env guards', s.shape_env_guard_count != null ? count(s.shape_env_guard_count) : null],
      ['leaf guards in the tree', s.tree_guards ? count(s.tree_guards) : null],
      ['guard latency', s.latency_us != null ? `${s.latency_us} µs` : null],
      ['shape guards added', s.shape_guards ? count(s.shape_guards) : null],
      ['specializations', s.specializations ? count(s.specializations) : null],
      ['symbols', s.backed_symbols + s.unbacked_symbols ? `${s.backed_symbols} backed, ${s.unbacked_symbols} unbacked` : null],
      ['data-dependent', s.data_dependent ? count(s.data_dependent) : null],
    ]) : null,
    tree ? [h('h3', null, `Guard tree (${plural(tree.guards.length, 'leaf guard')})`,
      ' ', h('a', { class: 'small-link', href: artifactHref(ctx, { blob: tree.blob, name: treeArtifact?.name ?? 'dynamo_cpp_guards_str' }, c.compile_id) }, 'raw tree')),
    dataTable({
      name: 'guards', maxRows: 12, rows: tree.guards, columns: [
        { key: 'kind', label: 'kind', width: '13em' },
        { key: 'source', label: 'value', width: 'minmax(10em, 1.2fr)', render: (r) => (r.source ? h('span', { class: 'mono', title: r.source }, r.source) : '–') },
        { key: 'code', label: 'check', width: 'minmax(18em, 3fr)', render: (r) => h('span', { class: 'mono', title: r.code }, r.code) },
        { key: 'user_code', label: 'user code', width: 'minmax(10em, 1.5fr)', render: (r) => (r.user_code ? h('span', { class: 'mono', title: `${r.user_code}\n${r.location ?? ''}` }, r.user_code) : h('span', { class: 'muted' }, r.location ?? '–')) },
      ],
    })] : null,
    g.shape.length ? [h('h3', null, `Shape guards (${g.shape.length})`), dataTable({
      name: 'shape-guards', maxRows: 10, rows: g.shape, columns: [
        { key: 'expr', label: 'guard', width: 'minmax(14em, 2fr)', render: (r) => h('span', { class: 'mono', title: r.expr ?? '' }, r.expr ?? '–') },
        { key: 'user', label: 'added by', width: 'minmax(16em, 3fr)', value: (r) => r.user_frame?.loc ?? '', render: userLine },
        { key: 'kind', label: 'entry', width: '10em' },
      ],
    })] : null,
    g.specializations.length ? [h('h3', null, `Specializations (${g.specializations.length})`), dataTable({
      name: 'specializations', maxRows: 8, rows: g.specializations, columns: [
        { key: 'symbol', label: 'symbol', width: '7em', render: (r) => h('span', { class: 'mono' }, r.symbol ?? '–') },
        { key: 'value', label: 'value', width: '7em', render: (r) => h('span', { class: 'mono' }, r.value) },
        { key: 'sources', label: 'sources', width: 'minmax(12em, 2fr)', value: (r) => r.sources.join(', '), render: (r) => h('span', { class: 'mono' }, r.sources.join(', ')) },
        { key: 'reason', label: 'reason', width: 'minmax(10em, 1.5fr)' },
        { key: 'user', label: 'where', width: 'minmax(14em, 2fr)', value: (r) => r.user_frame?.loc ?? '', render: userLine },
      ],
    })] : null,
    g.symbols.length ? [h('h3', null, `Symbols (${g.symbols.length})`), dataTable({
      name: 'symbols', maxRows: 8, rows: g.symbols, columns: [
        { key: 'symbol', label: 'symbol', width: '7em', render: (r) => h('span', { class: 'mono' }, r.symbol ?? '–') },
        { key: 'source', label: 'source', width: 'minmax(12em, 2fr)', render: (r) => h('span', { class: 'mono' }, r.source ?? (r.unbacked ? 'unbacked' : '–')) },
        { key: 'hint', label: 'hint', align: 'right', width: '6em' },
        { key: 'range', label: 'range', width: '10em', render: (r) => h('span', { class: 'mono' }, r.range ?? '–') },
        { key: 'user', label: 'where', width: 'minmax(14em, 2fr)', value: (r) => r.user_frame?.loc ?? '', render: userLine },
      ],
    })] : null,
    g.dataDependent.length ? [h('h3', null, `Data-dependent guards (${g.dataDependent.length})`), dataTable({
      name: 'data-dependent', maxRows: 8, rows: g.dataDependent, columns: [
        { key: 'kind', label: 'entry', width: '16em' },
        { key: 'expr', label: 'expression', width: 'minmax(14em, 2fr)', render: (r) => h('span', { class: 'mono', title: r.expr ?? '' }, r.expr ?? '–') },
        { key: 'result', label: 'result', width: '7em' },
        { key: 'user', label: 'where', width: 'minmax(14em, 2fr)', value: (r) => r.user_frame?.loc ?? '', render: userLine },
      ],
    })] : null,
    g.dynamo.length ? [h('h3', null, `Dynamo guards (${g.dynamo.length})`), dataTable({
      name: 'dynamo-guards', maxRows: 10, rows: g.dynamo, columns: [
        { key: 'code', label: 'guard', width: 'minmax(20em, 3fr)', render: (r) => h('span', { class: 'mono', title: r.code }, r.code) },
        { key: 'user', label: 'where', width: 'minmax(14em, 2fr)', value: (r) => r.user_frame?.loc ?? '', render: userLine },
      ],
    })] : null);
}

function inputsSection(rows) {
  if (!rows.length) return null;
  const dims = (r, key) => {
    const t = r.tensor;
    if (!t?.[key]) return '–';
    return `[${t[key].map((v, i) => (key === 'size' && r.size_symbols[i] ? `${r.size_symbols[i]}=${v}` : v)).join(', ')}]`;
  };
  return section(`Inputs (${rows.length})`,
    dataTable({
      name: 'inputs', maxRows: 12, rows, columns: [
        { key: 'sources', label: 'source', width: 'minmax(16em, 3fr)', value: (r) => r.sources.join(', '),
          render: (r) => (r.sources.length ? h('span', { class: 'mono', title: r.sources.join('\n') }, r.sources.join(', ')) : h('span', { class: 'muted' }, `tensor ${r.id} (no source)`)) },
        { key: 'size', label: 'size', width: 'minmax(9em, 1.2fr)', value: (r) => dims(r, 'size'),
          render: (r) => h('span', { class: ['mono', r.size_symbols.some(Boolean) && 'dynamic'], title: r.size_symbols.some(Boolean) ? 'symbolic dimensions as symbol=example' : null }, dims(r, 'size')) },
        { key: 'stride', label: 'stride', width: 'minmax(8em, 1fr)', value: (r) => dims(r, 'stride'), render: (r) => h('span', { class: 'mono' }, dims(r, 'stride')) },
        { key: 'dtype', label: 'dtype', width: '9em', value: (r) => r.tensor?.dtype?.replace(/^torch\./, '') },
        { key: 'device', label: 'device', width: '6em', value: (r) => r.tensor?.device },
        { key: 'kind', label: 'kind', width: 'minmax(8em, 1fr)', value: (r) => inputKind(r) },
        { key: 'storage', label: 'storage', align: 'right', width: '7em', value: (r) => r.storage?.size, render: (r) => (typeof r.storage?.size === 'number' ? bytes(r.storage.size) : r.storage?.size ?? '–') },
      ],
    }),
    note('Sizes are the example sizes; a symbol (s77=10) marks a dimension that is dynamic in this compile.'));
}

function inputKind(r) {
  const t = r.tensor;
  if (!t) return '';
  return [t.is_parameter && 'parameter', t.requires_grad && !t.is_parameter && 'requires grad', t.is_view && 'view', ...t.flags]
    .filter(Boolean).join(', ');
}

function stackSection(stack, stackId, replaced, c) {
  if (!stack) {
    return section('Stack', empty(c.status === 'compiled_autograd_capture'
      ? 'A compiled-autograd capture logs no dynamo_start stack (the compiles of its graph do).'
      : 'No dynamo_start stack was logged for this compile.'));
  }
  const lastUser = stack.map((f) => isFramework(f?.file)).lastIndexOf(false);
  return section('Stack that triggered the compile',
    replaced && replaced.stack === stackId ? note(`Logged by ${replaced.compile_id}, the attempt this one restarted.`) : null,
    stackList(stack, { library: (f) => isFramework(f?.file), marked: lastUser }),
    note('Outermost call first. Frames inside torch and site-packages are dimmed; the last user frame is marked.'));
}

function isFramework(file) {
  return !file || /\/(site-packages|dist-packages)\/|\/torch\/(_dynamo|nn|_functorch|_inductor)\//.test(file);
}

function artifactsSection(ctx, c, runnables) {
  if (!c.artifacts.length) return section('Artifacts', empty('This compile logged no artifacts.'));
  const runnableSeqs = new Set((runnables?.files ?? []).filter((f) => f.compile_id === c.compile_id || f.dir === c.dir).map((f) => f.artifact.seq));
  const total = c.artifacts.reduce((s, a) => s + (a.size ?? 0), 0);
  const payloadless = c.artifacts.filter((a) => a.no_payload).length;
  const runnable = h('span', { class: 'badge runnable', title: 'a program you can download and run' }, 'runnable');
  return section(`Artifacts (${c.artifacts.length}, ${bytes(total)})`,
    payloadless ? note(`${plural(payloadless, 'artifact was', 'artifacts were')} logged without a payload (marked "no payload"): `,
      'torch named them but wrote no content, as it does for some on a cache hit.') : null,
    c.artifacts.some((a) => a.graph) ? note('forward / backward / inference: the AOT graph an artifact was produced for.') : null,
    dataTable({
      name: 'artifacts', maxRows: 20, rows: c.artifacts,
      columns: artifactColumns(ctx, c.compile_id, {
        nameWidth: 'minmax(20em, 4fr)', kindWidth: 'minmax(9em, 1.5fr)',
        extra: (a) => (runnableSeqs.has(a.seq) ? runnable.cloneNode(true) : null),
      }),
    }));
}
