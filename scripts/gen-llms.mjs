#!/usr/bin/env node
// Generates docs/llms.txt (llmstxt.org: a link to every doc page) and docs/llms-full.txt (the one
// self-contained file to give an LLM that writes a viewer, at most 40960 bytes) from:
//   - the doc pages themselves (titles; the "answers" column of docs/format.md's table lists);
//   - docs/llms-full.template.md, whose {{...}} placeholders are filled with
//     {{types}}        viewers/bundle-loader/src/schema.d.ts, comments stripped, one line a type;
//     {{statuses}}     the status enums of schema/v<FORMAT_MAJOR>/, first sentence of each value's description;
//     {{fields}}       the descriptions of the fields of FIELDS, whole;
//     {{json:NAME}}    excerpts of the committed test bundle crates/tlparse-bundle/tests/bundles/simple.
// Deterministic: the same inputs give the same bytes.
//
// Usage: node scripts/gen-llms.mjs            rewrite both files (scripts/regenerate runs it)
//        node scripts/gen-llms.mjs --check    exit 1 if either file is out of date
// Needs fzstd, installed in tests/browser by `npm ci` (scripts/regenerate and scripts/test do it).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const LIMIT = 40960;
const read = (rel) => fs.readFileSync(path.join(REPO, rel), 'utf8');
const exists = (rel) => fs.existsSync(path.join(REPO, rel));
/** The format version the code writes ("MAJOR.MINOR"), and the directory of its major's schemas. */
const SCHEMA_RS = read('crates/tlparse-bundle/src/schema/mod.rs');
const FORMAT_VERSION = /pub const FORMAT_VERSION: &str = "(\d+\.\d+)";/.exec(SCHEMA_RS)[1];
const FORMAT_MAJOR = Number(/pub const FORMAT_MAJOR: u32 = (\d+);/.exec(SCHEMA_RS)[1]);
const SCHEMA_DIR = `schema/v${FORMAT_MAJOR}`;

// ---------------------------------------------------------------------------------------------
// llms.txt

/** The first `# ` heading of a page, without markdown code marks. */
function title(rel) {
  const h1 = read(rel).split('\n').find((l) => l.startsWith('# '));
  return (h1 ?? `# ${rel}`).slice(2).trim();
}

/** `name` -> what the table answers, from the `| table | answers | page |` lists of format.md. */
function answers() {
  const out = new Map();
  for (const line of read('docs/format.md').split('\n')) {
    const m = /^\| `(\w+)` \| (.+?) \| \[\w+\]\((tables|cross_rank)\/\w+\.md\) \|$/.exec(line);
    if (m) out.set(`${m[3]}/${m[1]}`, m[2]);
  }
  return out;
}

const NOTES = {
  'docs/format.md': 'the whole contract: layout, the path rule, reading step by step, concepts, manifest, index rows, stacks, blob store, tables, versioning, byte costs',
  'docs/definitions.md': 'what each count means, once: compile ids, frame compiles and attempts, timed compiles, graph breaks (restarts apart), restarts, recompile N, compile time (forward, backward lazy or inside, total; wall span apart), failures, cache lookups',
  'docs/hosting.md': 'sharing a bundle: GitHub Pages (a workflow), S3, GCS, R2 and Azure with their CORS configuration, the proxy, local serving, and what a bundle reveals',
  'docs/privacy.md': 'what a bundle reveals: what the build records (relative paths, skipped files counted), what the logs themselves carry, what to check before publishing',
  'docs/perf-notes.md': 'for contributors: where a build\'s time and memory go, compression settings, and what was tried and not kept, with measured figures',
  'docs/scale.md': 'big jobs: `shard` each rank log where it is, `merge` the shards into the bundle a one-run build makes; recipes for Ray, Slurm, Kubernetes; logs on node-local disks',
  'docs/llms-full.txt': 'everything needed to write a viewer in one file (types, tested reference code, the fields to read with care, the JS loader\'s API, id grammar, statuses, caveats, excerpts)',
  'docs/cross_rank/chrome_trace.md': 'every rank\'s chromium events in one Chrome trace, one process per rank',
  'docs/cross_rank/runtime_estimates_trace.md': 'Inductor\'s estimated op runtimes per graph as a Chrome trace, one process per rank',
  'viewers/README.md': 'the catalogue of viewers and readers; the reference viewer shipped in every bundle, and the rules its pages follow',
  'viewers/react-template/README.md': 'a Vite + React + TypeScript viewer to fork: run it, build it for GitHub Pages, add a page',
  'viewers/bundle-loader/README.md': 'the JavaScript reader (browsers, workers, Node): API and costs',
  'crates/tlparse-bundle/README.md': 'the Rust reader: open a bundle, read tables and artifacts, other byte sources, limits',
  'python/README.md': 'the Python reader',
};

