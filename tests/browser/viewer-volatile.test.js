// The viewer's maskVolatile (viewers/reference-html/viewer/volatile.js) on the cases of
// tests/volatile_cases.json, the same file tests/it/volatile.rs holds mask_volatile (Rust) to:
// the Compare page and `tlparse-build compare` mask payloads by one rule. Plain Node: the module
// imports nothing, so it is loaded as it is served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const cases = JSON.parse(readFileSync(new URL('tests/volatile_cases.json', root), 'utf8'));
const source = readFileSync(new URL('viewers/reference-html/viewer/volatile.js', root), 'utf8');
const { maskVolatile } = await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);

test('the shared cases hold', () => {
  assert.ok(cases.masked.length > 5 && cases.same.length > 5 && cases.different.length > 5);
  for (const [text, want] of cases.masked) assert.equal(maskVolatile(text), want, JSON.stringify(text));
  for (const [a, b] of cases.same) assert.equal(maskVolatile(a), maskVolatile(b), `${JSON.stringify(a)} and ${JSON.stringify(b)}`);
  for (const [a, b] of cases.different) assert.notEqual(maskVolatile(a), maskVolatile(b), `${JSON.stringify(a)} and ${JSON.stringify(b)}`);
  for (const [name, a, b, same] of cases.named) assert.equal(maskVolatile(a, name) === maskVolatile(b, name), same, `${name}: ${JSON.stringify(a)}`);
});

test('a long payload masks in linear time', () => {
  const line = "| +- ID_MATCH: ___check_obj_id(G['torch'], 139958002446672), size=[8, 16]\n";
  const text = line.repeat(20000);
  const start = performance.now();
  assert.equal(maskVolatile(text), line.replace('139958002446672', '<?>').repeat(20000));
  assert.ok(performance.now() - start < 2000);
});
