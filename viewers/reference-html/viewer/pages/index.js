// pages/index.js: the page registry. Each page module exports `render(ctx)` returning a DOM node
// (see `context` in app.js for what ctx holds). NAV is the tab bar, in order; `when` hides a tab
// that has nothing to show for this bundle/stream.

import * as overview from './overview.js';

/** Route name → page module. */
export const PAGES = {
  overview,
};

const hasTable = (name) => (m, s) => Boolean(s?.tables?.[name]);

/** The tabs. */
export const NAV = [
  { page: 'overview', label: 'Overview' },
];

export { hasTable };
