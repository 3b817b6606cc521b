// pages/overview.js: the landing page. First the compilation of the selected stream (compile
// count, compile time, the slowest compiles, each recompiled frame with its reason, failures),
// then what needs attention (failures, recompile storms, graph breaks, rank divergence, log
// problems), what was read, and, folded, how it is stored. Reads the manifest and only small
// tables, to keep the first paint cheap on big bundles: the selected stream's compile_summary,
// failures and recompiles, then, with one stream, its graph_breaks, with several, the cross-rank
// rank_findings (the same requests at 4 ranks as at 1,000).

import { h, section, facts, count, bytes, seconds, plural, note, dataTable, code, statusBadge } from '../dom.js';

/** torch's default `recompile_limit` (`cache_size_limit`): past it dynamo stops recompiling. */
const STORM_COMPILES = 8;

export async function render(ctx) {
  const m = ctx.manifest;
  const streams = m.streams;
  const [[warnings, failuresOf, perStream], summary] = await Promise.all([findings(ctx),
    ctx.stream?.tables?.compile_summary ? ctx.table('compile_summary') : null]);
  ctx.expose('warnings', warnings.map((w) => w.text));
  ctx.expose('streams', streams.map((s) => ({ id: s.id, failed: failuresOf.get(s.id)?.failed ?? 0, restarts: failuresOf.get(s.id)?.restarts ?? 0 })));

  const c = m.counts;
  return h('div', null,
    h('h1', null, 'Overview'),
    compilationSection(ctx, summary, perStream.find((x) => x.s.id === ctx.stream?.id)),
    warnings.length
      ? h('section', { class: 'card warnings', 'aria-label': 'Warnings' },
        h('h2', null, 'Needs attention'),
        h('ul', { class: 'warning-list' }, warnings.map((w) => h('li', { class: ['warning', `sev-${w.severity}`] },
          w.link ? h('a', { href: w.link }, w.parts ?? w.text) : w.parts ?? w.text))))
      : h('section', { class: 'card ok-box' }, h('h2', null, 'No problems found'),
        note('No failures, recompile storms, graph breaks, rank divergence or log problems.')),
    h('div', { class: 'grid-2' },
      section('Inputs',
        dataTable({
          name: 'inputs', columns: [
            { key: 'path', label: 'log', width: 'minmax(12em, 3fr)', render: (r) => h('span', { title: r.path }, r.path.split('/').pop()) },
            { key: 'size', label: 'size', align: 'right', render: (r) => bytes(r.size) },
            { key: 'lines', label: 'lines', align: 'right', render: (r) => count(r.lines) },
            { key: 'compression', label: 'compression' },
          ], rows: m.inputs, maxRows: 8,
        }),
        m.skipped?.length ? note(`${plural(m.skipped.length, 'file')} skipped: `,
          m.skipped.slice(0, 5).map((s, i) => [i ? '; ' : '', code(s.path), ` (${s.reason})`]),
          m.skipped.length > 5 ? '; …' : '') : null),
      section('Totals', facts([
        ['log entries', count(c.entries)],
        ['log lines', count(c.lines)],
        ['input', bytes(c.input_bytes)],
      ]))),
    section(streams.length > 1 ? `Streams (${streams.length})` : 'Stream',
      dataTable({
        name: 'streams', columns: [
          { key: 'id', label: 'stream', render: (s) => h('a', { href: ctx.href('compiles', { s: s.id }) }, ctx.streamLabel(s)) },
          { key: 'entries', label: 'entries', align: 'right', render: (s) => count(s.entries) },
          { key: 'compile_ids', label: 'compile ids', align: 'right' },
          // Counted apart from the failures table: its rows are failures and restarts together.
          { key: 'failed', label: 'failed compiles', align: 'right', width: 'minmax(9.5em, 1fr)',
            title: 'compiles that failed (status failed); restarts are counted apart', value: (s) => failuresOf.get(s.id)?.failed ?? 0 },
          { key: 'restarts', label: 'restarts', align: 'right', title: 'times Dynamo restarted tracing a frame (not failures)',
            value: (s) => failuresOf.get(s.id)?.restarts ?? 0 },
          { key: 'payload_bytes', label: 'payloads', align: 'right', render: (s) => bytes(s.payload_bytes) },
          { key: 'first_timestamp', label: 'first entry', width: 'minmax(13em, 1.5fr)' },
          { key: 'last_timestamp', label: 'last entry', width: 'minmax(13em, 1.5fr)' },
          { key: 'pid', label: 'pid', align: 'right' },
        ], rows: streams, maxRows: 12,
      })),
    h('details', { class: 'card storage' },
      h('summary', null, h('h2', null, 'Storage'), h('span', { class: 'muted storage-line' }, ` ${storageLine(c)}`)),
      facts([
        ['bundle', h('span', { title: 'every file of the bundle but manifest.json, manifest.lite.json.zst and the viewer' },
          `${bytes(c.bundle_bytes)} (all files but the manifests and the viewer)`)],
        ['payloads', `${bytes(c.payload_bytes)} in ${plural(c.unique_blobs, 'unique blob')}`],
        ['payloads stored as', `${bytes(c.packed_bytes)} of zstd packs`],
        ['duplicates saved', bytes(c.dedup_saved_bytes)],
        c.cross_input_saved_bytes ? ['shared across ranks', bytes(c.cross_input_saved_bytes)] : [null, null],
        ['format', `${m.format} v${m.format_version}, by ${m.generator.name} ${m.generator.version}`],
      ])),
    diagnosticsSection(ctx));
}