const sortedPages = (dir) => fs.readdirSync(path.join(REPO, dir)).filter((f) => f.endsWith('.md')).sort().map((f) => `${dir}/${f}`);

/** Every doc page, in sections. Pages of docs/ not listed elsewhere go to "Other pages". */
export function pages() {
  const readers = ['viewers/README.md', 'viewers/react-template/README.md', 'viewers/bundle-loader/README.md',
    'crates/tlparse-bundle/README.md', 'python/README.md'];
  const sections = [
    ['Format', ['docs/format.md', 'docs/definitions.md']],
    ['Per-stream tables', sortedPages('docs/tables')],
    ['Cross-rank tables', sortedPages('docs/cross_rank')],
    ['Readers and viewers', readers.filter(exists)],
  ];
  const listed = new Set(sections.flatMap(([, p]) => p));
  const other = sortedPages('docs').filter((p) => !listed.has(p) && !p.endsWith('.template.md'));
  if (other.length) sections.push(['Other pages', other]);
  sections.push(['Optional', ['docs/llms-full.txt']]);
  return sections;
}

export function llmsTxt() {
  const table = answers();
  const out = [
    '# tlparse bundle format',
    '',
    `> A tlparse bundle (format version ${FORMAT_VERSION}) is a directory of static files that \`tlparse-build\` compiles from PyTorch`,
    '> `TORCH_TRACE` logs, for viewers that do no heavy work: `manifest.json` (read first), a zstd JSONL event index per',
    '> stream, content-addressed payloads (blobs) in zstd packs found through blob-index shards, and precomputed',
    '> analysis tables per stream (compile directory, recompiles, graph breaks, guards, compile time, ...) and across',
    '> ranks. Every path in it is relative to the bundle root. Start with format.md, or give llms-full.txt to an LLM.',
    '',
    'Generated by scripts/gen-llms.mjs (run scripts/regenerate); it lists every doc page. JSON Schemas of every file are',
    `in ${SCHEMA_DIR}/ of the repository and schema/ of every bundle.`,
  ];
  for (const [section, list] of pages()) {
    out.push('', `## ${section}`, '');
    for (const page of list) {
      const key = page.replace(/^docs\//, '').replace(/\.md$/, '');
      const note = NOTES[page] ?? table.get(key);
      const name = page.endsWith('.txt') ? page.split('/').pop() : title(page);
      const link = path.relative('docs', page);
      out.push(`- [${name}](${link})${note ? `: ${note}` : ''}`);
    }
  }
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// llms-full.txt

/** Declarations llms-full.txt leaves out (it has a size limit): the full manifest's own types (a
 * viewer reads the lite one; the template says what the full one adds). */
const OMITTED = ['BundleFiles', 'Manifest', 'Input', 'FileEntry', 'ViewerFile'];
/** Interfaces written as `extends` of another whose members they all have. */
const EXTENDS = { CompileArtifact: 'ArtifactRef', VolumeRow: 'Volume' };

/** Interfaces mapping table names to types, written as the names and the exceptions to the rule
 * that a table's type is its name in PascalCase. */
const NAME_MAPS = ['StreamTables', 'CrossRankTables'];
const pascal = (name) => name.replace(/(^|_)(\w)/g, (_, __, c) => c.toUpperCase());

function nameMap(name, fields) {
  const pairs = fields.map((f) => f.split(':'));
  const odd = pairs.filter(([k, v]) => pascal(k) !== v).map(([k, v]) => `${k}: ${v}`);
  return `// ${name}: ${pairs.map(([k]) => k).join(', ')}; each table's type is its name in PascalCase`
    + (odd.length ? ` but ${odd.join(', ')}` : '');
}

/** The members of a one-line interface body, split at its top-level semicolons. */
function members(body) {
  const out = [];
  let depth = 0, cur = '';
  for (const c of body) {
    if ('{(['.includes(c)) depth++;
    if ('})]'.includes(c)) depth--;
    if (c === ';' && depth === 0) { out.push(cur); cur = ''; } else cur += c;
  }
  return cur ? [...out, cur] : out;
}

/** The top-level declarations of schema.d.ts, comments stripped, each on one line. */
export function compactTypes(dts) {
  const text = dts.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const decls = [];
  let depth = 0, start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) { decls.push(text.slice(start, i + 1)); start = i + 1; }
    } else if (c === ';' && depth === 0) { decls.push(text.slice(start, i + 1)); start = i + 1; }
  }
  const lines = decls
    .map((d) => d.replace(/\s+/g, ' ').trim().replace(/^export /, ''))
    .filter((d) => d && !OMITTED.includes(/^(?:interface|type) (\w+)/.exec(d)?.[1]))
    .map((d) => d.replace(/\s*([{};:|,=()[\]<>?])\s*/g, '$1').replace(/;\}/g, '}').replace(/^(interface|type)(?=\w)/, '$1 '))
    .map((d) => d.replace(/^type (\w+)=\|?/, 'type $1='));
  const body = (name) => {
    const line = lines.find((l) => l.startsWith(`interface ${name}{`));
    if (!line) throw new Error(`schema.d.ts has no interface ${name}`);
    return members(line.slice(`interface ${name}{`.length, -1));
  };
  return lines.map((line) => {
    const name = /^interface (\w+)\{/.exec(line)?.[1];
    if (NAME_MAPS.includes(name)) return nameMap(name, body(name));
    if (!EXTENDS[name]) return line;
    const own = body(name), base = body(EXTENDS[name]);
    if (!base.every((m) => own.includes(m))) throw new Error(`${name} lacks members of ${EXTENDS[name]}`);
    return `interface ${name} extends ${EXTENDS[name]}{${own.filter((m) => !base.includes(m)).join(';')}}`;
  }).join('\n');
}

