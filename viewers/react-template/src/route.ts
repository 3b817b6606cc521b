// route.ts: the URL is the state. `?bundle=URL&stream=ID&compile=ID&artifact=NAME&nth=N` says
// what is shown, so every view can be linked to, and Back/Forward work (history.pushState).
import { useMemo, useSyncExternalStore } from 'react';
import { canRead } from './csp';

export interface Route {
  /** The bundle's URL: absolute, or relative to this page. */
  bundle?: string;
  /** A stream id (`rank0`, `log0`); the first stream when absent. */
  stream?: string;
  /** A compile id as displayed (`[0/1]`). */
  compile?: string;
  /** An artifact name of that compile, and which one of that name (`nth`, from 0). */
  artifact?: string;
  nth?: number;
}

const KEYS = ['bundle', 'stream', 'compile', 'artifact', 'nth'] as const;

export function parseRoute(search: string): Route {
  const params = new URLSearchParams(search);
  const route: Route = {};
  for (const key of KEYS) {
    const value = params.get(key);
    if (value === null || value === '') continue;
    if (key === 'nth') route.nth = Math.max(0, Number.parseInt(value, 10) || 0);
    else route[key] = value;
  }
  return route;
}

/** The in-app href of a route: a query string only, so links never leave this page. */
export function routeHref(route: Route): string {
  const params = new URLSearchParams();
  for (const key of KEYS) {
    const value = route[key];
    if (value !== undefined && !(key === 'nth' && value === 0)) params.set(key, String(value));
  }
  return `?${params}`;
}

const ROUTE_CHANGED = 'tlparse:route';

export function navigate(route: Route): void {
  // A bundle on an origin this page load may not connect to (csp.ts): load the page for it.
  if (!canRead(route.bundle)) {
    location.assign(routeHref(route));
    return;
  }
  history.pushState(null, '', routeHref(route));
  window.dispatchEvent(new Event(ROUTE_CHANGED));
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener(ROUTE_CHANGED, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(ROUTE_CHANGED, onChange);
  };
}

/** The current route; components re-render when it changes. */
export function useRoute(): Route {
  const search = useSyncExternalStore(subscribe, () => location.search);
  return useMemo(() => parseRoute(search), [search]);
}
