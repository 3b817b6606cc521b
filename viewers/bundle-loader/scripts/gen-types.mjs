// gen-types.mjs: writes src/schema.d.ts, the TypeScript types of every bundle file, from the JSON
// Schemas in schema/vN/ (N = the loader's READER_VERSION), with json-schema-to-typescript.
// `node scripts/gen-types.mjs --check` writes nothing and exits 1 when the file is stale.
// Run by scripts/regenerate; test/types-drift.test.js fails until it is run.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';
import { READER_VERSION } from '../src/bundle-loader.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../../..');
export const OUT = path.join(HERE, '../src/schema.d.ts');

/** Every schema file of a version directory, sorted: [path relative to it, parsed schema]. */
function schemas(dir) {
  const out = [];
  const walk = (sub) => {
    for (const name of fs.readdirSync(path.join(dir, sub)).sort()) {
      const rel = path.posix.join(sub, name);
      if (fs.statSync(path.join(dir, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.schema.json')) out.push([rel, JSON.parse(fs.readFileSync(path.join(dir, rel), 'utf8'))]);
    }
  };
  walk('');
  return out;
}

/**
 * One schema holding every file's root type and every definition (the files share definitions
 * of the same Rust types: they must be identical), so each type is declared once.
 */
function merged(files) {
  const defs = {};
  const put = (name, def, where) => {
    if (name in defs && JSON.stringify(defs[name]) !== JSON.stringify(def)) {
      throw new Error(`${where}: definition ${name} differs from another schema's`);
    }
    defs[name] = def;
  };
  const roots = {};
  for (const [rel, schema] of files.map(([rel, schema]) => [rel, refsAlone(schema)])) {
    const { $schema, $defs, ...root } = schema;
    for (const [name, def] of Object.entries($defs ?? {})) put(name, def, rel);
    put(root.title, root, rel);
    roots[rel] = root.title;
  }
  return { defs, roots };
}

/**
 * A copy of a schema where a `$ref` with sibling keywords (schemars writes a property's
 * description beside its `$ref`) becomes `{description, allOf: [{$ref}]}`: json-schema-to-typescript
 * would otherwise declare a copy of the referenced type (`Foo1`) for every such use.
 */
function refsAlone(node) {
  if (Array.isArray(node)) return node.map(refsAlone);
  if (node === null || typeof node !== 'object') return node;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, refsAlone(v)]));
  if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    const { $ref, ...rest } = out;
    return { ...rest, allOf: [{ $ref }] };
  }
  return out;
}

/** Maps from table name to type, so `table('compile_directory')` can be typed. */
function tableMaps(roots) {
  const lines = [];
  for (const [dir, iface, doc] of [['tables/', 'StreamTables', 'per-stream tables (`manifest.streams[i].tables`)'],
    ['cross_rank/', 'CrossRankTables', 'cross-rank tables (`manifest.cross_rank.tables`)']]) {
    lines.push(`/** The ${doc}, by name. */`, `export interface ${iface} {`);
    for (const [rel, title] of Object.entries(roots)) {
      if (rel.startsWith(dir)) lines.push(`  ${path.posix.basename(rel, '.schema.json')}: ${title};`);
    }
    lines.push('}', '');
  }
  return lines.join('\n');
}

export async function generate() {
  const version = `v${READER_VERSION}`;
  const files = schemas(path.join(REPO, 'schema', version));
  const { defs, roots } = merged(files);
  const root = {
    title: 'BundleFiles',
    description: 'Every JSON file type of a bundle, by its root type name.',
    type: 'object',
    properties: Object.fromEntries(Object.values(roots).map((t) => [t, { $ref: `#/$defs/${t}` }])),
    additionalProperties: false,
    $defs: defs,
  };
  const banner = `// schema.d.ts: the TypeScript types of every tlparse bundle file, format ${READER_VERSION}.x.\n` +
    `// GENERATED from schema/${version}/ by viewers/bundle-loader/scripts/gen-types.mjs: do not edit;\n` +
    '// run scripts/regenerate.\n';
  const ts = await compile(root, 'BundleFiles', {
    bannerComment: banner,
    additionalProperties: false,
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    format: true,
    style: { singleQuote: true, printWidth: 110 },
    $refOptions: { resolve: { external: false } },
  });
  // json-schema-to-typescript notes where each type came from; in one merged schema that says
  // nothing, so those notes (and comments left empty by removing them) go.
  const note = String.raw` *\* This interface was referenced by .*\n *\* via the .*\.`;
  const tidy = ts
    .replace(new RegExp(String.raw`\n *\/\*\*\n${note}\n *\*\/`, 'g'), '')
    .replace(new RegExp(String.raw`\n *\*\n${note}`, 'g'), '');
  return `${tidy}\n${tableMaps(roots)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await generate();
  if (process.argv.includes('--check')) {
    if (fs.readFileSync(OUT, 'utf8') !== text) {
      console.error(`${path.relative(REPO, OUT)} is stale: run scripts/regenerate`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(OUT, text);
    console.log(`wrote ${path.relative(REPO, OUT)} (${text.length} bytes)`);
  }
}
