// pages/failures.js: failed compiles and restarts (`#/failures?s=&i=`). Reads the `failures`
// table (docs/tables/failures.md). Failures first, then restarts, each in log order; the selected
// row (`i`, default the first) shows its reason, the user frame, the exception stack, the full
// dynamo_error traceback (fetched when opened) and the stack that started the compile.

import { h, section, note, empty, plural, facts } from '../dom.js';
import { blobText, lazyDetails, masterDetail, oneLine, pathCell, pill, stackView } from '../analysis.js';

const KIND = { failure: ['failed', 'st-failed'], restart: ['restart', 'st-restart'] };

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const table = await ctx.table('failures');
  const all = table?.failures ?? [];
  if (!all.length) {
    return h('div', null, h('h1', null, 'Failures and restarts'),
      h('section', { class: 'card ok-box' }, h('h2', null, 'Nothing failed'),
        empty(table ? 'No compile failed or restarted in this stream.'
          : 'This stream has no failures table: no compilation metrics reported a failure or a restart.')));
  }
  // Failures first (they are what broke), then restarts; log order within each.
  const rows = [...all.filter((f) => f.kind === 'failure'), ...all.filter((f) => f.kind !== 'failure')]
    .map((f, i) => ({ ...f, i, row: f }));
  ctx.expose('failures', rows.map((r) => ({ compile_id: r.compile_id, kind: r.kind, failure_type: r.failure_type, reason: r.reason, user_frame: r.user_frame })));

  const { tableBox, detailBox } = masterDetail(ctx, {
    rows,
    param: 'i',
    exposeAs: 'failure',
    detail: (r) => detail(ctx, r),
    tableOptions: (isSelected) => ({
      name: 'failures',
      maxRows: 14,
      columns: [
        { key: 'compile_id', label: 'compile', width: '8em',
          render: (r) => h('span', { class: isSelected(r) ? 'an-current' : null }, isSelected(r) ? '▸ ' : '',
            h('a', { href: ctx.href('compile', { id: r.compile_id }), on: { click: (e) => e.stopPropagation() } }, r.compile_id)) },
        { key: 'kind', label: 'kind', width: '7em', render: (r) => kindBadge(r.kind) },
        { key: 'failure_type', label: 'type', width: 'minmax(13em, 1.2fr)', render: (r) => h('span', { class: 'mono', title: r.failure_type ?? '' }, r.failure_type ?? '–') },
        { key: 'reason', label: 'reason', width: 'minmax(20em, 4fr)', value: (r) => oneLine(r.reason),
          render: (r) => (r.reason == null ? h('span', { class: 'an-muted' }, 'no reason logged') : h('span', { title: r.reason, dataset: { full: r.reason } }, oneLine(r.reason))) },
        { key: 'user_frame', label: 'user code', width: 'minmax(12em, 1.5fr)', render: (r) => pathCell(r.user_frame, 30) },
      ],
    }),
  });

  const failed = table.failed;
  const restarts = table.restarts;
  return h('div', null,
    h('h1', null, 'Failures and restarts'),
    section([failed ? plural(failed, 'failed compile') : 'No failed compiles', ', ', plural(restarts, 'restart')],
      note(failed
        ? 'A failed compile ran the frame without torch.compile (or raised, with fullgraph=True). '
        : '',
      restarts ? 'A restart is dynamo tracing a frame again after a graph break or a speculation failure; it is usually harmless. ' : '',
      'Click a row for the full error.'),
      tableBox),
    detailBox);
}

function kindBadge(kind) {
  const [label, cls] = KIND[kind] ?? [kind, 'st-missing'];
  return h('span', { class: ['badge', cls] }, label);
}

/** One failure or restart, with its stacks on demand. */
function detail(ctx, r) {
  const exception = r.exception?.length ? r.exception.join('') : null;
  return h('section', { class: 'card', dataset: { failure: r.i } },
    h('h2', null, kindBadge(r.kind), ' ', h('span', { class: 'mono' }, r.failure_type ?? 'unknown'), ' in ',
      h('a', { href: ctx.href('compile', { id: r.compile_id }) }, r.compile_id)),
    r.reason != null
      ? h('pre', { class: ['an-pre', 'an-error-text', r.kind === 'failure' && 'an-error'] }, r.reason)
      : note('The compile logged no failure reason.'),
    facts([
      ['user code', r.user_frame ? h('span', { class: 'mono' }, r.user_frame) : null],
      ['reported by', h('span', { class: 'mono' }, r.source)],
      ['log entry', `seq ${r.seq}`],
    ]),
    exception
      ? lazyDetails(['Exception stack ', pill(lastLine(exception))], () => h('pre', { class: 'an-pre' }, exception), { className: 'an-exception' })
      : null,
    r.error_blob
      ? lazyDetails('Full traceback (dynamo_error artifact)', () => blobText(ctx, r.error_blob), { className: 'an-error-blob' })
      : null,
    r.stack != null
      ? lazyDetails('Where the compile started (dynamo_start stack)', async () => stackView(await ctx.stacks(), r.stack), { className: 'an-start-stack' })
      : null);
}

/** The last non-blank line of a traceback: the exception itself. */
function lastLine(text) {
  const lines = text.split('\n').filter((l) => l.trim());
  const last = lines[lines.length - 1] ?? '';
  return last.length > 120 ? `${last.slice(0, 117)}…` : last;
}