/**
 * The storage line: the logs against the whole bundle (`bundle_bytes`: every file but the two
 * manifests and the viewer).
 */
function storageLine(c) {
  return `${bytes(c.input_bytes)} of logs stored as a ${bytes(c.bundle_bytes)} bundle`;
}

/** How many slow compiles the overview lists (compile_summary holds up to 10). */
const SLOWEST_SHOWN = 5;
/** How many failures the overview lists. */
const FAILURES_SHOWN = 3;

/** The first non-blank line of a logged text, its whitespace collapsed. */
const oneLine = (text) => (String(text ?? '').split('\n').find((l) => l.trim()) ?? '').replace(/\s+/g, ' ').trim();
/** A failure reason on one line: its first 300 characters, whitespace collapsed (its first line
 * is often only "backend='x' raised:"). */
const reasonLine = (text) => String(text ?? '').slice(0, 300).replace(/\s+/g, ' ').trim();

/**
 * The lead card: the selected stream's compiles (compile_summary), its recompiled frames
 * with the guard that failed first (recompiles) and its failures (failures). `loaded`: that
 * stream's tables from `findings`.
 */
function compilationSection(ctx, summary, loaded) {
  const m = ctx.manifest;
  const s = ctx.stream;
  if (!s) return null;
  const failures = (loaded?.failures?.failures ?? []).filter((f) => f.kind === 'failure');
  const frames = loaded?.recompiles?.frames ?? [];
  ctx.expose('compilation', {
    stream: s.id,
    compiles: summary?.compiles ?? null,
    totalS: summary?.total_s ?? null,
    forwardS: summary?.forward_s ?? null,
    backwardS: summary?.backward_s ?? null,
    backwardInForwardS: summary?.backward_in_forward_s ?? null,
    timed: summary?.timed ?? null,
    slowest: (summary?.slowest_compiles ?? []).slice(0, SLOWEST_SHOWN).map((x) => x.compile_id),
    recompiled: frames.map((f) => ({ frame: frameKey(f), compiles: f.compiles.length, reason: firstReason(f) })),
    failed: failures.map((f) => f.compile_id),
  });
  const title = m.streams.length > 1 ? `Compilation of ${ctx.streamLabel(s)}` : 'Compilation';
  return h('section', { class: 'card compilation', 'aria-label': 'Compilation' },
    h('h2', null, title),
    summary ? statTiles(summary, failures.length, frames.length)
      : note('No compile in this stream.'),
    m.streams.length > 1 ? note('Pick another stream (rank) in the header.') : null,
    summary?.slowest_compiles.length ? slowestList(ctx, summary) : null,
    frames.length ? recompiledList(ctx, frames) : null,
    failures.length ? failureList(ctx, failures) : null);
}

