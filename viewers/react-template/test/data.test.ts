// data.test.ts: src/data.ts on real bundles built from fixtures-repo/ (test/global-setup.ts).
// The expected values were checked by hand against the raw logs and the tables (zstd -dc ...),
// as each comment says.
import path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { READER_VERSION, type Bundle, type StreamTables } from 'tlparse-bundle-loader';
import {
  compileRows, compileSeconds, formatBytes, formatSeconds, numberedArtifacts, overview, plural, recompilesPerFrame,
  type OverviewTables,
} from '../src/data';
import { catArtifact, openFixture, type FixtureName } from './fixtures';

const bundlesDir = inject('bundlesDir');
const bundles = {} as Record<FixtureName, Bundle>;

beforeAll(async () => {
  for (const name of ['graph_breaks', 'recompiles', 'failures', 'ranks_shifted', 'hostile'] as const) {
    bundles[name] = await openFixture(bundlesDir, name);
  }
});

/** What src/bundle.ts's overviewTables() fetches, read here through the same loader. */
async function tablesOf(bundle: Bundle): Promise<Record<string, OverviewTables>> {
  const out: Record<string, OverviewTables> = {};
  for (const s of bundle.manifest.streams) {
    out[s.id] = {
      failures: await bundle.table(s.id, 'failures'),
      compileTime: await bundle.table(s.id, 'compile_time'),
      directory: await bundle.table(s.id, 'compile_directory'),
    };
  }
  return out;
}

function directoryOf(name: FixtureName, stream = 'log0'): Promise<StreamTables['compile_directory'] | null> {
  return bundles[name].table(stream, 'compile_directory');
}

describe('overview', () => {
  test('graph_breaks: one stream, 27 compiles, 0 failures, 10 restarts, 18.40 s', async () => {
    const b = bundles.graph_breaks;
    const summary = overview(b.manifest, await tablesOf(b));
    // The log has 17 compilation_metrics, none with a fail_type, 10 with one restart reason each;
    // their entire_frame_compile_time_s add up to 18.398263 s and it logs no backward compile.
    // 27 compile ids: the 17 that logged metrics plus 10 restarted attempts ([0/0] → [0/0_1], ...).
    expect(summary.streams.map((s) => [s.id, s.label])).toEqual([['log0', 'log0']]);
    expect(summary.compiles).toBe(27);
    expect(summary.failures).toBe(0);
    expect(summary.restarts).toBe(10);
    expect(summary.compileSeconds).toBeCloseTo(18.398263, 6);
  });

  test('failures: 6 failed compiles out of 7', async () => {
    const b = bundles.failures;
    const summary = overview(b.manifest, await tablesOf(b));
    // The log's 7 compilation_metrics: one with fail_type null (f_ok), 3 BackendCompilerFailed,
    // 1 Unsupported, 1 UserError, 1 TorchRuntimeError.
    expect([summary.compiles, summary.failures, summary.restarts]).toEqual([7, 6, 0]);
    const dir = await directoryOf('failures');
    expect(dir?.compiles.filter((c) => c.status === 'failed').length).toBe(summary.failures);
  });

  test('ranks_shifted: four ranks with their own counts and times', async () => {
    const b = bundles.ranks_shifted;
    const summary = overview(b.manifest, await tablesOf(b));
    // Rank 1 and rank 2 compiled once more than ranks 0 and 3 (rank 1: forward [0/1] after a
    // dynamic-shape recompile; rank 2: its rank_local_metric frame). Rank 0's [0/0] is
    // docs/tables/compile_time.md's example: 19.55 s forward + 1.65 s backward = 21.20 s, and its
    // three sync_grads compiles add 1.91 + 1.45 + 1.30 s: 25.865 s.
    expect(summary.streams.map((s) => [s.id, s.label, s.compiles])).toEqual([
      ['rank0', 'rank 0', 4], ['rank1', 'rank 1', 5], ['rank2', 'rank 2', 5], ['rank3', 'rank 3', 4],
    ]);
    expect(summary.compiles).toBe(18);
    expect(summary.failures).toBe(0);
    expect(summary.streams[0]?.compileSeconds).toBeCloseTo(25.8650765, 6);
    const total = summary.streams.reduce((sum, s) => sum + (s.compileSeconds ?? 0), 0);
    expect(summary.compileSeconds).toBeCloseTo(total, 9);
  });

  test('compile time: compile_time and compile_directory agree; the directory is the fallback', async () => {
    for (const name of ['graph_breaks', 'recompiles', 'failures'] as const) {
      const tables = (await tablesOf(bundles[name])).log0;
      if (!tables) throw new Error('no log0');
      const fromTrace = compileSeconds({ ...tables, directory: null });
      const fromDirectory = compileSeconds({ ...tables, compileTime: null });
      expect(fromTrace, name).not.toBeNull();
      expect(fromDirectory, name).toBeCloseTo(fromTrace ?? NaN, 6);
    }
    expect(compileSeconds({ failures: null, compileTime: null, directory: null })).toBeNull();
  });

  test('the compile count comes from the manifest and equals the compile_directory rows', async () => {
    for (const [name, bundle] of Object.entries(bundles)) {
      const summary = overview(bundle.manifest, await tablesOf(bundle));
      for (const s of summary.streams) {
        const dir = await bundle.table(s.id, 'compile_directory');
        expect(s.compiles, `${name} ${s.id}`).toBe(dir?.compiles.length ?? 0);
      }
    }
  });
});

