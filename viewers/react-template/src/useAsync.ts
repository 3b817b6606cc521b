// useAsync.ts: run a promise-returning function and re-render with its result. `key` names what
// is loaded: when it changes, the old result is dropped (never shown for the new key).
import { useEffect, useState } from 'react';

export type Async<T> =
  | { status: 'loading' }
  | { status: 'done'; value: T }
  | { status: 'error'; error: Error };

export function useAsync<T>(key: string, load: () => Promise<T>): Async<T> {
  const [result, setResult] = useState<{ key: string; state: Async<T> } | null>(null);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && setResult({ key, state: { status: 'done', value } }),
      (error: unknown) => current && setResult({
        key, state: { status: 'error', error: error instanceof Error ? error : new Error(String(error)) },
      }),
    );
    return () => { current = false; };
    // `key` stands for everything `load` depends on.
  }, [key]);
  return result?.key === key ? result.state : { status: 'loading' };
}
