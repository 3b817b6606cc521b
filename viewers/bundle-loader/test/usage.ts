// Type-checked by `tsc -p .` (npm test): the loader's API is typed by the generated schema types.
import { openBundle, openBundleFromFiles, compileArtifacts, filesFromDataTransfer, HttpError, type CompileEntry, type CompileStatus } from '../src/bundle-loader.js';

export async function failedCompiles(url: string): Promise<CompileEntry[]> {
  const bundle = await openBundle(url);
  const stream = bundle.manifest.streams[0].id;
  const directory = await bundle.table(stream, 'compile_directory');
  const failed: CompileStatus = 'failed';
  return (directory?.compiles ?? []).filter((c) => c.status === failed);
}

export async function alignedLabels(url: string): Promise<string[]> {
  const bundle = await openBundle(url);
  const alignment = await bundle.crossRankTable('compile_alignment');
  return alignment?.compiles.map((c) => c.label) ?? [];
}

/** The failed compiles of a large bundle, read one table part at a time (never the whole table). */
export async function failedCompileIds(url: string): Promise<string[]> {
  const bundle = await openBundle(url);
  const ids: string[] = [];
  for await (const part of bundle.tableParts(bundle.manifest.streams[0].id, 'compile_directory')) {
    ids.push(...part.compiles.filter((c) => c.status === 'failed').map((c) => c.compile_id));
  }
  for await (const part of bundle.crossRankTableParts('compile_alignment')) ids.push(...part.compiles.map((c) => c.label));
  return ids;
}

/** A picked folder's files (an `<input type=file webkitdirectory>`) or a drop, opened in the page. */
export async function localCompiles(input: HTMLInputElement, drop?: DataTransfer): Promise<string[]> {
  const files = drop ? await filesFromDataTransfer(drop) : [...(input.files ?? [])];
  const bundle = await openBundleFromFiles(files);
  const folder: string | null = bundle.localFolder;
  const directory = await bundle.table(bundle.manifest.streams[0].id, 'compile_directory');
  return (directory?.compiles ?? []).map((c) => `${folder}: ${c.compile_id}`);
}

/** Whether opening failed because the server wants a bearer token (a 401 with WWW-Authenticate: Bearer). */
export async function needsToken(url: string): Promise<boolean> {
  try {
    await openBundle(url);
    return false;
  } catch (e) {
    if (!(e instanceof HttpError)) return false;
    const status: number = e.status;
    const challenge: string | null = e.wwwAuthenticate;
    return status === 401 && /^Bearer\b/i.test(challenge ?? '');
  }
}

/** The names of every artifact a compile logged, in log order. */
export async function artifactNames(url: string, compileId: string): Promise<string[]> {
  const bundle = await openBundle(url);
  const directory = await bundle.table(bundle.manifest.streams[0].id, 'compile_directory');
  const compile = directory?.compiles.find((c) => c.compile_id === compileId);
  return directory && compile ? compileArtifacts(directory, compile).map((a) => a.name) : [];
}
