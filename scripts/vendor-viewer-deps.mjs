#!/usr/bin/env node
// Copies the reference viewer's one third-party module, the zstd decoder fzstd, from the version
// locked in tests/browser/package-lock.json into viewers/reference-html/viewer/fzstd.js, with its
// licence on top. The viewer has no build step, so the copy is committed; `--check` (run by the
// browser tests) fails if the committed copy differs from what this script would write.
//
// Usage: node scripts/vendor-viewer-deps.mjs [--check]   (after `npm ci` in tests/browser)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = path.join(REPO, 'tests/browser/node_modules/fzstd');
const TARGET = path.join(REPO, 'viewers/reference-html/viewer/fzstd.js');

/** The vendored file: a header naming the package and its licence, then the module unchanged. */
export function vendoredFzstd() {
  if (!fs.existsSync(PACKAGE)) throw new Error(`${PACKAGE} is missing: run \`npm ci\` in tests/browser`);
  const { version } = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
  const licence = fs.readFileSync(path.join(PACKAGE, 'LICENSE'), 'utf8').trimEnd();
  const source = fs.readFileSync(path.join(PACKAGE, 'esm/index.mjs'), 'utf8');
  const header = [
    `fzstd ${version} (npm package fzstd, https://github.com/101arrowz/fzstd): esm/index.mjs, unchanged.`,
    'Vendored by scripts/vendor-viewer-deps.mjs from the version locked in tests/browser; do not edit.',
    '',
    ...licence.split('\n'),
  ].map((line) => (line ? `// ${line}` : '//'));
  return `${header.join('\n')}\n\n${source}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = vendoredFzstd();
  if (process.argv.includes('--check')) {
    const committed = fs.existsSync(TARGET) ? fs.readFileSync(TARGET, 'utf8') : '';
    if (committed !== wanted) {
      console.error(`${path.relative(REPO, TARGET)} is out of date: run scripts/regenerate`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(TARGET, wanted);
    console.log(`wrote ${path.relative(REPO, TARGET)}`);
  }
}