// Enums whose values need words (the file has a size limit); the others' values are listed in
// the types, and a viewer shows them as they are.
const STATUSES = ['CompileStatus'];

/** The first sentence of a description, on one line (a period inside parentheses, or of "e.g.",
 * ends none). */
export function firstSentence(text) {
  const flat = text.replace(/\s+/g, ' ').trim();
  let depth = 0;
  for (let i = 0; i < flat.length; i++) {
    const c = flat[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === '.' && depth === 0 && (i + 1 === flat.length || flat[i + 1] === ' ')
      && !/\b(e\.g|i\.e)$/.test(flat.slice(0, i))) return flat.slice(0, i + 1);
  }
  return flat;
}

/** Every type of schema/v<FORMAT_MAJOR>/ by name: each file's root (by its title) and `$defs`. */
function schemaDefs() {
  const defs = new Map();
  const walk = (dir) => {
    for (const f of fs.readdirSync(dir).sort()) {
      const p = path.join(dir, f);
      if (fs.statSync(p).isDirectory()) { walk(p); continue; }
      const schema = JSON.parse(fs.readFileSync(p, 'utf8'));
      if (schema.title && !defs.has(schema.title)) defs.set(schema.title, schema);
      for (const [k, v] of Object.entries(schema.$defs ?? {})) if (!defs.has(k)) defs.set(k, v);
    }
  };
  walk(path.join(REPO, SCHEMA_DIR));
  return defs;
}

export function statuses() {
  const defs = schemaDefs();
  const out = [];
  for (const name of STATUSES) {
    const def = defs.get(name);
    if (!def?.oneOf) throw new Error(`${SCHEMA_DIR} has no enum ${name}`);
    out.push(`- \`${name}\`:`);
    // tlparse's names for a value ("(tlparse: green, `status-ok`)") are left out.
    const brief = (d) => firstSentence(d ?? '')
      .replace(/ ?\(([^()]*)\)/g, (all, inner) => {
        const kept = inner.replace(/(^|[;,] ?)tlparse[^;)]*/g, '');
        return kept === inner ? all : kept ? ` (${kept})` : '';
      });
    for (const v of def.oneOf) out.push(`  - \`${v.const}\`: ${brief(v.description)}`);
  }
  return out.join('\n');
}

/** The fields whose schema description llms-full.txt quotes (its types have no comments): those a
 * viewer writer misreads from the name and type alone (which list, which field to prefer, unit,
 * when null, what a suffix means). A third element quotes the description from that phrase on. */
const FIELDS = [
  ['Guards', 'guard_trees'], ['Guards', 'dynamo_guards'],
  ['CompileEntry', 'code'], ['CompileEntry', 'co_name'],
  ['ArtifactRef', 'name', 'Not unique'],
  ['CompileEntry', 'start_ts'], ['CompileEntry', 'end_ts'], ['CompileEntry', 'start_time'],
  ['ArtifactChange', 'name'], ['ArtifactChange', 'before'], ['Changes', 'added'],
  ['ShapeGuard', 'user_frame', 'the innermost'],
];

export function fields() {
  const defs = schemaDefs();
  return FIELDS.map(([type, field, from]) => {
    const description = defs.get(type)?.properties?.[field]?.description?.replace(/\s+/g, ' ').trim();
    if (!description) throw new Error(`${SCHEMA_DIR} has no description of ${type}.${field}`);
    const at = from ? description.indexOf(from) : 0;
    if (at < 0) throw new Error(`${type}.${field}'s description has no "${from}"`);
    return `- \`${type}.${field}\`: ${from ? '… ' : ''}${description.slice(at)}`;
  }).join('\n');
}

