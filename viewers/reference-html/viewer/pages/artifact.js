// pages/artifact.js: one payload (`#/artifact?s=&blob=&name=&id=[&line=N]`): generated code, FX
// graphs, repros, JSON and text in the code view (code.js), with copy, download (the payload's
// exact bytes, named so a Python repro runs as saved) and a breadcrumb back to its compile.

import { h, bytes, count, note, empty, download, statusBadge, replaceUrl } from '../dom.js';
import { codeView, prettyJson } from '../code.js';
import { loadDirectory, safeFileName, tlparseName } from '../compile-data.js';
import { findBox } from '../find.js';

export async function render(ctx) {
  const blob = ctx.params.get('blob') ?? '';
  const name = ctx.params.get('name') ?? '';
  const id = ctx.params.get('id');
  const line = Number(ctx.params.get('line')) || null;
  const dir = await loadDirectory(ctx);
  const compile = id ? dir?.byId.get(id) : null;
  const pool = compile ? compile.artifacts : id ? [] : dir?.unattributed ?? [];
  const art = pool.find((a) => a.blob === blob && a.name === name) ?? pool.find((a) => a.blob === blob) ?? null;

  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    h('a', { href: ctx.href('compiles') }, 'Compiles'), ' › ',
    compile ? [h('a', { href: ctx.href('compile', { id }) }, id), ' ', statusBadge(compile.status), ' › ']
      : id ? [id, ' › '] : ['unattributed', ' › '],
    h('span', { class: 'crumb-here' }, name || blob));

  if (!/^[0-9a-f]{32}$/.test(blob)) {
    return h('div', null, crumbs, h('h1', null, 'Artifact'),
      empty('No payload named: this link has no valid blob id. Open an artifact from a compile\'s page.'));
  }
  let data;
  try {
    data = await ctx.bundle.blob(blob);
  } catch (e) {
    return h('div', null, crumbs, h('h1', null, name || 'Artifact'),
      empty(`This bundle has no payload ${blob} (${e.message}). The link may come from another bundle.`));
  }
  const text = new TextDecoder().decode(data);
  const format = art?.format ?? guessFormat(name, text);

  // One-line JSON (most artifacts) is unreadable as is: show it pretty-printed.
  let shown = text;
  let pretty = false;
  if (format === 'json' && !text.trimEnd().includes('\n')) {
    const p = prettyJson(text.trim());
    if (p != null) { shown = p; pretty = true; }
  }
  const language = format === 'python' ? 'python' : format === 'json' ? 'json' : 'text';
  const onLine = (n) => replaceUrl(ctx.href('artifact', { blob, name: name || undefined, id: id ?? undefined, line: n }));
  const view = codeView(shown, { language, line, name: 'artifact', onLine });

  const runnables = await ctx.table('runnables');
  const runnable = runnables?.files.find((f) => f.artifact.blob === blob && (!art || f.artifact.seq === art.seq))
    ?? runnables?.files.find((f) => f.artifact.blob === blob);
  const ext = format === 'python' ? 'py' : format === 'json' ? 'json' : 'txt';
  const fileName = runnable?.file_name ?? safeFileName(`${name || blob}${compile ? `__${compile.dir}` : ''}.${ext}`);

  const status = h('span', { class: 'cv-status', role: 'status' });
  const flash = (msg) => { status.textContent = msg; setTimeout(() => { if (status.textContent === msg) status.textContent = ''; }, 2500); };
  const copyButton = h('button', {
    type: 'button', class: 'copy-button', title: 'Copy the payload as logged',
    on: { click: async () => flash(await copyText(text) ? 'Copied' : 'Copy failed: select the text instead') },
  }, 'Copy');
  const downloadButton = h('button', {
    type: 'button', class: 'download-button', title: `Save as ${fileName}`,
    on: { click: () => download(fileName, data, format === 'json' ? 'application/json' : 'text/plain') },
  }, 'Download ', h('span', { class: 'muted' }, ext === 'py' ? '.py' : `.${ext}`));

  ctx.expose('artifact', {
    blob, name, tlparseName: art?.tlparse_name ?? null, compileId: id, format, language, pretty, lines: view.lineCount, size: data.length, fileName,
    foldable: view.foldable,
  });

  return h('div', { class: 'artifact-page' },
    crumbs,
    h('h1', { class: 'artifact-title' }, name || blob),
    h('div', { class: 'toolbar artifact-tools' },
      h('span', { class: 'badge fmt-badge' }, language === 'python' ? 'Python' : language === 'json' ? 'JSON' : 'text'),
      h('span', { class: 'muted' }, `${bytes(data.length)} · ${count(view.lineCount)} lines${pretty ? ' (pretty-printed)' : ''}`),
      art ? h('span', { class: 'muted' }, `log line ${count(art.line)}`) : null,
      art ? tlparseName(art) : null,
      h('span', { class: 'spacer' }),
      view.foldable ? [
        h('button', { type: 'button', on: { click: () => view.foldAll() } }, 'Fold all'),
        h('button', { type: 'button', on: { click: () => view.unfoldAll() } }, 'Expand all'),
      ] : null,
      findBox(view, { onLine }), copyButton, downloadButton, status),
    runnable ? note('This is a runnable program: download it as ', h('code', null, runnable.file_name),
      ' and run ', h('code', null, `python ${runnable.file_name}`), ' where torch is installed.') : null,
    !art && dir ? note('This payload is not listed among the artifacts of ', id ?? 'the unattributed entries',
      ' (the link may be from a table such as cache lookups).') : null,
    view.el);
}

/** Format of a payload not found in the directory: JSON if it parses, else text. */
function guessFormat(name, text) {
  const t = text.trim();
  if ((t.startsWith('{') || t.startsWith('[')) && prettyJson(t) != null) return 'json';
  return /(_code|_graph|runnable)/.test(name) ? 'python' : 'text';
}

/** Copies text: the Clipboard API, else a selected textarea (older browsers, insecure origins). */
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'offscreen', readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    area.remove();
    return ok;
  }
}
