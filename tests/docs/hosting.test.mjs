// docs/hosting.md stays honest: each CORS configuration (the blocks after a `<!-- cors: KIND -->`
// marker, and the Azure command) parses and allows the same origins, GET and HEAD only, Range,
// and exposes the headers readers need; the S3 policy grants only reads under a prefix; every
// `tlparse-build ...` command on the page names a subcommand the binary has and only options its
// --help lists; its links to files and anchors resolve. scripts/test-hosting-s3 applies the S3
// blocks to moto's S3 server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = path.join(REPO, 'docs/hosting.md');
const text = fs.readFileSync(DOC, 'utf8');
const BIN = process.env.TLPARSE_BUILD || path.join(REPO, 'target/release/tlparse-build');

const ORIGINS = ['https://viewer.example.org', 'http://127.0.0.1:8000'];
const EXPOSED = ['Content-Length', 'Content-Range', 'ETag', 'Accept-Ranges'];
const sorted = (a) => [...a].sort();

/** The fenced block right after `<!-- MARKER -->`, indentation of a list item removed. */
function block(marker) {
  const m = new RegExp(`<!-- ${marker} -->\\s*\`\`\`(\\w+)\\n([\\s\\S]*?)\`\`\``).exec(text);
  assert.ok(m, `docs/hosting.md has no block after <!-- ${marker} -->`);
  const indent = /^ */.exec(m[2])[0].length;
  return { lang: m[1], body: m[2].split('\n').map((l) => l.slice(Math.min(indent, /^ */.exec(l)[0].length))).join('\n') };
}

test('the S3 CORS rules (s3api JSON): the origins, GET and HEAD, Range, the exposed headers', () => {
  const { lang, body } = block('cors: s3-cli');
  assert.equal(lang, 'json');
  const { CORSRules } = JSON.parse(body);
  assert.equal(CORSRules.length, 1);
  const [r] = CORSRules;
  assert.deepEqual(sorted(r.AllowedOrigins), sorted(ORIGINS));
  assert.deepEqual(sorted(r.AllowedMethods), ['GET', 'HEAD']);
  assert.ok(r.AllowedHeaders.includes('Range'));
  assert.deepEqual(sorted(r.ExposeHeaders), sorted(EXPOSED));
  assert.ok(r.MaxAgeSeconds > 0);
});

