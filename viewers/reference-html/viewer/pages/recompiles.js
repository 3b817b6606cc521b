// pages/recompiles.js: why frames recompiled (`#/recompiles?s=&frame=&id=`). Reads the
// `recompiles` table (docs/tables/recompiles.md): the frames compiled more than once, most
// compiles first; for the selected frame its sequence of compiles with the guard that failed; for
// the selected compile (`id`, default the frame's first recompile) what changed against the
// previous compile: guards added/removed and a diff of every changed artifact, loaded when opened.

import { h, section, note, empty, plural, count, statusBadge, dataTable, code } from '../dom.js';
import { diffText, diffView } from '../diff.js';
import { firstLine, keepInUrl, lazyDetails, pathCell, pill, reasonSource } from '../analysis.js';

/** torch's default `recompile_limit` (`cache_size_limit`): past it dynamo stops recompiling. */
const RECOMPILE_LIMIT = 8;

/** The key of a frame in the URL: its frame id, prefixed by the compiled autograd id if any. */
function frameKey(f) {
  return f.compiled_autograd_id != null ? `!${f.compiled_autograd_id}/${f.frame_id}` : String(f.frame_id);
}

/** "0/0: tensor 'x' size mismatch…" → {entry: "0/0", guard: "tensor 'x' size mismatch…"}. */
function splitReason(reason) {
  const m = /^(!?[\d/_]+):\s([\s\S]*)$/.exec(String(reason));
  return m ? { entry: m[1], guard: m[2] } : { entry: null, guard: String(reason) };
}

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const table = await ctx.table('recompiles');
  const frames = table?.frames ?? [];
  if (!frames.length) {
    return h('div', null, h('h1', null, 'Recompiles'),
      section('No recompiles', empty(table
        ? 'Every frame in this stream was compiled once: no guard ever failed.'
        : 'This stream has no recompiles table (it logged no compiles). The Compiles tab lists what was compiled.')));
  }

  // The frame: `frame` param, else the one holding `id`, else the one with the most compiles.
  const wantFrame = ctx.params.get('frame');
  const wantId = ctx.params.get('id');
  const frame = frames.find((f) => frameKey(f) === wantFrame) ??
    frames.find((f) => String(f.frame_id) === wantFrame) ??
    frames.find((f) => f.compiles.some((c) => c.compile_id === wantId)) ?? frames[0];
  let selected = frame.compiles.find((c) => c.compile_id === wantId) ?? frame.compiles.find((c) => c.changes) ?? frame.compiles[0];

  const diffs = {};
  const exposeSelection = () => ctx.expose('recompiles', {
    frames: frames.map((f) => ({ frame: frameKey(f), co_name: f.co_name, compiles: f.compiles.length })),
    frame: frameKey(frame),
    compiles: frame.compiles.map((c) => c.compile_id),
    selected: selected.compile_id,
    previous: selected.changes?.previous ?? null,
    reasons: selected.reasons,
    reasonsFrom: selected.reasons_from ?? null,
    reasonsLoggedOn: selected.reasons_logged_on ?? null,
    guardsAdded: selected.changes?.guards_added ?? [],
    guardsRemoved: selected.changes?.guards_removed ?? [],
    changed: selected.changes?.changed.map((c) => c.name) ?? [],
    added: selected.changes?.added ?? [],
    removed: selected.changes?.removed ?? [],
    unchanged: selected.changes?.unchanged ?? [],
  });
  ctx.expose('diffs', diffs);
  exposeSelection();

  const sequenceBox = h('div');
  const changeBox = h('div');
  const select = (c) => {
    selected = c;
    keepInUrl(ctx, { frame: frameKey(frame), id: c.compile_id });
    for (const key of Object.keys(diffs)) delete diffs[key];
    exposeSelection();
    drawSequence();
    changeBox.replaceChildren(changeCard(ctx, frame, selected, diffs));
  };
  const drawSequence = () => sequenceBox.replaceChildren(sequenceTable(ctx, frame, selected, select));
  drawSequence();
  changeBox.replaceChildren(changeCard(ctx, frame, selected, diffs));

  const totalRecompiles = frames.reduce((n, f) => n + f.compiles.length - 1, 0);
  return h('div', null,
    h('h1', null, 'Recompiles'),
    section(`${plural(frames.length, 'frame')} recompiled, ${plural(totalRecompiles, 'recompile')}`,
      note('Each recompile happened because a guard of every earlier compile of the frame failed. ',
        'The frames with the most compiles come first; pick one to see its compiles.'),
      framesTable(ctx, frames, frame)),
    h('section', { class: 'card' },
      h('h2', null, frame.co_name ?? `frame ${frame.frame_id}`, ' ',
        frame.location ? h('span', { class: 'an-sub' }, frame.location) : null, ' ',
        pill(plural(frame.compiles.length, 'compile')), ' ',
        frame.compiles.length >= RECOMPILE_LIMIT
          ? pill('recompile storm', 'del', `torch's default recompile_limit is ${RECOMPILE_LIMIT}: past it, dynamo stops compiling this frame and runs it eagerly`)
          : null),
      note('Click a compile to see what changed against the one before it.'),
      sequenceBox),
    changeBox);
}

