// ranks-common.js: helpers shared by the pages that read cross-rank tables (ranks.js,
// rank-diff.js, overview.js): rank labels from the manifest's cross_rank.members, compact lists
// of many ranks, aligned compiles (compile_alignment: the same compile has its own compile id on
// each rank, and a rank whose frame ids are shifted gives it another one), op names, durations.

import { h } from './dom.js';

/**
 * A labeller for stream ids: `label('rank1-1')` → "rank 5" (the member's label, else the id).
 * @param {any} manifest @returns {(stream: string) => string}
 */
export function rankLabeller(manifest) {
  const labels = new Map((manifest.cross_rank?.members ?? []).map((m) => [m.stream, m.label ?? m.stream]));
  return (stream) => labels.get(stream) ?? stream;
}

/**
 * Many ranks in a short string: ["rank 0", "rank 1", "rank 2", "rank 5"] → "ranks 0–2, 5". Labels
 * that are not "rank N" are listed as they are. Past 10 runs (or labels) the list is cut short:
 * "ranks 0, 4, 8, …, 996 (250 ranks)".
 * @param {string[]} streams stream ids @param {(s: string) => string} label @returns {string}
 */
export function ranksText(streams, label) {
  const labels = streams.map(label);
  const numbers = labels.map((l) => /^rank (\d+)$/.exec(l)?.[1]).map((n) => (n == null ? null : Number(n)));
  if (labels.length < 2 || numbers.some((n) => n == null)) {
    if (labels.length <= MAX_LISTED) return labels.join(', ') || '—';
    return `${labels.slice(0, MAX_LISTED - 1).join(', ')}, … (${labels.length} streams)`;
  }
  const sorted = [...numbers].sort((a, b) => a - b);
  const runs = [];
  for (const n of sorted) {
    const last = runs[runs.length - 1];
    if (last && n === last[1] + 1) last[1] = n; else runs.push([n, n]);
  }
  const parts = runs.map(([a, b]) => (a === b ? `${a}` : b === a + 1 ? `${a}, ${b}` : `${a}–${b}`));
  if (parts.length <= MAX_LISTED) return `ranks ${parts.join(', ')}`;
  // Thousands of ranks without long runs (every 4th rank): the first few, the last, how many.
  return `ranks ${parts.slice(0, MAX_LISTED - 1).join(', ')}, …, ${parts.at(-1)} (${sorted.length} ranks)`;
}

/** How many ranks or runs of ranks ranksText names before it shortens the list. */
const MAX_LISTED = 10;

/** "torch.ops._c10d_functional.all_reduce_.default" → "all_reduce_"; null → "(unnamed)". */
export function shortOp(op) {
  if (op == null) return '(unnamed)';
  const m = /^torch\.ops\.[\w]+\.([\w]+)(?:\.\w+)?$/.exec(op);
  return m ? m[1] : op;
}

/** Nanoseconds as milliseconds with 3 decimals: 2070913.3 → "2.071 ms". */
export function ms(ns) {
  return ns == null ? '–' : `${(ns / 1e6).toFixed(3)} ms`;
}

// ---- aligned compiles ------------------------------------------------------------------------
// Cross-rank rows name a compile by an AlignedCompileRef: {aligned, label, compile_ids:
// [{stream, compile_id}]}, each stream's OWN compile id (streams that lack it left out). Never
// assume one compile id for every rank: a rank that compiled an extra function first has every
// later frame id shifted.