const BUNDLE = 'crates/tlparse-bundle/tests/bundles/simple';

function bundleJson(rel) {
  const require = createRequire(path.join(REPO, 'tests/browser/package.json'));
  const { decompress } = require('fzstd');
  let bytes = fs.readFileSync(path.join(REPO, BUNDLE, rel));
  if (rel.endsWith('.zst')) bytes = decompress(new Uint8Array(bytes));
  const text = Buffer.from(bytes).toString('utf8');
  return rel.includes('.jsonl') ? text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) : JSON.parse(text);
}

const pick = (obj, keys) => Object.fromEntries(keys.filter((k) => k in obj).map((k) => [k, obj[k]]));

/** The excerpts of the committed test bundle, as fenced JSON. */
export function excerpts() {
  const m = bundleJson('manifest.json');
  const s = m.streams[0];
  const manifest = {
    ...pick(m, ['format', 'format_version', 'min_reader_version']),
    streams: [{ ...pick(s, ['id', 'rank', 'index', 'stacks']), tables: pick(s.tables, ['compile_directory']) }],
    blobs: { ...pick(m.blobs, ['index_prefix_len', 'index_path']), packs: m.blobs.packs.slice(0, 1).map((p) => pick(p, ['path'])) },
  };
  const directory = bundleJson(s.tables.compile_directory.parts[0]);
  const c = directory.compiles[0];
  const own = directory.artifacts.slice(c.first_artifact, c.first_artifact + c.artifact_count);
  const code = own.find((a) => a.name === 'inductor_output_code');
  const entry = {
    compiles: [pick(c, ['compile_id', 'status', 'co_name', 'code', 'start_ts', 'total_s', 'first_artifact',
      'artifact_count'])],
    artifacts: [code],
  };
  const shardPath = m.blobs.index_path.replace('{prefix}', m.blobs.index_prefix_len ? code.blob.slice(0, m.blobs.index_prefix_len) : 'all');
  const shard = { [code.blob]: bundleJson(shardPath)[code.blob] };
  // As stored: a row's seq is its position in the file, and its line is left out where implied.
  const row = pick(bundleJson(s.index)[code.seq], ['line', 'ts', 'kind', 'compile_id', 'cid', 'payload']);
  const stacks = bundleJson(s.stacks);
  const fence = (v) => '```json\n' + JSON.stringify(v) + '\n```';
  return {
    manifest: fence(manifest),
    compile_entry: fence(entry),
    shard: fence(shard),
    index_row: fence(row),
    stacks: fence({ frames: stacks.frames.slice(0, 1), stacks: stacks.stacks.slice(0, 1) }),
  };
}

export function llmsFullTxt() {
  const types = compactTypes(read('viewers/bundle-loader/src/schema.d.ts'));
  const json = excerpts();
  const fill = {
    types,
    statuses: statuses(),
    fields: fields(),
  };
  const template = read('docs/llms-full.template.md')
    .replace(/\n<!-- docs\/llms-full\.txt is GENERATED[\s\S]*?-->\n/, '');
  const out = template.replace(/\{\{(json:)?(\w+)\}\}/g, (_, isJson, name) => {
    const v = isJson ? json[name] : fill[name];
    if (v === undefined) throw new Error(`unknown placeholder {{${isJson ?? ''}${name}}}`);
    return v;
  });
  const header = '<!-- GENERATED by scripts/gen-llms.mjs from docs/llms-full.template.md and the files it names: do not edit; run scripts/regenerate. -->\n';
  return header + out;
}

export function outputs() {
  return { 'docs/llms.txt': llmsTxt(), 'docs/llms-full.txt': llmsFullTxt() };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [rel, text] of Object.entries(outputs())) {
    const size = Buffer.byteLength(text);
    if (rel.endsWith('llms-full.txt') && size > LIMIT) {
      console.error(`${rel}: ${size} bytes, over the limit of ${LIMIT}: shorten docs/llms-full.template.md`);
      stale = true;
    }
    const current = exists(rel) ? read(rel) : null;
    if (check) {
      if (current !== text) {
        console.error(`${rel} is out of date: run scripts/regenerate`);
        stale = true;
      }
    } else if (current !== text) {
      fs.writeFileSync(path.join(REPO, rel), text);
      console.log(`wrote ${rel} (${size} bytes)`);
    }
  }
  process.exit(stale ? 1 : 0);
}