/** A small XML reader, enough for S3's CORS document: well-formed, no attributes but xmlns. */
function parseXml(xml) {
  const root = { name: '#root', children: [], text: '' };
  const stack = [root];
  const re = /<(\/?)([A-Za-z]+)((?:\s+xmlns="[^"]*")?)\s*>|([^<]+)/g;
  let m, end = 0;
  while ((m = re.exec(xml))) {
    assert.equal(m.index, end, `unexpected XML at ${xml.slice(end, end + 30)}`);
    end = re.lastIndex;
    if (m[4] !== undefined) { stack.at(-1).text += m[4].trim(); continue; }
    if (m[1]) {
      const open = stack.pop();
      assert.equal(open.name, m[2], `</${m[2]}> closes <${open.name}>`);
    } else {
      const el = { name: m[2], children: [], text: '' };
      stack.at(-1).children.push(el);
      stack.push(el);
    }
  }
  assert.equal(end, xml.length, 'XML does not end where expected');
  assert.equal(stack.length, 1, `<${stack.at(-1).name}> is not closed`);
  assert.equal(root.children.length, 1);
  return root.children[0];
}

test('the S3 CORS rules as XML say the same as the JSON', () => {
  const { lang, body } = block('cors: s3-xml');
  assert.equal(lang, 'xml');
  const doc = parseXml(body.trim());
  assert.equal(doc.name, 'CORSConfiguration');
  assert.equal(doc.children.length, 1);
  const rule = doc.children[0];
  assert.equal(rule.name, 'CORSRule');
  const all = (n) => rule.children.filter((c) => c.name === n).map((c) => c.text);
  const json = JSON.parse(block('cors: s3-cli').body).CORSRules[0];
  assert.deepEqual(all('AllowedOrigin'), json.AllowedOrigins);
  assert.deepEqual(all('AllowedMethod'), json.AllowedMethods);
  assert.deepEqual(all('AllowedHeader'), json.AllowedHeaders);
  assert.deepEqual(all('ExposeHeader'), json.ExposeHeaders);
  assert.deepEqual(all('MaxAgeSeconds'), [String(json.MaxAgeSeconds)]);
  const known = new Set(['AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader', 'MaxAgeSeconds']);
  for (const c of rule.children) assert.ok(known.has(c.name), `unknown element <${c.name}>`);
});

test('the GCS CORS file (a list of rules): the origins, GET and HEAD, the response headers', () => {
  const rules = JSON.parse(block('cors: gcs').body);
  assert.ok(Array.isArray(rules) && rules.length === 1);
  const [r] = rules;
  assert.deepEqual(sorted(Object.keys(r)), ['maxAgeSeconds', 'method', 'origin', 'responseHeader']);
  assert.deepEqual(sorted(r.origin), sorted(ORIGINS));
  assert.deepEqual(sorted(r.method), ['GET', 'HEAD']);
  for (const h of [...EXPOSED, 'Range']) assert.ok(r.responseHeader.includes(h), `responseHeader lacks ${h}`);
});

test('the R2 wrangler file: the origins, GET and HEAD, Range, the exposed headers, no * header', () => {
  const { rules } = JSON.parse(block('cors: r2-wrangler').body);
  assert.equal(rules.length, 1);
  const [r] = rules;
  assert.deepEqual(sorted(Object.keys(r)), ['allowed', 'exposeHeaders', 'maxAgeSeconds']);
  assert.deepEqual(sorted(r.allowed.origins), sorted(ORIGINS));
  assert.deepEqual(sorted(r.allowed.methods), ['GET', 'HEAD']);
  assert.ok(r.allowed.headers.includes('Range') && !r.allowed.headers.includes('*'));
  assert.deepEqual(sorted(r.exposeHeaders), sorted(EXPOSED));
});

test('the Azure command: the origins, GET HEAD OPTIONS, Range, the exposed headers', () => {
  const m = /^az storage cors add ([\s\S]*?)\n```/m.exec(text);
  assert.ok(m, 'no az storage cors add command');
  const args = m[1].replace(/\\\n/g, ' ').split(/\s+/).filter(Boolean);
  const values = (flag) => { const i = args.indexOf(flag); assert.ok(i >= 0, `az lacks ${flag}`); const out = []; for (let j = i + 1; j < args.length && !args[j].startsWith('--'); j++) out.push(args[j]); return out; };
  assert.deepEqual(values('--services'), ['b']);
  assert.deepEqual(sorted(values('--methods')), ['GET', 'HEAD', 'OPTIONS']);
  assert.deepEqual(sorted(values('--origins')), sorted(ORIGINS));
  assert.ok(values('--allowed-headers').includes('Range'));
  assert.deepEqual(sorted(values('--exposed-headers')), sorted(EXPOSED));
});

test('the S3 bucket policy grants anonymous s3:GetObject under a prefix, nothing else', () => {
  const policy = JSON.parse(block('policy: s3').body);
  assert.equal(policy.Version, '2012-10-17');
  assert.equal(policy.Statement.length, 1);
  const [s] = policy.Statement;
  assert.equal(s.Effect, 'Allow');
  assert.equal(s.Principal, '*');
  assert.equal(s.Action, 's3:GetObject');
  assert.match(s.Resource, /^arn:aws:s3:::[a-z0-9.-]+\/[^*]+\/\*$/, 'a prefix, not the whole bucket');
});

// ---------------------------------------------------------------------------------------------
// tlparse-build command lines

function help(args) {
  const r = spawnSync(BIN, [...args, '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, `${BIN} ${args.join(' ')} --help failed: ${r.stderr}`);
  return r.stdout;
}

/** Every `tlparse-build ...` command of the page: lines of sh blocks, and inline code. */
function commands() {
  const out = [];
  for (const m of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of m[1].replace(/\\\n\s*/g, ' ').split('\n')) {
      if (line.trim().startsWith('tlparse-build ')) out.push(line.trim());
    }
  }
  for (const m of text.matchAll(/`(tlparse-build [^`]+)`/g)) out.push(m[1]);
  return out;
}

test('every tlparse-build command on the page parses against the binary\'s help', () => {
  const cmds = commands();
  assert.ok(cmds.length >= 8, `found only ${cmds.length} commands`);
  const main = help([]);
  const subcommands = new Set([...main.split('Commands:')[1].split('\n\n')[0].matchAll(/^ {2}(\w[\w-]*)/gm)].map((m) => m[1]));
  const missing = new Set();
  const problems = [];
  for (const cmd of cmds) {
    const args = cmd.split(/\s+/).slice(1).filter((a) => !a.startsWith('#'));
    const first = args[0];
    // A word where a subcommand goes that is no path: a subcommand, which this binary must have.
    const looksLikeSub = /^[a-z]+$/.test(first) && !first.includes('/');
    if (looksLikeSub && !subcommands.has(first)) { missing.add(first); continue; }
    const sub = subcommands.has(first) ? [first] : [];
    const h = help(sub);
    for (const a of args) {
      if (!a.startsWith('-')) continue;
      const flag = a.split('=')[0];
      if (!new RegExp(`(^|[\\s,])${flag.replace(/[-]/g, '\\-')}([\\s,=<]|$)`, 'm').test(h)) {
        problems.push(`\`${cmd}\`: ${flag} is not an option of \`tlparse-build ${sub.join(' ')}\` (its --help)`);
      }
    }
  }
  if (missing.size) problems.push(`subcommands this tlparse-build lacks: ${[...missing].join(', ')}`);
  assert.deepEqual(problems, [], `docs/hosting.md does not match ${BIN} (is it built with publish, proxy and ` +
    `serve --allow-origin merged?):\n${problems.join('\n')}`);
});

test('links to files and anchors of the page resolve', () => {
  const anchors = new Set([...text.matchAll(/^#+ (.+)$/gm)].map((m) => m[1].toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
  const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
  assert.ok(links.length >= 5);
  for (const link of links) {
    if (/^https?:/.test(link)) continue;
    const [file, anchor] = link.split('#');
    if (file) assert.ok(fs.existsSync(path.join(REPO, 'docs', file)), `link to ${file}, which does not exist`);
    if (anchor && !file) assert.ok(anchors.has(anchor), `link to #${anchor}, which is no heading of the page`);
  }
});
