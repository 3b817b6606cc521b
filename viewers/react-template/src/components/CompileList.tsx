// CompileList.tsx: every compile of a stream, one row each, virtualized with @tanstack/react-virtual:
// only the rows in view (plus a few) are in the DOM, so a stream with 10,000 compiles scrolls fine.
import { useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { formatSeconds, type CompileRow } from '../data';
import type { Route } from '../route';
import { Link } from './Link';
import { StatusBadge } from './Status';

const ROW_HEIGHT = 32; // px; keep in step with .compile-row in styles.css

export function CompileList({ rows, route }: { rows: CompileRow[]; route: Route }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
  });
  return (
    <section className="compile-list" aria-label="Compiles">
      <h2>Compiles <span className="count">{rows.length}</span></h2>
      <div className="compile-header compile-grid" aria-hidden>
        <span>compile id</span><span>status</span><span>function</span><span>file:line</span>
        <span className="time">time</span>
      </div>
      <div className="compile-scroll" ref={scrollRef}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index];
            if (!row) return null;
            return (
              <Link
                key={row.compileId} to={{ ...route, compile: row.compileId }}
                className="compile-row compile-grid" style={{ transform: `translateY(${item.start}px)` }}
              >
                <span className="mono">{row.compileId}</span>
                <span><StatusBadge status={row.status} /></span>
                <span className="ellipsis" title={row.functionName ?? undefined}>{row.functionName ?? '—'}</span>
                <span className="ellipsis mono" title={row.location ?? undefined}>{row.shortLocation ?? '—'}</span>
                <span className="time">{formatSeconds(row.seconds)}</span>
              </Link>
            );
          })}
        </div>
      </div>
    </section>
  );
}
