// StreamPicker.tsx: choose the stream (rank) whose compiles are shown; hidden for one stream.
import type { AnyManifest } from '../data';
import { streamLabel } from '../data';
import { navigate, type Route } from '../route';

export function StreamPicker({ manifest, route, stream }: { manifest: AnyManifest; route: Route; stream: string }) {
  if (manifest.streams.length < 2) return null;
  return (
    <label className="stream-picker">
      Stream{' '}
      <select value={stream} onChange={(event) => navigate({ bundle: route.bundle, stream: event.target.value })}>
        {manifest.streams.map((s) => (
          <option key={s.id} value={s.id}>{optionText(streamLabel(manifest, s.id), s.id)}</option>
        ))}
      </select>
    </label>
  );
}

/** `rank 0 (rank0)`; just the id when the label is the id. */
function optionText(label: string, id: string): string {
  return label === id ? id : `${label} (${id})`;
}
