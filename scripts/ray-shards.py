#!/usr/bin/env python3
"""Builds a bundle of a job's rank logs on a Ray cluster: one `tlparse-build shard` task per log,
run where the log is, then one `tlparse-build merge` here (see docs/scale.md).

    python scripts/ray-shards.py 'GLOB' -o OUT [--logs-on shared|local] [--address auto]
                                 [--shards DIR] [--bin tlparse-build] [--expect-ranks N]

GLOB names the logs, e.g. '/scratch/trace/**/*.log' (quote it: it is expanded on the nodes).
Each log's name in the bundle is its path below the part of GLOB before the first wildcard, as a
one-run build of that directory would name it.

--logs-on shared (default): the logs are on a file system every node sees; GLOB is expanded
here and the tasks go wherever Ray puts them. --logs-on local: each node has its own logs on
its own disk; GLOB is expanded on every node, and each log's task is pinned to its node. Either
way a task returns its shard (about 5% of its log) through Ray's object store, and the driver
writes it under --shards (a temporary directory by default), unless --shards is on a shared
file system and --shards-shared is given, when tasks write their shard there themselves.

Needs `pip install ray` where this runs and on the nodes, and tlparse-build on every node
(--bin: its path, the same on every node).
"""

import argparse
import glob
import io
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy


def glob_base(pattern):
    """The directory part of a glob before its first wildcard: logs are named relative to it."""
    parts = pattern.split(os.sep)
    fixed = []
    for part in parts:
        if glob.has_magic(part):
            break
        fixed.append(part)
    base = os.sep.join(fixed) or "."
    return base if os.path.isdir(base) or not fixed else os.path.dirname(base) or "."


@ray.remote(num_cpus=0)
def list_logs(pattern):
    """The logs of GLOB on the node this runs on, with the node's name for messages."""
    base = glob_base(pattern)
    logs = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
    return socket.gethostname(), [(p, os.path.relpath(p, base).replace(os.sep, "/")) for p in logs]


@ray.remote(num_cpus=1)
def build_shard(binary, log, name, shared_dir):
    """Runs `tlparse-build shard` on one log; returns the shard as a tar (None when written to
    the shared directory), and what the command printed."""
    where = shared_dir or tempfile.mkdtemp(prefix="tlparse-shard-")
    out = os.path.join(where, shard_dir_name(name))
    try:
        run = subprocess.run([binary, "shard", log, "-o", out, "--name", name, "--overwrite"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"{socket.gethostname()}: tlparse-build shard {log} failed:\n{run.stderr}")
        if shared_dir:
            return None, run.stdout
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(out, arcname=shard_dir_name(name))
        return buffer.getvalue(), run.stdout
    finally:
        if not shared_dir:
            shutil.rmtree(where, ignore_errors=True)


def shard_dir_name(name):
    """One directory per log name, flat: `/` cannot be in a file name."""
    return name.replace("%", "%25").replace("/", "%2F")


def find_logs(pattern, logs_on):
    """[(node id or None, path, name)] for every log, checking names are unique."""
    found = []
    if logs_on == "shared":
        _, logs = ray.get(list_logs.remote(pattern))
        found = [(None, path, name) for path, name in logs]
    else:
        nodes = [n for n in ray.nodes() if n["Alive"]]
        listed = ray.get([
            list_logs.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(pattern)
            for n in nodes
        ])
        for node, (host, logs) in zip(nodes, listed):
            found += [(node["NodeID"], path, name) for path, name in logs]
    names = {}
    for node, path, name in found:
        if name in names:
            sys.exit(f"ray-shards: two logs are named {name!r} ({names[name]} and {path}); "
                     "give each node's logs their own folder in GLOB")
        names[name] = path
    if not found:
        sys.exit(f"ray-shards: no file matches {pattern!r}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("glob")
    parser.add_argument("-o", "--out", required=True, help="the bundle directory to write")
    parser.add_argument("--logs-on", choices=["shared", "local"], default="shared")
    parser.add_argument("--address", default=None, help="the Ray cluster (default: RAY_ADDRESS, else a local one)")
    parser.add_argument("--shards", default=None, help="where the shards are gathered (default: a temporary directory)")
    parser.add_argument("--shards-shared", action="store_true", help="--shards is on a file system every node sees")
    parser.add_argument("--bin", default="tlparse-build", help="tlparse-build's path on the nodes")
    parser.add_argument("--expect-ranks", type=int, default=None, help="passed to merge: ranks 0..N-1 must all be there")
    parser.add_argument("--overwrite", action="store_true", help="passed to merge")
    args = parser.parse_args()
    if args.shards_shared and not args.shards:
        parser.error("--shards-shared needs --shards")

    ray.init(address=args.address, logging_level="ERROR")
    logs = find_logs(args.glob, args.logs_on)
    shards = args.shards or tempfile.mkdtemp(prefix="tlparse-shards-")
    os.makedirs(shards, exist_ok=True)
    shared = os.path.abspath(shards) if args.shards_shared else None
    pending = []
    for node, path, name in logs:
        options = {}
        if node is not None:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=False)
        pending.append(build_shard.options(**options).remote(args.bin, path, name, shared))
    done = 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        tar_bytes, printed = ray.get(ready[0])
        if tar_bytes is not None:
            with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
                tar.extractall(shards, filter="data")
        done += 1
        print(f"[{done}/{len(logs)}] {printed.strip()}", file=sys.stderr)
    ray.shutdown()

    dirs = sorted(os.path.join(shards, shard_dir_name(name)) for _, _, name in logs)
    merge = [args.bin, "merge", *dirs, "-o", args.out]
    if args.expect_ranks is not None:
        merge += ["--expect-ranks", str(args.expect_ranks)]
    if args.overwrite:
        merge.append("--overwrite")
    sys.exit(subprocess.run(merge).returncode)


if __name__ == "__main__":
    main()
