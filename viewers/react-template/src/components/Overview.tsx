// Overview.tsx: the bundle at a glance: streams (ranks), compiles, failures, compile time.
import { overviewTables, type Bundle } from '../bundle';
import { formatSeconds, overview, plural, type BundleOverview } from '../data';
import { useAsync } from '../useAsync';
import { ErrorBox, Loading } from './Status';

export function Overview({ bundle, bundleUrl }: { bundle: Bundle; bundleUrl: string }) {
  const tables = useAsync(`overview ${bundleUrl}`, () => overviewTables(bundle));
  if (tables.status === 'loading') return <Loading what="the overview" />;
  if (tables.status === 'error') return <ErrorBox title="Could not read the overview tables" error={tables.error} />;
  const summary = overview(bundle.manifest, tables.value);
  const { generator, format_version: formatVersion } = bundle.manifest;
  return (
    <section className="overview" aria-label="Overview">
      <div className="stats">
        <Stat name="streams" label={summary.streams.length === 1 ? 'stream' : 'streams'}
          value={String(summary.streams.length)} />
        <Stat name="compiles" label="compiles" value={String(summary.compiles)} />
        <Stat name="failures" label="failures" value={String(summary.failures)}
          note={plural(summary.restarts, 'restart')} />
        <Stat name="compile-time" label="compile time" value={formatSeconds(summary.compileSeconds)}
          note="forward + backward" />
      </div>
      {summary.streams.length > 1 && <StreamTable summary={summary} />}
      <p className="generator">
        Format {formatVersion}, written by {generator.name} {generator.version}
      </p>
    </section>
  );
}

function Stat({ name, label, value, note }: { name: string; label: string; value: string; note?: string }) {
  return (
    <div className="stat" data-stat={name}>
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
      {note && <span className="stat-note">{note}</span>}
    </div>
  );
}

function StreamTable({ summary }: { summary: BundleOverview }) {
  return (
    <table className="stream-table">
      <thead>
        <tr><th>stream</th><th>compiles</th><th>failures</th><th>restarts</th><th>compile time</th></tr>
      </thead>
      <tbody>
        {summary.streams.map((s) => (
          <tr key={s.id} data-stream={s.id}>
            <td>{s.label}</td>
            <td>{s.compiles}</td>
            <td>{s.failures}</td>
            <td>{s.restarts}</td>
            <td>{formatSeconds(s.compileSeconds)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
