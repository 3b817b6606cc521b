// ranks-common.js: helpers shared by the multi-rank pages (ranks.js, rank-diff.js): rank labels
// from the manifest's cross_rank.members, compact lists of many ranks, op names, durations.

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
 * that are not "rank N" are listed as they are.
 * @param {string[]} streams stream ids @param {(s: string) => string} label @returns {string}
 */
export function ranksText(streams, label) {
  const labels = streams.map(label);
  const numbers = labels.map((l) => /^rank (\d+)$/.exec(l)?.[1]).map((n) => (n == null ? null : Number(n)));
  if (labels.length < 2 || numbers.some((n) => n == null)) return labels.join(', ') || '—';
  const sorted = [...numbers].sort((a, b) => a - b);
  const runs = [];
  for (const n of sorted) {
    const last = runs[runs.length - 1];
    if (last && n === last[1] + 1) last[1] = n; else runs.push([n, n]);
  }
  return `ranks ${runs.map(([a, b]) => (a === b ? `${a}` : b === a + 1 ? `${a}, ${b}` : `${a}–${b}`)).join(', ')}`;
}

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
