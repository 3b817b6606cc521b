// pages/ranks.js: the multi-rank view (`#/ranks?sec=SECTION&grid=diff`). pages/index.js imports
// every page up front, so this stub loads the view (ranks-view.js, ~30 KB) only when the page is
// opened: the overview's first paint stays within its byte budget.

/** Renders the multi-rank view; see ranks-view.js. */
export async function render(ctx) {
  return (await import('../ranks-view.js')).render(ctx);
}