/** The headline numbers. */
function statTiles(summary, failed, recompiled) {
  const tile = (key, value, label, title) => h('div', { class: 'stat', dataset: { stat: key }, title },
    h('span', { class: 'stat-value' }, value), h('span', { class: 'stat-label' }, label));
  return h('div', { class: 'stats' },
    // "compiles" here are compile ids, attempts included (docs/definitions.md); the timed ones
    // are those the Compile time tab and the Ranks page count.
    tile('compiles', count(summary.compiles), summary.compiles === 1 ? 'compile id' : 'compile ids',
      `Every compile id, restarted attempts included: ${count(summary.timed)} of them timed (a compile time above 0)`),
    tile('time', seconds(summary.total_s), `compiling (${count(summary.timed)} timed)`,
      `forward ${seconds(summary.forward_s)} + lazily compiled backward ${seconds(summary.backward_s)} (each compile's total, as on the Compile time tab)` +
      (summary.backward_in_forward_s != null ? `; the forward includes ${seconds(summary.backward_in_forward_s)} of backward compiled inside it` : '')),
    summary.backward_s ? tile('split', `${seconds(summary.forward_s)} + ${seconds(summary.backward_s)}`, 'forward + lazy backward',
      summary.backward_in_forward_s != null ? `the forward includes ${seconds(summary.backward_in_forward_s)} of backward compiled inside it` : undefined) : null,
    tile('recompiled', count(recompiled), recompiled === 1 ? 'frame recompiled' : 'frames recompiled'),
    tile('failed', count(failed), failed === 1 ? 'compile failed' : 'compiles failed'));
}

function slowestList(ctx, summary) {
  const rows = summary.slowest_compiles.slice(0, SLOWEST_SHOWN);
  return [h('h3', null, 'Slowest compiles'),
    h('ol', { class: 'overview-list slowest' }, rows.map((x) => h('li', null,
      h('a', { href: ctx.href('compile', { id: x.compile_id }), class: 'mono' }, x.compile_id), ' ',
      h('b', null, seconds(x.total_s)),
      x.backward_s ? h('span', { class: 'muted' }, ` (forward ${seconds(x.forward_s ?? 0)} + backward ${seconds(x.backward_s)})`) : null,
      x.function ? [' ', h('code', null, x.function)] : null,
      x.location ? h('span', { class: 'muted', title: x.location }, ` ${x.location.split('/').pop()}`) : null,
      x.status !== 'ok' ? [' ', statusBadge(x.status)] : null)))];
}

/** A frame's key in the Recompiles view's URL (as pages/recompiles.js makes it). */
function frameKey(f) {
  return f.compiled_autograd_id != null ? `!${f.compiled_autograd_id}/${f.frame_id}` : String(f.frame_id);
}

/** Why a frame first recompiled: the guard of its first compile that failed, on one line. */
function firstReason(f) {
  const step = f.compiles.find((x) => x.reasons.length);
  return step ? oneLine(step.reasons[step.reasons.length - 1]) : null;
}

function recompiledList(ctx, frames) {
  return [h('h3', null, 'Recompiled frames'),
    h('ul', { class: 'overview-list recompiled' }, frames.map((f) => h('li', null,
      h('a', { href: ctx.href('recompiles', { frame: frameKey(f) }) }, h('code', null, f.co_name ?? `frame ${f.frame_id}`)),
      f.location ? h('span', { class: 'muted', title: f.location }, ` ${f.location.split('/').pop()}`) : null,
      ` compiled ${f.compiles.length} times`,
      firstReason(f) ? [': ', h('span', { class: 'one-line mono', title: firstReason(f) }, firstReason(f))] : null)))];
}

function failureList(ctx, failures) {
  return [h('h3', null, plural(failures.length, 'failed compile')),
    h('ul', { class: 'overview-list failed' }, failures.slice(0, FAILURES_SHOWN).map((f) => h('li', null,
      h('a', { href: ctx.href('compile', { id: f.compile_id }), class: 'mono' }, f.compile_id), ' ',
      h('b', null, f.failure_type), f.reason ? [': ', h('span', { class: 'one-line', title: f.reason }, reasonLine(f.reason))] : null))),
    failures.length > FAILURES_SHOWN ? note(h('a', { href: ctx.href('failures') }, `All ${failures.length} failures`), ' on the Failures tab.') : null];
}

/**
 * Warnings from the manifest, the small tables and the cross-rank tables, worst first; each
 * stream's failed compiles and restarts, by stream id; and the selected stream's failures and
 * recompiles tables (the lead card's), as [{s, failures, recompiles}].
 *
 * With several streams, what each stream needs attention for comes from the cross-rank table
 * rank_findings: one request whatever the number of ranks, where reading every stream's
 * failures, recompiles and graph_breaks makes three per stream. Streams with the same finding
 * share one warning ("ranks 0–999: 1 frame recompiled").
 */
