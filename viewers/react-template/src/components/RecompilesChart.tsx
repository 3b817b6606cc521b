// RecompilesChart.tsx: compiles per frame as horizontal bars (plain HTML, no chart library).
// A frame with more than one compile recompiled: its guards failed on a later call.
import { recompilesPerFrame } from '../data';
import type { CompileDirectory } from 'tlparse-bundle-loader';
import type { Route } from '../route';
import { Link } from './Link';

const MAX_BARS = 20;

export function RecompilesChart({ directory, route }: { directory: CompileDirectory | null; route: Route }) {
  const frames = recompilesPerFrame(directory);
  if (frames.length === 0) return null;
  const most = frames[0]?.compileIds.length ?? 1;
  const recompiled = frames.filter((f) => f.compileIds.length > 1).length;
  return (
    <section className="chart" aria-label="Compiles per frame">
      <h2>Compiles per frame</h2>
      <p className="hint">
        {recompiled === 0 ? 'No frame recompiled.' : `${recompiled} of ${frames.length} frames recompiled.`}
        {frames.length > MAX_BARS && ` The ${MAX_BARS} frames compiled most often:`}
      </p>
      <ol className="bars">
        {frames.slice(0, MAX_BARS).map((f) => (
          <li key={f.frame} className="bar-row" data-frame={f.frame} data-compiles={f.compileIds.length}>
            <span className="muted">{f.frame}</span>
            <Link to={{ ...route, compile: f.compileIds.at(-1) }} className="ellipsis"
              title={`${f.functionName ?? '?'}: ${f.compileIds.join(', ')}`}>
              {f.functionName ?? '?'}
            </Link>
            <span className="bar-track">
              <span className={f.compileIds.length > 1 ? 'bar recompiled' : 'bar'}
                style={{ width: `${(100 * f.compileIds.length) / most}%` }} />
            </span>
            <span className="bar-value">{f.compileIds.length}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
