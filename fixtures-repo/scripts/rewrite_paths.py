#!/usr/bin/env python3
"""Rewrite machine paths in TORCH_TRACE logs and recompute every has_payload md5.

Each --map OLD=NEW replaces the byte string OLD by NEW everywhere in a log: in
header lines (the glog prefix and the JSON, e.g. `str` entries and
`co_filename`) and in payload lines. Maps are applied in the order given, so
put the longer, more specific prefixes first.

A log is a sequence of entries: a header line (not starting with a tab) whose
JSON starts at the first '{', followed by payload lines, each prefixed by one
tab. The payload of an entry is its payload lines with the tab removed, joined
by "\\n"; a header with `"has_payload": "<md5>"` declares the md5 of that
payload. Before rewriting, every declared md5 must match the original payload
(the script refuses to launder a log that was already inconsistent); after
rewriting, the md5 of the new payload replaces the old one in the header, and
nothing else in the header changes. Line endings and a missing final newline
are kept. The output is a function of the input bytes and the maps only.

Usage:
  rewrite_paths.py --map /work/torchvenv=/opt/venv --map /tmp/run=/home/user SRC DST
  rewrite_paths.py --map ... --in-place LOG...

SRC and DST may be files or directories (a directory is rewritten file by file,
recursively, into DST with the same relative paths).
"""

import argparse
import hashlib
import os
import re
import sys

MD5_RE = re.compile(rb'"has_payload": "([0-9a-f]{32})"')


def parse_maps(specs):
    maps = []
    for spec in specs:
        if "=" not in spec:
            raise SystemExit("--map needs OLD=NEW, got %r" % spec)
        old, new = spec.split("=", 1)
        if not old:
            raise SystemExit("--map: empty OLD in %r" % spec)
        maps.append((old.encode(), new.encode()))
    return maps


def replace_all(b, maps):
    for old, new in maps:
        b = b.replace(old, new)
    return b


def rewrite(data, maps, name="<log>"):
    """Return (new bytes, number of entries whose md5 was recomputed)."""
    lines = data.split(b"\n")
    out = []
    n = len(lines)
    i = 0
    fixed = 0
    while i < n:
        header = lines[i]
        i += 1
        if header.startswith(b"\t"):
            # a payload line with no header before it: keep (rewritten) as is
            out.append(replace_all(header, maps))
            continue
        start = i
        while i < n and lines[i].startswith(b"\t"):
            i += 1
        body = lines[start:i]
        new_body = [replace_all(l, maps) for l in body]
        new_header = replace_all(header, maps)
        m = MD5_RE.search(new_header)
        if m:
            old_payload = b"\n".join(l[1:] for l in body)
            if hashlib.md5(old_payload).hexdigest().encode() != m.group(1):
                raise SystemExit(
                    "%s:%d: has_payload does not match the original payload; refusing to rewrite"
                    % (name, start)
                )
            new_md5 = hashlib.md5(b"\n".join(l[1:] for l in new_body)).hexdigest().encode()
            if new_md5 != m.group(1):
                fixed += 1
            new_header = new_header[: m.start(1)] + new_md5 + new_header[m.end(1) :]
        out.append(new_header)
        out.extend(new_body)
    return b"\n".join(out), fixed


def rewrite_file(src, dst, maps):
    with open(src, "rb") as f:
        data = f.read()
    new, fixed = rewrite(data, maps, src)
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(new)
    left = [old.decode() for old, _ in maps if old in new]
    print("%s -> %s: %d md5s recomputed%s" % (src, dst, fixed,
          "; still contains " + ", ".join(left) if left else ""), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", action="append", default=[], metavar="OLD=NEW", help="replace OLD by NEW (repeatable, applied in order)")
    ap.add_argument("--in-place", action="store_true", help="rewrite each PATH in place")
    ap.add_argument("paths", nargs="+", help="SRC DST, or with --in-place the files to rewrite")
    args = ap.parse_args()
    maps = parse_maps(args.map)
    if not maps:
        raise SystemExit("give at least one --map OLD=NEW")
    if args.in_place:
        for p in args.paths:
            rewrite_file(p, p, maps)
        return 0
    if len(args.paths) != 2:
        raise SystemExit("give SRC and DST (or --in-place FILES)")
    src, dst = args.paths
    if os.path.isdir(src):
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            for fn in sorted(filenames):
                s = os.path.join(dirpath, fn)
                rewrite_file(s, os.path.join(dst, os.path.relpath(s, src)), maps)
    else:
        rewrite_file(src, dst, maps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