describe('compile list', () => {
  test('graph_breaks rows: id, status, function, file:line, time', async () => {
    const rows = compileRows(await directoryOf('graph_breaks'));
    expect(rows).toHaveLength(27);
    // [0/0] restarted: torch logs the metrics once, under [0/0_1], so it has no time of its own;
    // its function comes from its dynamo_start stack (forward at graph_breaks.py:57, the
    // co_name and co_firstlineno of [0/0_1]'s metrics too).
    expect(rows[0]).toEqual({
      compileId: '[0/0]', status: 'restarted', functionName: 'forward',
      location: '/home/user/scenarios/graph_breaks.py:57', shortLocation: 'graph_breaks.py:57', seconds: null,
    });
    // [1/0_1]'s metrics: co_name forward, graph_breaks.py:43, entire_frame_compile_time_s 2.280772,
    // one restart reason ("Failed to trace builtin operator").
    expect(rows[3]).toEqual({
      compileId: '[1/0_1]', status: 'ok_with_restart', functionName: 'forward',
      location: '/home/user/scenarios/graph_breaks.py:43', shortLocation: 'graph_breaks.py:43', seconds: 2.280772,
    });
    // The last compile of the log: [15/0], torch_dynamo_resume_in_forward_at_60.
    expect(rows.at(-1)?.compileId).toBe('[15/0]');
    expect(rows.at(-1)?.functionName).toBe('torch_dynamo_resume_in_forward_at_60');
  });

  test('a failed compile that logged no function name shows none', async () => {
    const rows = compileRows(await directoryOf('recompiles'));
    // [0/4] failed (Unsupported: "Dynamo recompile limit exceeded"): its metrics have co_name
    // null and compile_directory has no `code` for it. The chart names frame 0 from its other
    // compiles (`f`, below).
    expect(rows.find((r) => r.compileId === '[0/4]')).toMatchObject({ status: 'failed', functionName: null, location: null });
  });
});

