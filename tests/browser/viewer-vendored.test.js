// The viewer's vendored zstd decoder (viewer/fzstd.js) is exactly the npm package locked here,
// with its licence: scripts/vendor-viewer-deps.mjs --check fails otherwise, naming the command
// that rewrites it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO } from './viewer-harness.js';

test('viewer/fzstd.js is the locked fzstd package, unchanged', () => {
  const check = spawnSync(process.execPath, [path.join(REPO, 'scripts/vendor-viewer-deps.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});