/** Orders compile ids as people do: "[0/2]" before "[0/10]". */
function compareIds(a, b) {
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/**
 * The compile id most of `ids` have ({stream, compile_id}[]): the smallest on a tie, as the
 * table's `usual_frame_id` is. null for an empty list.
 * @returns {string | null}
 */
export function usualCompileId(ids) {
  const counts = new Map();
  for (const { compile_id: id } of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  let best = null;
  for (const [id, n] of counts) {
    if (best == null || n > counts.get(best) || (n === counts.get(best) && compareIds(id, best) < 0)) best = id;
  }
  return best;
}

/**
 * The distinct compile ids of an aligned compile, the usual one first (then by id): [{id, streams}].
 * @param {{stream: string, compile_id: string}[]} ids
 */
function idGroups(ids) {
  const usual = usualCompileId(ids);
  const by = new Map();
  for (const { stream, compile_id: id } of ids) {
    if (!by.has(id)) by.set(id, []);
    by.get(id).push(stream);
  }
  return [...by].map(([id, streams]) => ({ id, streams }))
    .sort((a, b) => (a.id === usual ? -1 : b.id === usual ? 1 : compareIds(a.id, b.id)));
}

const MAX_EXCEPTIONS = 3;

/**
 * How compileIdsText and compileRef lay out an aligned compile's compile ids: the usual one,
 * then at most MAX_EXCEPTIONS others with their ranks, "[0/0] ([1/0] on rank 2, …, 2 more)".
 * `usual(g)` and `other(g, onRanks)` render an id group ({id, streams}); [] for no ids.
 */
function idsLayout(ids, label, usual, other) {
  const [first, ...others] = idGroups(ids);
  if (!first) return [];
  if (!others.length) return [usual(first)];
  const shown = others.slice(0, MAX_EXCEPTIONS).map((g, i) => [i ? ', ' : '', other(g, ` on ${ranksText(g.streams, label)}`)]);
  return [usual(first), ' (', shown, others.length > MAX_EXCEPTIONS ? `, ${others.length - MAX_EXCEPTIONS} more` : '', ')'];
}

/**
 * An aligned compile's compile ids in words: "[0/0]" when every rank has the same one, else the
 * usual one and the exceptions: "[0/0] ([1/0] on rank 2)".
 * @param {{stream: string, compile_id: string}[]} ids @param {(s: string) => string} label
 */
export function compileIdsText(ids, label) {
  return idsLayout(ids, label, (g) => g.id, (g, on) => `${g.id}${on}`).flat(Infinity).join('');
}

/**
 * An aligned compile (AlignedCompileRef, or null for rows outside any compile) as text:
 * "forward (model.py:20) [0/0] ([1/0] on rank 2)".
 */
export function compileText(ref, label) {
  return ref ? `${ref.label} ${compileIdsText(ref.compile_ids, label)}` : '(outside any compile)';
}

/** The href of one stream's own compile. */
export function compileHref(ctx, stream, id) {
  return ctx.href('compile', { s: stream, id });
}

/** An aligned compile's own compile id on each stream that has it (Map stream → compile id); empty for null. */
export function ownIds(ref) {
  return new Map((ref?.compile_ids ?? []).map((c) => [c.stream, c.compile_id]));
}

/**
 * A link to one stream's own compile `id`, titled "rank 2's [1/0]" unless `title` says otherwise,
 * showing `text` (default the id). A click on it does not also click the table row it is in.
 */
export function compileLink(ctx, stream, id, label, { cls = 'rk-cid mono', title = `${label(stream)}'s ${id}`, text = id } = {}) {
  return h('a', { class: cls, href: compileHref(ctx, stream, id), title, on: { click: (e) => e.stopPropagation() } }, text);
}

/**
 * An aligned compile as DOM: its label, then its compile ids, each a link to the compile page of
 * a rank that has that id (the usual id to the first such rank; every other id to its own rank).
 * `onlyIds` drops the label.
 */
export function compileRef(ctx, ref, label, { onlyIds = false } = {}) {
  if (!ref) return h('span', { class: 'rk-compile none' }, '(outside any compile)');
  const link = (g) => compileLink(ctx, g.streams[0], g.id, label, { title: `${ranksText(g.streams, label)}: ${g.id}` });
  const ids = idsLayout(ref.compile_ids, label, link, (g, on) => h('span', { class: 'rk-shifted-id' }, link(g), on));
  return h('span', { class: 'rk-compile', dataset: { aligned: ref.aligned }, title: compileText(ref, label) },
    onlyIds ? null : [h('span', { class: 'rk-compile-label' }, ref.label), ' '], ids);
}

/** Map "stream\u0000compile id" → index in compile_alignment.compiles. */
export function alignedIndex(alignment) {
  const m = new Map();
  (alignment?.compiles ?? []).forEach((c, i) => { for (const p of c.present) m.set(`${p.stream}\u0000${p.compile_id}`, i); });
  return m;
}

/** "file.py" from "/a/b/file.py". */
function baseName(path) {
  return String(path ?? '').split('/').pop();
}

/**
 * compile_alignment's findings in words (as the build prints them): code only some ranks
 * compiled, and the ambiguities of the alignment with how they were resolved. Each is
 * {kind, text, parts}, `parts` the text with the code name as a `<code>` node.
 */
export function alignmentFindings(alignment, label) {
  const out = [];
  for (const p of alignment?.partial_code ?? []) {
    const by = p.compiled_by.map((c) => c.stream);
    const ids = idGroups(p.compiled_by);
    const as = ids.length === 1 ? ids[0].id : ids.map((g) => `${g.id} on ${ranksText(g.streams, label)}`).join(', ');
    const others = by.length === 1 && p.not_compiled_by.length
      ? 'which no other rank compiled'
      : p.not_compiled_by.length ? `which ${ranksText(p.not_compiled_by, label)} did not compile` : '';
    const where = `(${baseName(p.code.filename)}:${p.code.line})`;
    const ca = p.compiled_autograd_id != null ? ` in compiled autograd ${p.compiled_autograd_id}` : '';
    const tail = `${ca} as ${as}${others ? `, ${others}` : ''}` +
      (p.later_frame_id_shift != null ? `; its later frame ids are shifted by ${p.later_frame_id_shift}` : '');
    const who = ranksText(by, label);
    out.push({
      kind: 'partial_code',
      text: `${who} compiled ${p.code.name} ${where}${tail}`,
      parts: [`${who} compiled `, h('code', null, p.code.name), ` ${where}${tail}`],
    });
  }
  for (const a of alignment?.ambiguities ?? []) {
    const text = `Alignment of ${a.compile_ids.join(' ')} on ${label(a.stream)} (${AMBIGUITY[a.kind] ?? a.kind}): ${a.resolution}`;
    out.push({ kind: 'ambiguity', text, parts: [text] });
  }
  return out;
}

/** compile_alignment's ambiguity kinds, for people. */
export const AMBIGUITY = {
  same_code_several_frames: 'the same code under several frame ids',
  code_unknown: 'code unknown',
  attempts_disagree: 'its attempts name different code',
};

/**
 * rank_differ rows with every stream named: the table leaves a row's largest side implied (the
 * largest payload group without `streams` when `missing` is listed, else `missing` left out),
 * so that a row grows with the ranks that differ, not with all ranks. Returns `full(row)`, which
 * gives the row with `groups[].streams` and `missing` listed (in `members` order) and `compile`
 * the full reference (`{aligned, label, compile_ids}`, each rank's own id from
 * compile_alignment). Nothing is kept: a page expands the rows it shows, when it shows them.
 */
export function rankDifferRows(rd, alignment) {
  const all = (rd?.streams ?? []).map((s) => s.stream);
  const compileOf = (c) => (c ? {
    aligned: c.aligned, label: c.label,
    compile_ids: (alignment?.compiles?.[c.aligned]?.present ?? []).map((p) => ({ stream: p.stream, compile_id: p.compile_id })),
  } : null);
  return (row) => {
    const listed = new Set(row.groups.flatMap((g) => g.streams ?? []));
    const missing = row.missing ?? all.filter((s) => !listed.has(s));
    const gone = new Set(missing);
    const groups = row.groups.map((g) => ({
      ...g, streams: g.streams ?? all.filter((s) => !listed.has(s) && !gone.has(s)),
    }));
    return { ...row, compile: compileOf(row.compile), groups, missing };
  };
}

/** What `same_up_to_ids` means, for people. */
export const SAME_UP_TO_IDS = 'Same up to ids: the payloads differ only in what is volatile by nature (object ids, ' +
  'addresses, compile ids, temporary paths, pids, measured times), so they are not differences.';

/** A rank_differ status as a badge: "differs", "same up to ids", "identical", "same where present". */
export function differBadge(status) {
  const cls = { identical: 'st-ok', same_up_to_ids: 'st-ok', differs: 'st-failed', same_where_present: 'st-empty' }[status] ?? 'st-missing';
  return h('span', { class: ['badge', cls] }, String(status).replace(/_/g, ' '));
}

/**
 * Who did not log a rank_differ row (its streams named, see rankDifferRows), and why when the
 * table says: "rank 3: not logged: FX cache hit". null when every rank logged it.
 */
export function missingNote(row, ranks) {
  if (!row.missing.length) return null;
  const hit = row.missing_on_cache_hit ?? [];
  const other = row.missing.filter((s) => !hit.includes(s));
  return h('p', { class: 'note rk-missing' }, [
    hit.length ? `${ranks(hit)}: not logged: FX cache hit (Inductor's compile was skipped).` : null,
    other.length ? `${hit.length ? ' ' : ''}Not logged by ${ranks(other)}.` : null]);
}

/** "before_post_grad_graph (forward) #2": a rank_differ key's artifact in words (as rank_findings says it). */
export function artifactKeyText(r) {
  return `${r.name}${r.graph ? ` (${r.graph})` : ''}${r.occurrence ? ` #${r.occurrence + 1}` : ''}`;
}
