// fixtures.ts: test helpers: build bundles from the repository's fixtures-repo/ with tlparse-build,
// and open them from disk through a fetch that reads files (no server needed in Node).
// TLPARSE_REPO points at the tlparse-build checkout (default: two folders up, where this
// template lives in the repository); TLPARSE_BUILD at the binary (default: its target/release/).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as fzstd from 'fzstd';
import { openBundle, READER_VERSION, zstdStreamFromFzstd, type Bundle } from 'tlparse-bundle-loader';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The reader version `too_new/` asks for: one this loader does not have. */
const NEXT = READER_VERSION + 1;
export const REPO = path.resolve(process.env.TLPARSE_REPO ?? path.join(HERE, '../../..'));
export const BIN = path.resolve(process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build'));

/** The bundles the tests use: name → trace under fixtures-repo/. */
export const FIXTURES = {
  graph_breaks: 'torch-2.15/graph_breaks', // one stream, 27 compiles, 10 restarts
  recompiles: 'torch-2.15/recompiles', // two frames that recompile 4 and 3 times
  failures: 'torch-2.15/failures', // 6 failed compiles
  ranks_shifted: 'torch-2.15/ranks_shifted', // 4 ranks
  hostile: 'hostile/hostile.log', // strings full of <script> and onerror=
} as const;
export type FixtureName = keyof typeof FIXTURES;

/** Builds every fixture bundle into `outDir/<name>/`, plus `too_new/` (asking for the next reader version). */
export function buildBundles(outDir: string): void {
  if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run cargo build --release (or set TLPARSE_BUILD)`);
  for (const [name, trace] of Object.entries(FIXTURES)) {
    const input = path.join(REPO, 'fixtures-repo', trace);
    execFileSync(BIN, [input, '-o', path.join(outDir, name), '--overwrite', '-q', '--no-viewer'], { stdio: 'inherit' });
  }
  // A bundle from the future: same files, but its manifest asks for the next reader version.
  const tooNew = path.join(outDir, 'too_new');
  fs.cpSync(path.join(outDir, 'graph_breaks'), tooNew, { recursive: true });
  const manifestPath = path.join(tooNew, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(manifestPath, JSON.stringify({ ...manifest, format_version: `${NEXT}.0`, min_reader_version: NEXT }));
  // Its lite manifest (what the loader reads first) likewise: the manifest without its file lists
  // and hashes, here as plain JSON (the loader reads a file a host decoded already as well).
  const { files, viewer, ...lite } = manifest;
  const inputs = (lite.inputs as Record<string, unknown>[]).map(({ blake3, ...input }) => input);
  fs.writeFileSync(path.join(tooNew, 'manifest.lite.json.zst'), JSON.stringify({ ...lite, inputs, format_version: `${NEXT}.0`, min_reader_version: NEXT }));
}

/** A fetch that serves `dir` at `base` from disk (404 for anything else). */
export function fileFetch(dir: string, base: string): typeof fetch {
  return async (input) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const file = path.join(dir, decodeURIComponent(url.pathname.slice(new URL(base).pathname.length)));
    if (!url.href.startsWith(base) || !file.startsWith(dir + path.sep) || !fs.existsSync(file)) {
      return new Response('not found', { status: 404, statusText: 'Not Found' });
    }
    return new Response(fs.readFileSync(file));
  };
}

/** Opens `bundlesDir/<name>/` with the same options as the app (src/bundle.ts). */
export function openFixture(bundlesDir: string, name: FixtureName | 'too_new'): Promise<Bundle> {
  const base = `http://bundles.test/${name}/`;
  return openBundle(base, {
    fetch: fileFetch(path.join(bundlesDir, name), base),
    zstdStream: zstdStreamFromFzstd(fzstd),
  });
}

/** `tlparse-build cat --stream STREAM BUNDLE COMPILE_ID NAME`: an artifact's text as the CLI prints it. */
export function catArtifact(bundleDir: string, stream: string, compileId: string, name: string): string {
  return execFileSync(BIN, ['cat', '--stream', stream, bundleDir, compileId, name],
    { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
}
