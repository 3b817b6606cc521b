// hostile.test.tsx: strings from a trace are user code and may hold HTML. The components render
// them as text: rendered to HTML (react-dom/server), the hostile fixture's `<script>`,
// `<img onerror=...>` and `javascript:` strings come out escaped, and every link stays in the app.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderToStaticMarkup } from 'react-dom/server';
import { beforeAll, expect, inject, test } from 'vitest';
import type { Bundle, CompileDirectory, CompileEntry } from 'tlparse-bundle-loader';
import { TextBlock } from '../src/components/ArtifactText';
import { Artifacts, CompileFacts } from '../src/components/CompilePage';
import { RecompilesChart } from '../src/components/RecompilesChart';
import { openFixture } from './fixtures';

let bundle: Bundle;
let compile: CompileEntry;
let directory: CompileDirectory;
const route = { bundle: 'http://bundles.test/hostile/', compile: '[0/0]' };

beforeAll(async () => {
  bundle = await openFixture(inject('bundlesDir'), 'hostile');
  const found = await bundle.compile('log0', '[0/0]');
  const dir = await bundle.table('log0', 'compile_directory');
  if (!found || !dir) throw new Error('hostile.log has no [0/0]');
  compile = found;
  directory = dir;
});

/** No element or attribute from the trace survived: only escaped text, only in-app links. */
function expectInert(html: string): void {
  // Escaped text holds no `<`: every `<...>` is an element React made.
  const tags = html.match(/<[a-z][^>]*>/gi) ?? [];
  expect(tags.filter((t) => /^<(script|img|svg|iframe|textarea)\b/i.test(t))).toEqual([]);
  // React quotes every attribute value (a `"` inside one is &quot;): list the attribute names.
  const attributes = tags.flatMap((t) => [...t.matchAll(/\s([\w:-]+)="[^"]*"/g)].map((m) => m[1]));
  expect(attributes).toContain('class'); // the parsing above found the attributes
  expect(attributes.filter((name) => /^on/i.test(name ?? ''))).toEqual([]); // no event handler
  for (const [, href] of html.matchAll(/href="([^"]*)"/g)) expect(href).toMatch(/^\?/);
}

test('the hostile fixture really is hostile', () => {
  // hostile.log's frame is named `<script>window.__pwned=1</script>` (its co_name in the metrics).
  expect(compile.co_name).toBe('<script>window.__pwned=1</script>');
  expect(compile.restart_reasons.join('\n')).toContain('<img src=x onerror="window.__pwned=1">');
});

test('compile facts and artifacts render hostile strings as text', () => {
  const html = renderToStaticMarkup(<><CompileFacts compile={compile} route={route} /><Artifacts directory={directory} compile={compile} route={route} /></>);
  expectInert(html);
  expect(html).toContain('&lt;script&gt;window.__pwned=1&lt;/script&gt;');
  expect(html).toContain('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;');
  expect(html).toContain('javascript:window.__pwned=1'); // as text, never as a link
});

test('the recompiles chart renders a hostile function name as text', async () => {
  const html = renderToStaticMarkup(<RecompilesChart directory={await bundle.table('log0', 'compile_directory')} route={route} />);
  expectInert(html);
  expect(html).toContain('&lt;script&gt;window.__pwned=1&lt;/script&gt;');
});

test('an artifact\'s text is shown in a <pre> as text', async () => {
  const text = await bundle.artifact('log0', '[0/0]', 'dynamo_graph_break_reason');
  expect(text).toContain('<img src=x onerror="window.__pwned=1">');
  const html = renderToStaticMarkup(<TextBlock title="dynamo_graph_break_reason" text={text} />);
  expectInert(html);
  expect(html).toContain('<pre>Graph break in user code at /home/user/&lt;script&gt;window.__pwned=1&lt;/script&gt;/model.py:21');
  const plain = renderToStaticMarkup(<TextBlock title="x" text={'<img src=x onerror=alert(1)>'} />);
  expect(plain).toBe('<section class="artifact-text" aria-label="Artifact x"><h3>x</h3><pre>&lt;img src=x onerror=alert(1)&gt;</pre></section>');
});

test('the source never builds HTML from strings or runs strings as code', () => {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
  const files = fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f));
  expect(files.length).toBeGreaterThan(10);
  for (const file of files) {
    const code = fs.readFileSync(path.join(src, file), 'utf8');
    expect(code, file).not.toMatch(/dangerouslySetInnerHTML|innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(/);
  }
});