async function findings(ctx) {
  const m = ctx.manifest;
  const multi = m.streams.length > 1;
  const warnings = [];
  const add = (severity, text, link, parts) => warnings.push({ severity, text, link, parts });
  // Every bundle of several streams has rank_findings (written whatever the streams hold).
  const summarised = multi;
  const read = summarised ? m.streams.filter((s) => s.id === ctx.stream?.id) : m.streams;
  const tableOf = (s, name) => (s.tables?.[name] ? ctx.table(name, s.id) : null);
  const [perStream, rf, common] = await Promise.all([
    Promise.all(read.map(async (s) => {
      const [failures, recompiles, breaks] = await Promise.all([tableOf(s, 'failures'), tableOf(s, 'recompiles'),
        summarised ? null : tableOf(s, 'graph_breaks')]);
      return { s, failures, recompiles, breaks };
    })),
    summarised ? ctx.crossTable('rank_findings') : null,
    // Loaded only for bundles of several ranks: a single stream's first paint does not fetch it.
    multi ? import('../ranks-common.js') : null]);
  const rows = rf ? rf.streams.map((r) => ({
    stream: r.stream, failed: r.failed, restarts: r.restarts, storms: r.storms,
    recompiled: r.recompiled_frames - r.storms.length, breaks: r.graph_breaks, groups: r.graph_break_groups,
  })) : perStream.map(({ s, failures, recompiles, breaks }) => {
    const frames = recompiles?.frames ?? [];
    const storms = frames.filter((f) => f.compiles.length >= STORM_COMPILES).map((f) => ({ ...f, compiles: f.compiles.length }));
    return {
      stream: s.id, failed: failures?.failed ?? 0, restarts: failures?.restarts ?? 0, storms,
      recompiled: frames.length - storms.length, breaks: breaks?.total ?? 0, groups: breaks?.breaks.length ?? 0,
    };
  });
  const label = common ? common.rankLabeller(m) : (id) => id;
  const many = (streams) => common.ranksText(streams, label);
  // The same finding on several streams is one warning, linked to the first of them.
  const shared = new Map();
  const found = (severity, text, page, params, stream) => {
    const key = JSON.stringify([severity, text, page, params]);
    if (!shared.has(key)) shared.set(key, { severity, text, page, params, streams: [] });
    shared.get(key).streams.push(stream);
  };
  for (const r of rows) {
    if (r.failed) found('error', `${plural(r.failed, 'compile')} failed`, 'failures', {}, r.stream);
    if (r.restarts) found('info', plural(r.restarts, 'restart'), 'failures', {}, r.stream);
    for (const f of r.storms) {
      found('warn', `recompile storm: ${f.co_name ?? `frame ${f.frame_id}`} compiled ${f.compiles} times` +
        (f.location ? ` (${f.location})` : ''), 'recompiles', { frame: frameKey(f) }, r.stream);
    }
    if (r.recompiled) found('info', `${plural(r.recompiled, 'frame')} recompiled`, 'recompiles', {}, r.stream);
    if (r.breaks) found('info', `${plural(r.breaks, 'graph break')} (${plural(r.groups, 'distinct reason')})`, 'graph-breaks', {}, r.stream);
  }
  for (const w of shared.values()) {
    const where = !multi ? '' : `${w.streams.length === 1 ? ctx.streamLabel({ id: w.streams[0] }) : many(w.streams)}: `;
    add(w.severity, `${where}${w.text}`, ctx.href(w.page, { s: w.streams[0], ...w.params }));
  }
  if (m.cross_rank) await crossRankFindings(ctx, add, common, rf, many);
  if (m.diagnostics.total) {
    add('warn', `${plural(m.diagnostics.total, 'log problem')}: ${Object.entries(m.diagnostics.by_kind)
      .map(([k, n]) => `${n} ${k}`).join(', ')}`, '#diagnostics');
  }
  const order = { error: 0, warn: 1, info: 2 };
  warnings.sort((a, b) => order[a.severity] - order[b.severity]);
  const failuresOf = new Map(rows.map((r) => [r.stream, { failed: r.failed, restarts: r.restarts }]));
  return [warnings, failuresOf, perStream];
}

/**
 * Divergence between ranks: from rank_findings when the bundle has it (`rf`), else from the
 * cross-rank tables it summarises. `many(streams)` names many streams in a short text (ranksText).
 */
