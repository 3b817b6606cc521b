// pages/rank-diff.js: one artifact diffed between two ranks
// (`#/rank-diff?id=[0/0]&name=ARTIFACT&occ=N&a=STREAM&b=STREAM`). Loads the view
// (rank-diff-view.js and diff.js) only when the page is opened, to keep the first paint small.

/** Renders the rank diff; see rank-diff-view.js. */
export async function render(ctx) {
  return (await import('../rank-diff-view.js')).render(ctx);
}