/** The frames that recompiled; a row links to its sequence of compiles. */
function framesTable(ctx, frames, current) {
  const link = (f) => ctx.href('recompiles', { frame: frameKey(f) });
  return dataTable({
    name: 'recompile-frames',
    rows: frames,
    maxRows: 8,
    onRowClick: (f) => { location.hash = link(f); },
    columns: [
      { key: 'co_name', label: 'function', width: 'minmax(10em, 1.2fr)', value: (f) => f.co_name ?? '',
        render: (f) => h('a', { href: link(f), class: f === current ? 'an-current' : null }, f === current ? '▸ ' : '', f.co_name ?? `frame ${f.frame_id}`) },
      { key: 'location', label: 'location', width: 'minmax(14em, 2fr)', render: (f) => pathCell(f.location, 34) },
      { key: 'compiles', label: 'compiles', align: 'right', width: '7em', value: (f) => f.compiles.length },
      { key: 'failed', label: 'failed', align: 'right', width: '6em', value: (f) => f.compiles.filter((c) => c.status === 'failed').length || null },
      { key: 'reason', label: 'last recompile because', width: 'minmax(18em, 3fr)',
        value: (f) => firstLine(splitReason(f.compiles[f.compiles.length - 1].reasons[0] ?? '').guard),
        render: (f) => h('span', { class: 'mono', title: f.compiles[f.compiles.length - 1].reasons[0] ?? '' },
          firstLine(splitReason(f.compiles[f.compiles.length - 1].reasons[0] ?? '').guard)) },
    ],
  });
}

/** A frame's compiles in order, with the failing guard (against the most recent entry). */
function sequenceTable(ctx, frame, selected, select) {
  return dataTable({
    name: 'recompile-sequence',
    rows: frame.compiles.map((c, i) => ({ ...c, n: i + 1, step: c })),
    maxRows: 12,
    onRowClick: (r) => select(r.step),
    columns: [
      { key: 'n', label: '#', align: 'right', width: '3.5em',
        render: (r) => h('span', { class: r.step === selected ? 'an-current' : null }, r.step === selected ? '▸ ' : '', r.n) },
      { key: 'compile_id', label: 'compile', width: '7em',
        render: (r) => h('a', { href: ctx.href('compile', { id: r.compile_id }), on: { click: (e) => e.stopPropagation() } }, r.compile_id) },
      { key: 'status', label: 'status', width: '9em', render: (r) => statusBadge(r.status) },
      { key: 'reason', label: 'recompiled because (failed guard)', width: 'minmax(20em, 4fr)',
        value: (r) => (r.reasons.length ? firstLine(r.reasons[0]) : ''),
        render: (r) => (r.reasons.length
          ? h('span', { class: 'mono', title: r.reasons[0] }, firstLine(r.reasons[0]))
          : h('span', { class: 'an-muted' }, r.changes ? 'no reason logged' : 'first compile')) },
      { key: 'reasons', label: 'reasons', align: 'right', width: '7em', title: 'recompile reasons: one per earlier compile', value: (r) => r.reasons.length || null },
      { key: 'changes', label: 'guards', align: 'right', width: '6em', title: 'guards added / removed against the previous compile',
        value: (r) => (r.changes ? r.changes.guards_added.length + r.changes.guards_removed.length : null),
        render: (r) => (r.changes ? h('span', null, h('span', { class: 'add-count' }, `+${r.changes.guards_added.length}`), ' ',
          h('span', { class: 'del-count' }, `−${r.changes.guards_removed.length}`)) : '') },
      { key: 'artifacts', label: 'artifacts', align: 'right', width: '7em', title: 'artifacts changed against the previous compile',
        value: (r) => r.changes?.changed.length ?? null },
    ],
  });
}

