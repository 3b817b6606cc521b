// csp.ts: the page may connect only to its own origin and the bundle's. The built index.html
// carries a Content-Security-Policy (vite.config.ts) under which only this app's own files run and
// load, and connections may go to any http(s) origin, as it cannot name the bundle's in advance;
// `restrictConnections()`, run by main.tsx before anything else, adds a second policy allowing
// only this origin and the one `?bundle=` names. A browser enforces every policy of a page and a
// later one can only take away, so nothing in the page, even a script slipped in through a trace
// string, can send a bundle's contents elsewhere. Another bundle's origin needs a page load, which
// `navigate()` (route.ts) does.

/** The origin a `?bundle=` value reads from; null for a local folder (`local:N/NAME`) or none. */
export function bundleOrigin(given: string | null | undefined): string | null {
  if (!given || given.startsWith('local:')) return null;
  let url: URL;
  try { url = new URL(given, location.href); } catch { return null; }
  // Only a plain http(s) origin goes into the policy: a host holding `;` or `,` could add directives.
  return /^https?:\/\/[A-Za-z0-9.-]+(:\d+)?$/.test(url.origin) ? url.origin : null;
}

/** The origins this page load may connect to, once `restrictConnections()` has run. */
let allowed: Set<string> | null = null;

const givenBundle = () => new URLSearchParams(location.search).get('bundle');

/** Whether this page load can read `bundle` (a `?bundle=` value): a local folder, or an allowed origin. */
export function canRead(bundle: string | undefined): boolean {
  const origin = bundleOrigin(bundle);
  return origin === null || allowed === null || allowed.has(origin);
}

/** Adds the policy narrowing connections to this origin and the bundle's (once per page load). */
export function restrictConnections(): void {
  const origin = bundleOrigin(givenBundle());
  allowed = new Set([location.origin, ...(origin ? [origin] : [])]);
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = `connect-src 'self'${origin && origin !== location.origin ? ` ${origin}` : ''}`;
  document.head.append(meta);
  // Back or Forward to another bundle's origin: load the page again, so its policy names it (and
  // the app, whose listener comes after this one, does not try to read it meanwhile).
  window.addEventListener('popstate', (event) => {
    if (canRead(givenBundle() ?? undefined)) return;
    event.stopImmediatePropagation();
    location.reload();
  });
}