async function crossRankFindings(ctx, add, { rankLabeller, alignmentFindings, compileText }, rf, many) {
  const x = ctx.manifest.cross_rank;
  const label = rankLabeller(ctx.manifest);
  // A few ranks are named one by one ("rank 0, rank 2"), many in ranges ("ranks 0–61, 63").
  const few = (streams) => (streams.length <= 6 ? streams.map(label).join(', ') : many(streams));
  const groups = (gs) => gs.map((g) => few(g.streams)).join(' vs ');
  let found;
  if (rf) {
    found = { alignment: rf.alignment, schedules: rf.schedules, differ: rf.schedules_differ, time: rf.compile_time };
  } else {
    const [alignment, schedules, imbalance] = await Promise.all(
      ['compile_alignment', 'collective_schedules', 'compile_time_imbalance'].map((n) => (x.tables?.[n] ? ctx.crossTable(n) : null)));
    const differing = (schedules?.compiles ?? []).filter((d) => d.differs);
    found = {
      alignment: alignment && { ...alignment, groups: alignment.groups.map((g) => g.group) },
      schedules: differing, differ: differing.length, time: imbalance,
    };
  }
  const { alignment, schedules, differ, time } = found;
  // Code only some ranks compiled (which shifts their later frame ids), and ambiguous matches.
  for (const f of alignmentFindings(alignment, label)) {
    if (f.kind === 'partial_code') add('warn', f.text, ctx.href('ranks', { sec: 'grid' }), f.parts);
    else add('info', f.text, ctx.href('ranks', { sec: 'groups' }), f.parts);
  }
  if (alignment?.diverges) add('warn', `Ranks compiled different graphs: ${groups(alignment.groups)}`, ctx.href('ranks'));
  for (const d of schedules) {
    add('error', `Collective schedules differ on ${compileText(d.compile, label)}: ${groups(d.variants)}`, ctx.href('ranks', { sec: 'schedules' }));
  }
  if (differ > schedules.length) {
    add('error', `Collective schedules differ on ${plural(differ - schedules.length, 'more compile')}`, ctx.href('ranks', { sec: 'schedules' }));
  }
  // rank_differ's headline (rank_findings): real differences apart from the same up to ids.
  const artifacts = rf?.artifacts;
  if (artifacts?.differ) {
    add('warn', `${plural(artifacts.differ, 'artifact')} ${artifacts.differ === 1 ? 'differs' : 'differ'} between ranks` +
      (artifacts.same_up_to_ids ? ` (${count(artifacts.same_up_to_ids)} more are the same up to ids: not differences)` : ''), ctx.href('rank-diff'));
  }
  if (time?.max_over_min >= 2) {
    add('warn', `Compile time imbalance: ${few(time.slowest)} spent ` +
      `${time.max_over_min.toFixed(1)}x as long compiling as the fastest rank`, ctx.href('ranks'));
  }
}

/** How many log problems the overview loads by itself; more wait for a click (diagnostics.jsonl is
 * about 230 bytes a problem: a job whose 1,000 ranks each logged a few would weigh on first paint). */
const DIAGNOSTICS_SHOWN_AT_ONCE = 200;

function diagnosticsSection(ctx) {
  const d = ctx.manifest.diagnostics;
  const body = h('div', null, note('The logs parsed cleanly.'));
  const load = () => {
    body.replaceChildren(h('p', { class: 'loading' }, 'Loading diagnostics…'));
    (async () => {
      const rows = [];
      for await (const diag of ctx.bundle.diagnostics()) rows.push(diag);
      ctx.expose('diagnostics', rows.length);
      body.replaceChildren(dataTable({
        name: 'diagnostics', columns: [
          { key: 'file', label: 'file', width: 'minmax(10em, 2fr)' },
          { key: 'line', label: 'line', align: 'right', width: '6em' },
          { key: 'kind', label: 'kind', width: '10em' },
          { key: 'message', label: 'problem', width: 'minmax(16em, 4fr)' },
        ], rows, maxRows: 10,
      }));
    })().catch((e) => body.replaceChildren(h('p', { class: 'error' }, String(e.message ?? e))));
  };
  if (d.total > DIAGNOSTICS_SHOWN_AT_ONCE) {
    body.replaceChildren(note(`${Object.entries(d.by_kind).map(([k, n]) => `${count(n)} ${k}`).join(', ')}. `,
      h('button', { type: 'button', class: 'load-diagnostics', on: { click: load } }, `Show all ${count(d.total)}`)));
  } else if (d.total) {
    load();
  }
  return h('section', { class: 'card', id: 'diagnostics' }, h('h2', null, `Log problems (${count(d.total)})`), body);
}
