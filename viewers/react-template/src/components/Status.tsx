// Status.tsx: what a view shows while it loads, when loading failed, and a status badge.
import type { CompileStatus } from 'tlparse-bundle-loader';

export function Loading({ what }: { what: string }) {
  return <p className="loading">Loading {what}…</p>;
}

export function ErrorBox({ title, error }: { title: string; error: Error }) {
  return (
    <div className="error" role="alert">
      <strong>{title}</strong>
      <p>{error.message}</p>
    </div>
  );
}

export function StatusBadge({ status }: { status: CompileStatus }) {
  return <span className={`status status-${status}`}>{status.replaceAll('_', ' ')}</span>;
}
