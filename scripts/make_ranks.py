#!/usr/bin/env python3
"""Make a trace directory of many ranks from the multi_rank_runtime fixture, with divergence.

Usage:
    scripts/make_ranks.py OUT_DIR [--ranks 64] [--fixtures DIR] [--slim]

Rank n is written as OUT_DIR/dedicated_log_torch_trace_rank_{n}.log:
* its content is fixture file n % 4 (ranks 0-3 of multi_rank_runtime, which are alike except for
  their runtime estimates, scaled 1.00/1.05/1.10/1.15);
* injected divergence (only for ranks that exist):
  - ranks 17 and 42 are fixture file 5 (another run: 2 compile ids instead of 4, other tensor
    metadata);
  - rank 63 is fixture file 4 (no runtime estimate for [0/0], runtimes x1.20);
  - rank 33 drops `reduce_scatter_tensor` from its collective schedules (its md5 then fails, as
    an edited log's would), so its schedules differ from the others on [0/1]..[0/3];
* every envelope's `"rank": N` becomes `"rank": n` (payloads untouched);
* with --slim, the records that make a rank's log big and that no cross-rank table reads are
  left out (chromium events, cache-miss and guard payloads): about 0.5 MB a rank instead of 1.9,
  for viewer tests at 1,000 ranks.
The same arguments always give byte-identical output.
"""

import argparse
import pathlib
import re
import sys

SOURCE = "tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_{}.log"
RANK = re.compile(rb'"rank": \d+')
# Header kinds --slim leaves out, whole records (header and payload lines).
SLIM_DROP = (b'{"chromium_event"', b'"name": "fx_graph_cache_miss"', b'"name": "aotautograd_cache_miss"',
             b'{"dynamo_cpp_guards_str"')
REDUCE_SCATTER = b'\t"torch.ops._c10d_functional.reduce_scatter_tensor.default",\n'


def source_for(n: int) -> int:
    return {17: 5, 42: 5, 63: 4}.get(n, n % 4)


def drop_reduce_scatter(text: bytes) -> bytes:
    """Removes the reduce_scatter op from every collective-schedule payload."""
    out, in_schedule = [], False
    for line in text.splitlines(keepends=True):
        if not line.startswith(b"\t"):
            in_schedule = b'"inductor_collective_schedule"' in line
        elif in_schedule and line == REDUCE_SCATTER:
            continue
        out.append(line)
    return b"".join(out)


def slim(text: bytes) -> bytes:
    """Leaves out the records whose header names a kind of SLIM_DROP."""
    out, keep = [], True
    for line in text.splitlines(keepends=True):
        if not line.startswith(b"\t"):
            keep = not any(k in line for k in SLIM_DROP)
        if keep:
            out.append(line)
    return b"".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--fixtures", default=str(pathlib.Path(__file__).resolve().parent.parent / "fixtures-repo"))
    ap.add_argument("--slim", action="store_true", help="leave out the big records no cross-rank table reads")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sources = {}
    for n in range(args.ranks):
        k = source_for(n)
        if k not in sources:
            sources[k] = (pathlib.Path(args.fixtures) / SOURCE.format(k)).read_bytes()
            if args.slim:
                sources[k] = slim(sources[k])
        text = RANK.sub(b'"rank": %d' % n, sources[k])
        if n == 33:
            text = drop_reduce_scatter(text)
        (out / f"dedicated_log_torch_trace_rank_{n}.log").write_bytes(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