describe('recompiles per frame', () => {
  test('graph_breaks: 16 frames; only frame 6 recompiled', async () => {
    const frames = recompilesPerFrame(await directoryOf('graph_breaks'));
    // Frames 0-15 each compiled once, except frame 6 (torch_dynamo_resume_in_inner_at_25): [6/0]
    // and [6/1]. Restarted attempts such as [0/0] are not recompiles.
    expect(frames).toHaveLength(16);
    expect(frames[0]).toEqual({ frame: 'frame 6', functionName: 'torch_dynamo_resume_in_inner_at_25', compileIds: ['[6/0]', '[6/1]'] });
    expect(frames.slice(1).every((f) => f.compileIds.length === 1)).toBe(true);
    expect(frames[1]).toEqual({ frame: 'frame 0', functionName: 'forward', compileIds: ['[0/0_1]'] });
  });

  test('recompiles: frame 0 (f) 5 compiles, frame 1 (forward) 4, as in the recompiles table', async () => {
    const frames = recompilesPerFrame(await directoryOf('recompiles'));
    expect(frames.map((f) => [f.frame, f.functionName, f.compileIds.length])).toEqual([
      ['frame 0', 'f', 5], ['frame 1', 'forward', 4],
    ]);
    // The recompiles table lists only frames compiled more than once, with the same compiles.
    for (const name of ['recompiles', 'graph_breaks'] as const) {
      const table = await bundles[name].table('log0', 'recompiles');
      const fromDirectory = recompilesPerFrame(await directoryOf(name)).filter((f) => f.compileIds.length > 1);
      expect(fromDirectory.map((f) => f.compileIds), name)
        .toEqual(table?.frames.map((f) => f.compiles.map((c) => c.compile_id)));
    }
  });

  test('ranks_shifted rank 1: frame 0 recompiled ([0/0], [0/1]), frame 1 three times', async () => {
    const frames = recompilesPerFrame(await directoryOf('ranks_shifted', 'rank1'));
    expect(frames.map((f) => [f.frame, f.functionName, f.compileIds])).toEqual([
      ['frame 1', 'sync_grads', ['[1/0]', '[1/1]', '[1/2]']],
      ['frame 0', 'forward', ['[0/0]', '[0/1]']],
    ]);
  });
});

describe('artifacts', () => {
  test('numbered per name; bundle.artifact() reads the same text as `tlparse-build cat`', async () => {
    const b = bundles.graph_breaks;
    const compile = await b.compile('log0', '[1/0_1]');
    const directory = await b.table('log0', 'compile_directory');
    if (!compile || !directory) throw new Error('no [1/0_1]');
    const artifacts = numberedArtifacts(directory, compile);
    // [1/0_1] logs 16 artifacts, each name once: dynamo_output_graph first (736 bytes, 10 lines).
    expect(artifacts).toHaveLength(16);
    expect(artifacts.every((a) => a.nth === 0)).toBe(true);
    expect(artifacts[0]?.ref).toMatchObject({ name: 'dynamo_output_graph', size: 736, lines: 10, format: 'python' });
    const text = await b.artifact('log0', '[1/0_1]', 'inductor_output_code');
    expect(text).toBe(catArtifact(path.join(bundlesDir, 'graph_breaks'), 'log0', '[1/0_1]', 'inductor_output_code'));
    expect(text).toContain('def call(');
  });

  test('an artifact logged twice under one name gets nth 0 and 1', async () => {
    const b = bundles.ranks_shifted;
    const compile = await b.compile('rank0', '[0/0]');
    const directory = await b.table('rank0', 'compile_directory');
    if (!compile || !directory) throw new Error('no [0/0]');
    // rank 0's [0/0] is a training step: Inductor compiled a forward, then at the first backward
    // call a backward, so five names come twice (checked with zstd -dc on its compile_directory).
    const repeated = numberedArtifacts(directory, compile).filter((a) => a.nth > 0).map((a) => a.ref.name);
    expect(repeated).toEqual(['fx_graph_runnable', 'before_post_grad_graph', 'inductor_post_grad_graph',
      'inductor_output_code', 'fx_graph_cache_miss']);
    const [forward, backward] = [0, 1].map((nth) => b.artifact('rank0', '[0/0]', 'inductor_output_code', nth));
    expect(await forward).not.toBe(await backward);
    expect(await forward).toBe(catArtifact(path.join(bundlesDir, 'ranks_shifted'), 'rank0', '[0/0]', 'inductor_output_code'));
  });
});

describe('version refusal', () => {
  test('a bundle asking for the next reader version is refused with a message naming both versions', async () => {
    await expect(openFixture(bundlesDir, 'too_new')).rejects.toThrow(
      `needs a bundle reader of version ${READER_VERSION + 1} or newer; this bundle-loader.js is version ${READER_VERSION}.`);
  });
});

test('formatters', () => {
  expect([formatSeconds(null), formatSeconds(0.229988), formatSeconds(18.398263)]).toEqual(['—', '230 ms', '18.40 s']);
  expect([plural(1, 'restart'), plural(10, 'restart')]).toEqual(['1 restart', '10 restarts']);
  expect([formatBytes(736), formatBytes(78637), formatBytes(3 << 20)]).toEqual(['736 B', '76.8 KiB', '3.0 MiB']);
});