/** What changed at compile `c` against the previous compile of the frame. */
function changeCard(ctx, frame, c, diffs) {
  const ch = c.changes;
  const idLink = (id) => h('a', { href: ctx.href('compile', { id }) }, id);
  if (!ch) {
    return h('section', { class: 'card', dataset: { change: c.compile_id } },
      h('h2', null, idLink(c.compile_id), ' ', statusBadge(c.status)),
      empty(`${c.compile_id} is the first compile of ${frame.co_name ?? 'this frame'}: there is nothing to compare it with. Pick a later compile above.`));
  }
  return h('section', { class: 'card', dataset: { change: c.compile_id } },
    h('h2', null, 'What changed: ', idLink(c.compile_id), ' ', statusBadge(c.status), h('span', { class: 'an-sub' }, ' against '), idLink(ch.previous)),
    reasonsView(c),
    h('h3', null, 'Guards ', h('span', { class: 'add-count' }, `+${ch.guards_added.length}`), ' ', h('span', { class: 'del-count' }, `−${ch.guards_removed.length}`)),
    guardDiff(ch),
    h('h3', null, `Artifacts: ${count(ch.changed.length)} changed, ${count(ch.added.length)} added, ${count(ch.removed.length)} removed, ${count(ch.unchanged.length)} unchanged`),
    ch.changed.length
      ? h('div', { class: 'an-artifact-diffs' }, ch.changed.map((a, i) => artifactDiff(ctx, c, ch, a, diffs, i === 0)))
      : note('No artifact logged by both compiles differs.'),
    nameList(ctx, 'Only in this compile', ch.added, 'add', c.compile_id),
    nameList(ctx, `Only in ${ch.previous}`, ch.removed, 'del', ch.previous),
    nameList(ctx, 'Identical', ch.unchanged, null, c.compile_id));
}

/** The `recompile_reasons`: for each earlier cache entry, the guard that failed; where they were logged. */
function reasonsView(c) {
  const reasons = c.reasons;
  if (!reasons.length) return note('No recompile reason was logged for this compile (neither a recompile_reasons artifact nor compilation_metrics.recompile_reason).');
  return h('div', null,
    h('h3', null, 'Recompiled because'),
    reasonSource(c),
    h('ul', { class: 'an-reasons' }, reasons.map((r) => {
      const { entry, guard } = splitReason(r);
      return h('li', null, entry ? pill(`vs ${entry}`, null, `the guard of cache entry ${entry} that failed`) : null, h('pre', { class: 'an-reason' }, guard));
    })));
}

/** Guards removed (red) and added (green), like a diff. */
function guardDiff(ch) {
  if (!ch.guards_added.length && !ch.guards_removed.length) return note('The guards are the same.');
  const line = (op, text) => h('div', { class: ['diff-line', op === '+' ? 'add' : 'del'] },
    h('span', { class: 'mark' }, op === '+' ? '+' : '−'), h('span', { class: 'text' }, text));
  return h('div', { class: 'diff an-guards', dataset: { added: ch.guards_added.length, removed: ch.guards_removed.length } },
    h('div', { class: 'diff-body' },
      ch.guards_removed.map((g) => line('-', g)),
      ch.guards_added.map((g) => line('+', g))));
}

/** One changed artifact: links to both versions and their diff, fetched when expanded. */
function artifactDiff(ctx, c, ch, a, diffs, open) {
  const stats = h('span', { class: 'an-diff-stats' });
  const summary = [h('span', { class: 'mono an-artifact-name' }, a.name), stats,
    h('span', { class: 'an-links' },
      h('a', { href: ctx.href('artifact', { blob: a.before, name: a.name, id: ch.previous }), on: { click: (e) => e.stopPropagation() } }, `before (${ch.previous})`), ' · ',
      h('a', { href: ctx.href('artifact', { blob: a.after, name: a.name, id: c.compile_id }), on: { click: (e) => e.stopPropagation() } }, `after (${c.compile_id})`))];
  return lazyDetails(summary, async () => {
    const [before, after] = await Promise.all([ctx.bundle.text(a.before), ctx.bundle.text(a.after)]);
    const view = diffView(diffText(before, after));
    const { added, removed } = view.dataset;
    diffs[a.name] = { added: Number(added), removed: Number(removed) };
    stats.replaceChildren(h('span', { class: 'add-count' }, `+${added}`), ' ', h('span', { class: 'del-count' }, `−${removed}`));
    return view;
  }, { open, name: a.name });
}

/** Artifact names (only in one compile, or identical), linked to the compile page. */
function nameList(ctx, title, names, tone, compileId) {
  if (!names.length) return null;
  return h('div', { class: 'an-names' },
    h('span', { class: 'an-names-title' }, `${title}: `),
    names.map((n) => h('a', { class: ['an-chip', tone && `an-chip-${tone}`], href: ctx.href('compile', { id: compileId }), title: `${n} in ${compileId}` }, code(n))));
}
