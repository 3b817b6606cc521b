// CompilePage.tsx: one compile: what was compiled, its status and times, why it restarted or
// failed, and its artifacts (graphs, generated code, guards...); one of them opened below.
import type { ReactNode } from 'react';
import type { CompileDirectory, CompileEntry } from 'tlparse-bundle-loader';
import { tableOf, type Bundle } from '../bundle';
import { formatBytes, formatSeconds, functionLocation, functionName, numberedArtifacts } from '../data';
import type { Route } from '../route';
import { useAsync } from '../useAsync';
import { ArtifactText } from './ArtifactText';
import { Link } from './Link';
import { ErrorBox, Loading, StatusBadge } from './Status';

interface CompilePageProps {
  bundle: Bundle;
  route: Route;
  stream: string;
  compileId: string;
}

export function CompilePage({ bundle, route, stream, compileId }: CompilePageProps) {
  const compile = useAsync(`${bundle.base} ${stream} ${compileId}`, async () => {
    const directory = await tableOf(bundle, stream, 'compile_directory');
    const id = compileId.startsWith('[') ? compileId : `[${compileId}]`;
    const found = directory?.compiles.find((c) => c.compile_id === id);
    return directory && found ? { directory, compile: found } : null;
  });
  const back = <Link to={{ bundle: route.bundle, stream: route.stream }}>← all compiles</Link>;
  if (compile.status === 'loading') return <Loading what={`compile ${compileId}`} />;
  if (compile.status === 'error') {
    return <ErrorBox title={`Could not read compile ${compileId}`} error={compile.error} />;
  }
  if (!compile.value) return <section>{back}<p>No compile {compileId} in stream {stream}.</p></section>;
  const { directory, compile: c } = compile.value;
  return (
    <section className="compile-page" aria-label={`Compile ${c.compile_id}`}>
      {back}
      <h2><span className="mono">{c.compile_id}</span> <StatusBadge status={c.status} /></h2>
      <CompileFacts compile={c} route={route} />
      <Artifacts directory={directory} compile={c} route={route} />
      {route.artifact !== undefined && (
        <ArtifactText
          bundle={bundle} stream={stream} compileId={c.compile_id} name={route.artifact} nth={route.nth ?? 0}
        />
      )}
    </section>
  );
}

/** `2.28 s`, or `21.20 s (forward 19.55 s, backward 1.65 s)` when a backward was compiled. */
function compileTime(c: CompileEntry): string {
  if (c.backward_s === null) return formatSeconds(c.total_s);
  const parts = `forward ${formatSeconds(c.duration_s)}, backward ${formatSeconds(c.backward_s)}`;
  return `${formatSeconds(c.total_s)} (${parts})`;
}

export function CompileFacts({ compile: c, route }: { compile: CompileEntry; route: Route }) {
  const facts: [string, ReactNode][] = [
    ['function', functionName(c) ?? '—'],
    ['file:line', functionLocation(c) ?? '—'],
    ['time', compileTime(c)],
    ['logged', `${c.start_ts} – ${c.end_ts}`],
  ];
  if (c.restarted_as) {
    const restart = { bundle: route.bundle, stream: route.stream, compile: c.restarted_as };
    facts.push(['restarted as', <Link to={restart}>{c.restarted_as}</Link>]);
  }
  if (c.fail_type) facts.push(['failure', `${c.fail_type}: ${c.fail_reason ?? ''}`]);
  for (const reason of c.restart_reasons) facts.push(['restart reason', <pre className="inline-pre">{reason}</pre>]);
  for (const reason of c.graph_breaks) facts.push(['graph break', reason]);
  return (
    <dl className="facts">
      {facts.map(([name, value], i) => (
        <div key={i}><dt>{name}</dt><dd>{value}</dd></div>
      ))}
    </dl>
  );
}

export function Artifacts({ directory, compile, route }: { directory: CompileDirectory; compile: CompileEntry; route: Route }) {
  const artifacts = numberedArtifacts(directory, compile);
  if (artifacts.length === 0) return <p>This compile logged no artifacts.</p>;
  return (
    <table className="artifacts">
      <caption>Artifacts <span className="count">{artifacts.length}</span></caption>
      <thead><tr><th>name</th><th>kind</th><th>format</th><th>size</th><th>lines</th></tr></thead>
      <tbody>
        {artifacts.map(({ ref, nth }) => {
          const open = route.artifact === ref.name && (route.nth ?? 0) === nth;
          return (
            <tr key={ref.seq} className={open ? 'open' : undefined}>
              <td>
                <Link to={{ ...route, artifact: ref.name, nth }}>{ref.name}</Link>
                {nth > 0 && <span className="muted"> #{nth + 1}</span>}
              </td>
              <td>{ref.kind}</td>
              <td>{ref.no_payload ? 'no payload' : ref.url ? 'link' : ref.format ?? '—'}</td>
              <td>{formatBytes(ref.size)}</td>
              <td>{ref.lines}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
