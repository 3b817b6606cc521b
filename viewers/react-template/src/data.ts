// data.ts: pure functions from bundle data (manifest and tables) to what the pages show.
// No fetching and no React here, so each function is tested on real bundles (test/data.test.ts).
import {
  compileArtifacts, type ArtifactRef, type CompileDirectory, type CompileEntry, type CompileStatus, type CompileTime,
  type Failures, type LiteManifest, type Manifest,
} from 'tlparse-bundle-loader';

/** A manifest: `bundle.manifest` (the lite manifest: no `files`, `viewer` nor hashes) or
 * manifest.json. Everything here reads only fields both have. */
export type AnyManifest = LiteManifest | Manifest;

/** The tables the overview reads for one stream (null when the stream has none). */
export interface OverviewTables {
  failures: Failures | null;
  compileTime: CompileTime | null;
  /** Read only when `compileTime` is absent (a stream that logged no trace events). */
  directory: CompileDirectory | null;
}

export interface StreamSummary {
  id: string;
  label: string;
  compiles: number;
  failures: number;
  restarts: number;
  /** Forward + backward compile time in seconds; null when nothing was timed. */
  compileSeconds: number | null;
}

export interface BundleOverview {
  streams: StreamSummary[];
  compiles: number;
  failures: number;
  restarts: number;
  compileSeconds: number | null;
}

/** What to call a stream: the cross-rank label (`rank 3`) when there is one, else its id. */
export function streamLabel(manifest: AnyManifest, streamId: string): string {
  return manifest.cross_rank?.members.find((m) => m.stream === streamId)?.label ?? streamId;
}

/** A stream's compile time in seconds: compile_time's totals, else compile_directory's. */
export function compileSeconds(tables: OverviewTables): number | null {
  if (tables.compileTime) return tables.compileTime.compiles.reduce((sum, c) => sum + c.total_us, 0) / 1e6;
  const timed = (tables.directory?.compiles ?? []).filter((c) => c.total_s !== null);
  return timed.length ? timed.reduce((sum, c) => sum + (c.total_s ?? 0), 0) : null;
}

/** The overview: per stream and in total, compiles, failures, restarts and compile time. */
export function overview(manifest: AnyManifest, tablesByStream: Record<string, OverviewTables>): BundleOverview {
  const streams = manifest.streams.map((s): StreamSummary => {
    const tables = tablesByStream[s.id] ?? { failures: null, compileTime: null, directory: null };
    return {
      id: s.id,
      label: streamLabel(manifest, s.id),
      compiles: s.tables.compile_directory?.rows ?? 0, // the manifest counts compile_directory's rows
      failures: tables.failures?.failed ?? 0,
      restarts: tables.failures?.restarts ?? 0,
      compileSeconds: compileSeconds(tables),
    };
  });
  const sum = (pick: (s: StreamSummary) => number) => streams.reduce((total, s) => total + pick(s), 0);
  const timed = streams.filter((s) => s.compileSeconds !== null);
  return {
    streams,
    compiles: sum((s) => s.compiles),
    failures: sum((s) => s.failures),
    restarts: sum((s) => s.restarts),
    compileSeconds: timed.length ? sum((s) => s.compileSeconds ?? 0) : null,
  };
}

/** One line of the compile list. */
export interface CompileRow {
  compileId: string;
  status: CompileStatus;
  functionName: string | null;
  /** `file:line` of the compiled function, and the same with the file's name only. */
  location: string | null;
  shortLocation: string | null;
  seconds: number | null;
}

/** The compile list of a stream, in order of first appearance. */
export function compileRows(directory: CompileDirectory | null): CompileRow[] {
  return (directory?.compiles ?? []).map((c) => ({
    compileId: c.compile_id,
    status: c.status,
    functionName: functionName(c),
    location: functionLocation(c),
    shortLocation: functionLocation(c)?.split('/').pop() ?? null,
    seconds: c.total_s,
  }));
}

/** The compiled function's name: from its metrics, else from the `dynamo_start` stack. */
export function functionName(c: CompileEntry): string | null {
  return c.co_name ?? c.code?.name ?? null;
}

/** The compiled function's `file:line`, from the same sources as its name. */
export function functionLocation(c: CompileEntry): string | null {
  if (c.co_filename !== null) return `${c.co_filename}:${c.co_firstlineno ?? '?'}`;
  return c.code ? `${c.code.filename}:${c.code.line}` : null;
}

/** One bar of the recompiles chart: a frame (a Python code object torch.compile compiled). */
export interface FrameCompiles {
  /** `frame 3`, or `autograd 0 frame 3` for frames compiled inside compiled autograd. */
  frame: string;
  functionName: string | null;
  /** Its compiles (final attempts: a restarted attempt is not a recompile), in order. */
  compileIds: string[];
}

/**
 * Compiles per frame, from compile_directory: frames compiled most often first (ties in order of
 * first compile). A frame with N compiles recompiled N - 1 times. Rows without a frame id
 * (compiled-autograd captures) are left out; so are restarted attempts, replaced by their restart.
 */
export function recompilesPerFrame(directory: CompileDirectory | null): FrameCompiles[] {
  const frames = new Map<string, FrameCompiles>();
  for (const c of directory?.compiles ?? []) {
    const { compiled_autograd_id: autograd, frame_id: frameId } = c.cid;
    if (frameId === null || c.status === 'restarted') continue;
    const frame = autograd === null ? `frame ${frameId}` : `autograd ${autograd} frame ${frameId}`;
    const entry = frames.get(frame) ?? { frame, functionName: null, compileIds: [] };
    entry.functionName ??= functionName(c);
    entry.compileIds.push(c.compile_id);
    frames.set(frame, entry);
  }
  return [...frames.values()].sort((a, b) => b.compileIds.length - a.compileIds.length); // stable
}

/** A compile's artifact with its position among artifacts of the same name (`nth`, from 0). */
export interface NumberedArtifact {
  ref: ArtifactRef;
  nth: number;
}

/** A compile's artifacts (its slice of the directory's list) in log order, numbered per name as
 * `bundle.artifact(..., nth)` wants. */
export function numberedArtifacts(directory: CompileDirectory, compile: CompileEntry): NumberedArtifact[] {
  const seen = new Map<string, number>();
  return compileArtifacts(directory, compile).map((ref) => {
    const nth = seen.get(ref.name) ?? 0;
    seen.set(ref.name, nth + 1);
    return { ref, nth };
  });
}

/** `1 restart`, `2 restarts`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Seconds for people: `18.40 s`, `230 ms`, `—` when unknown. */
export function formatSeconds(seconds: number | null): string {
  if (seconds === null) return '—';
  return seconds >= 1 ? `${seconds.toFixed(2)} s` : `${Math.round(seconds * 1000)} ms`;
}

/** Bytes for people: `812 B`, `3.4 KiB`, `1.2 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
