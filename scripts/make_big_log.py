#!/usr/bin/env python3
"""Build one large single-process TORCH_TRACE log by replicating real fixture logs.

Usage:
    scripts/make_big_log.py OUT_PATH [--size-mb 150] [--fixtures DIR] [--seed N]
                            [--sources GLOB ...] [--pid PID] [--frame-stride 1000]
                            [--shape default|tensor|compiles] [--tensor-copies 16]
    scripts/make_big_log.py --verify LOG [LOG ...]

The output is a sequence of "blocks". Each block is one whole source log (a real
single-rank fixture), rewritten so that the concatenation still reads as ONE
consistent process:

* pid: every header line gets the same pid (``--pid``).
* frame ids: block number ``b`` (0, 1, 2, ... over the whole output) adds
  ``b * frame_stride`` to every frame number: ``"frame_id": N`` in envelopes,
  the frame part of ``"compile_id": "F/C"`` / ``"F/C_A"`` / ``"!CA/F/C"``
  strings (envelopes and payloads), ``[F/C]``-style mentions, ``"frame_key":
  "N"`` in compilation_metrics, the ``F/C: ...`` prefixes of recompile reasons
  (``"recompile_reason"`` fields and ``recompile_reasons`` artifact payloads).
  Block 0 therefore keeps its original ids.  Frame ids stay unique across the
  whole file because different source logs in the same round get different
  blocks (and so different offsets).
* string table: every source log gets a fixed, disjoint range of ``str``
  indices (``str_base`` = sum of the sizes of the tables of the source logs
  before it, in sorted path order).  ``{"str": [name, i]}`` becomes
  ``[name, i + str_base]`` and every integer ``"filename": i`` in an envelope
  (the interned ``stack`` frames) becomes ``i + str_base``.  A source log's
  ``str`` entries are written only in its FIRST block (where they appear
  before their first use, exactly as in the source); later copies of the same
  source reuse those indices, which is what a real process does (each file is
  interned once).  So the table is append-only with no index ever redefined.
* timestamps: blocks are laid end to end on a timeline (block duration =
  source duration rounded up to whole seconds + 1 s).  Header times
  (``MMDD HH:MM:SS.uuuuuu``) and epoch fields (``"ts"`` / ``"start_time_us"``
  / ``"end_time_us"`` in us, ``"start_time"`` in s, ``"cache_event_time"`` in
  ns) are shifted by whole seconds, so fractional digits are kept textually.
  Header and epoch clocks are shifted independently (they are in different
  time zones in some fixtures).
* payload md5: whenever a payload changes, ``has_payload`` is recomputed
  (md5 of the payload lines without their leading tab, joined by "\\n").
  Entries whose source md5 did not verify keep their original value.

``--seed`` shuffles the order of the source logs inside each round
(deterministically); the output is byte-identical for the same arguments.
Blocks are whole source logs, so the output overshoots the requested size by
less than one source log (< 4 MB with the default sources).

Sizes: 1 MB here means 2**20 bytes (so the output is >= the request in either
reading).

Memory: only the (tokenised) source logs are held; output is streamed.

``--shape tensor`` makes a tensor-heavy log, like a large model's: its default sources are the
fixtures with the most ``describe_tensor`` entries and guards (``TENSOR_SOURCES``), and on top
of the rewrites above:

* describers: ``"describer_id": D`` becomes ``D + b * frame_stride`` (torch makes a describer per
  fake mode, so a long log has ever new ones).
* tensors: every run of consecutive ``describe_storage`` / ``describe_tensor`` /
  ``describe_source`` entries is followed by ``--tensor-copies - 1`` copies of itself, copy
  ``k`` with its tensor and storage ids (``"id"``, ``"storage"``, ``"grad"``) plus
  ``k * id_stride`` (the source's largest id + 1), its object addresses (``0x...``) moved, and
  its source renamed for layer ``n = b * tensor_copies + k`` (``rename_source``: the first
  numeric index plus ``n * 100``, else the first name suffixed ``_n``).
* guards: in ``dynamo_cpp_guards_str`` trees, the subtree of every ``GuardManager`` holding a
  ``TENSOR_MATCH`` is followed by the same copies (its source renamed the same way).
* unique payloads: a text payload that would be the same in two blocks (graphs, output code,
  bytecode, metadata) gets its object ids (``0x`` addresses, 14-15 digit ids) moved by the
  block number, else a last line ``# block b``. JSON payloads (configs, versions, provenance
  maps) are left alone: a real process logs those again unchanged.

``--shape compiles`` replicates small real logs (``COMPILES_SOURCES``) with the default rewrites:
a log of many small compiles, three in four of them failing, as a recompile or failure storm
writes (about 60 KB a compile). What a build keeps per compile shows here first.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import glob
import hashlib
import json
import os
import random
import re
import sys
import time

DEFAULT_SOURCES = [
    "torch-2.15/graph_breaks/*.log",
    "torch-2.15/recompiles/*.log",
    "torch-2.15/dynamic_shapes/*.log",
    "torch-2.15/cache_cold/*.log",
    "tlparse-tests/cache_hit_miss.log",
    "tlparse-tests/simple.log",
]

# --shape compiles: many small compiles, three in four failing (a recompile or failure storm):
# about 60 KB of log a compile, against 280 KB in the default shape.
COMPILES_SOURCES = [
    "tlparse-tests/artifacts.log",
    "torch-2.15/failures/*.log",
]

TENSOR_SOURCES = [
    "torch-2.15/training/*.log",
    "tlparse-tests/cache_hit_miss.log",
    "torch-2.15/two_runs/run_b/*.log",
    "torch-2.15/compiled_autograd/*.log",
]

HEADER_RE = re.compile(
    r"^(?P<lvl>[VIWEF])(?P<md>\d{4}) (?P<hms>\d{2}:\d{2}:\d{2}\.\d{6}) +(?P<pid>\d+) "
    r"(?P<loc>[^\]]*)\] (?P<env>.*)$"
)

# Slot patterns. Each alternative has exactly one named group: the digits that
# get rewritten.  The group name is the slot kind.
_COMMON = [
    r'"compile_id": "(?:!\d+/)?(?P<cid>\d+)/\d+(?:_\d+)?"',
    r"\[(?:!\d+/)?(?P<br>\d+)/\d+(?:_\d+)?\]",
    r'"frame_id": (?P<fid>\d+)',
    r'"frame_key": "(?P<fkey>\d+)"',
    r'"recompile_reason": "(?P<rr>\d+)/\d+(?:_\d+)?: ',
    r'"(?:ts|start_time_us|end_time_us)": (?P<tus>\d{13,})',
    r'"start_time": (?P<ts>\d{9,})',
    r'"cache_event_time": (?P<tns>\d{16,})',
]
_ENVELOPE_ONLY = [
    r'"filename": (?P<fname>\d+)',
    r'"str": \["(?:[^"\\]|\\.)*", (?P<stridx>\d+)\]',
    r'"has_payload": "(?P<md5>[0-9a-f]{32})"',
]
# recompile_reasons payloads: "F/C: reason" either bare or as JSON list items.
_RR_PAYLOAD = [r'^"?(?P<rrp>\d+)/\d+(?:_\d+)?: ']

ENV_RE = re.compile("|".join(_COMMON + _ENVELOPE_ONLY))
PAYLOAD_RE = re.compile("|".join(_COMMON))
RR_PAYLOAD_RE = re.compile("|".join(_COMMON + _RR_PAYLOAD), re.M)

FRAME_KINDS = {"cid", "br", "fid", "fkey", "rr", "rrp"}
TIME_SCALE = {"tus": 1_000_000, "ts": 1, "tns": 1_000_000_000}

ASSUMED_YEAR = 2024  # glog headers have no year; a leap year parses every MMDD


def tokenize(text: str, pattern: re.Pattern) -> tuple:
    """Split text into literal strings and (kind, int_value) slots."""
    parts = []
    pos = 0
    for m in pattern.finditer(text):
        kind = m.lastgroup
        s, e = m.span(kind)
        if s > pos:
            parts.append(text[pos:s])
        parts.append((kind, int(m.group(kind)) if kind != "md5" else m.group(kind)))
        pos = e
    if pos < len(text):
        parts.append(text[pos:])
    return tuple(parts)


def parse_header_time(md: str, hms: str) -> _dt.datetime:
    return _dt.datetime.strptime(f"{ASSUMED_YEAR}{md} {hms}", "%Y%m%d %H:%M:%S.%f")


class Entry:
    __slots__ = (
        "prefix_lvl",
        "htime",
        "loc",
        "env",
        "env_static",
        "payload",
        "payload_static",
        "payload_md5_ok",
        "is_str",
        "raw",
        "describe",
        "guards",
        "json_payload",
    )


class Source:
    def __init__(self, path: str):
        self.path = path
        self.entries: list[Entry] = []
        self.max_frame = -1
        self.max_str = -1
        self.hstart = None
        self.hend = None
        self.estart = None  # epoch seconds (float)
        self.eend = None
        self.size = os.path.getsize(path)
        self.md5_bad = 0
        self.max_desc_id = -1
        self._load()

    def _note_slots(self, parts):
        for p in parts:
            if type(p) is tuple:
                kind, v = p
                if kind in FRAME_KINDS:
                    self.max_frame = max(self.max_frame, v)
                elif kind in TIME_SCALE:
                    secs = v / TIME_SCALE[kind]
                    self.estart = secs if self.estart is None else min(self.estart, secs)
                    self.eend = secs if self.eend is None else max(self.eend, secs)

    def _load(self):
        with open(self.path, "rb") as f:
            data = f.read().decode("utf-8", "surrogateescape")
        lines = data.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        i = 0
        n = len(lines)
        while i < n:
            line = lines[i]
            i += 1
            e = Entry()
            m = HEADER_RE.match(line)
            if m is None:
                # Not a header (stray line, or payload line with no header):
                # copy verbatim.
                e.raw = line
                self.entries.append(e)
                continue
            e.raw = None
            e.prefix_lvl = m.group("lvl")
            e.htime = parse_header_time(m.group("md"), m.group("hms"))
            if self.hstart is None or e.htime < self.hstart:
                self.hstart = e.htime
            if self.hend is None or e.htime > self.hend:
                self.hend = e.htime
            e.loc = m.group("loc")
            env = m.group("env")
            e.is_str = env.startswith('{"str": [')
            e.describe = env.startswith('{"describe_')
            e.guards = env.startswith('{"dynamo_cpp_guards_str"')
            if e.describe:
                for dm in DESC_ID_RE.finditer(env):
                    self.max_desc_id = max(self.max_desc_id, int(dm.group(2)))
            j = i
            while j < n and lines[j].startswith("\t"):
                j += 1
            plines = [l[1:] for l in lines[i:j]]
            i = j
            env_parts = tokenize(env, ENV_RE)
            self._note_slots(env_parts)
            for p in env_parts:
                if type(p) is tuple and p[0] == "stridx":
                    self.max_str = max(self.max_str, p[1])
            e.env = env_parts
            e.env_static = env if not any(type(p) is tuple for p in env_parts) else None
            e.json_payload = False
            if plines:
                payload = "\n".join(plines)
                if payload.lstrip()[:1] in ("{", "["):
                    try:
                        json.loads(payload)
                        e.json_payload = True
                    except ValueError:
                        pass
                declared = None
                for p in env_parts:
                    if type(p) is tuple and p[0] == "md5":
                        declared = p[1]
                actual = hashlib.md5(payload.encode("utf-8", "surrogateescape")).hexdigest()
                e.payload_md5_ok = declared is not None and declared == actual
                if declared is not None and not e.payload_md5_ok:
                    self.md5_bad += 1
                pat = RR_PAYLOAD_RE if '"recompile_reasons"' in env else PAYLOAD_RE
                pparts = tokenize(payload, pat)
                self._note_slots(pparts)
                if any(type(p) is tuple for p in pparts):
                    e.payload = pparts
                    e.payload_static = None
                else:
                    e.payload = None
                    # pre-rendered tabbed block + md5, reused by every block
                    e.payload_static = (
                        "\t" + payload.replace("\n", "\n\t") + "\n",
                        actual,
                        payload,
                    )
            else:
                e.payload = None
                e.payload_static = None
                e.payload_md5_ok = False
            self.entries.append(e)

    def duration_s(self) -> int:
        d = 0.0
        if self.hstart is not None:
            d = (self.hend - self.hstart).total_seconds()
        if self.estart is not None:
            d = max(d, self.eend - self.estart)
        return int(d) + 1 + 1  # round up + 1 s gap


def render(parts, frame_off, str_base, tshift, md5=None) -> str:
    out = []
    for p in parts:
        if type(p) is str:
            out.append(p)
            continue
        kind, v = p
        if kind in FRAME_KINDS:
            out.append(str(v + frame_off))
        elif kind in TIME_SCALE:
            out.append(str(v + tshift * TIME_SCALE[kind]))
        elif kind == "fname" or kind == "stridx":
            out.append(str(v + str_base))
        elif kind == "md5":
            out.append(md5 if md5 is not None else v)
        else:  # pragma: no cover
            raise AssertionError(kind)
    return "".join(out)


# --shape tensor: describe_* ids, sources and object addresses, and guard trees.
DESC_ID_RE = re.compile(r'"(id|storage|grad)": (\d+)')
DESCRIBER_RE = re.compile(r'"describer_id": (\d+)')
SOURCE_RE = re.compile(r'"source": "((?:[^"\\]|\\.)*)"')
ADDR_RE = re.compile(r"0x([0-9a-f]{6,})")
INDEX_RE = re.compile(r"\[('?)(\d+)('?)\]")
NAME_RE = re.compile(r"\['([^'\\]+)'\]")
MANAGER_RE = re.compile(r"GuardManager: source=(.*?), accessed_by=")


def rename_source(src: str, n: int) -> str:
    """The source of layer `n`'s copy of a tensor: its first numeric index plus `n * 100`, else
    its first name with `_n` appended, else `src_n`."""
    if n == 0:
        return src
    m = INDEX_RE.search(src)
    if m:
        return src[: m.start(2)] + str(int(m.group(2)) + n * 100) + src[m.end(2) :]
    m = NAME_RE.search(src)
    if m:
        return src[: m.end(1)] + f"_{n}" + src[m.end(1) :]
    return f"{src}_{n}"


def move_addresses(text: str, n: int) -> str:
    """Object addresses (`0x...`) of copy `n`: another object, another address."""
    if n == 0:
        return text
    return ADDR_RE.sub(lambda m: "0x%0*x" % (len(m.group(1)), int(m.group(1), 16) + n * 0x1000), text)


def describe_copy(env: str, block: int, k: int, n: int, id_stride: int, describer_stride: int) -> str:
    """A rendered describe_* envelope for block `block`, tensor copy `k` (layer `n`)."""
    env = DESCRIBER_RE.sub(lambda m: f'"describer_id": {int(m.group(1)) + block * describer_stride}', env)
    if k == 0:
        return env
    env = DESC_ID_RE.sub(lambda m: f'"{m.group(1)}": {int(m.group(2)) + k * id_stride}', env)
    env = SOURCE_RE.sub(lambda m: '"source": ' + json.dumps(rename_source(json.loads(f'"{m.group(1)}"'), n)), env)
    return move_addresses(env, n)


def amplify_guards(text: str, block: int, copies: int) -> tuple[str, bool]:
    """A guard tree with every tensor's GuardManager subtree followed by `copies - 1` copies of it
    (sources renamed as `rename_source` does for the describe_* copies); whether it changed."""
    lines = text.split("\n")
    out = []
    changed = False
    i = 0
    while i < len(lines):
        line = lines[i]
        at = line.find("+- GuardManager: source=")
        m = MANAGER_RE.search(line) if at >= 0 else None
        if m is None:
            out.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].find("+- ") > at:
            j += 1
        sub = lines[i:j]
        out.extend(sub)
        if any(l.find("+- TENSOR_MATCH") == at + 2 for l in sub[1:]):
            src = m.group(1)
            for k in range(1, copies):
                new = rename_source(src, block * copies + k)
                out.extend(l.replace(src, new) for l in sub)
                changed = True
        i = j
    return "\n".join(out), changed


def resolve_fixtures(arg: str | None) -> str:
    if arg:
        return arg
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cand = os.path.join(root, "fixtures-repo")
    if os.path.isdir(cand):
        return cand
    return os.path.join(os.path.dirname(root), "shared", "fixtures")


def generate(args) -> int:
    fixtures = resolve_fixtures(args.fixtures)
    paths = []
    tensor = args.shape == "tensor"
    shape_sources = {"default": DEFAULT_SOURCES, "tensor": TENSOR_SOURCES, "compiles": COMPILES_SOURCES}
    for pat in args.sources or shape_sources[args.shape]:
        hits = sorted(glob.glob(os.path.join(fixtures, pat)))
        if not hits:
            print(f"make_big_log: no fixture matches {pat!r} under {fixtures}", file=sys.stderr)
            return 2
        paths.extend(hits)
    t0 = time.monotonic()
    sources = [Source(p) for p in paths]
    bad = sum(s.md5_bad for s in sources)
    if bad:
        print(f"make_big_log: warning: {bad} source payloads do not verify (kept as-is)", file=sys.stderr)
    max_frame = max(s.max_frame for s in sources)
    if max_frame >= args.frame_stride:
        print(f"make_big_log: --frame-stride {args.frame_stride} <= max frame id {max_frame}", file=sys.stderr)
        return 2

    # Disjoint str index ranges, assigned in sorted path order.
    str_base = {}
    acc = 0
    for s in sorted(sources, key=lambda s: s.path):
        str_base[s.path] = acc
        acc += s.max_str + 1

    target = int(args.size_mb * 1024 * 1024)
    rng = random.Random(args.seed)
    pid = str(args.pid)

    # Timeline cursors, in whole seconds, starting at the first block's source start.
    hcursor = None  # datetime
    ecursor = None  # int epoch seconds
    written = 0
    block = 0
    entries_out = 0
    rnd = 0
    seen = set()
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape", newline="\n", buffering=1 << 22) as out:
        while written < target:
            order = list(sources)
            rng.shuffle(order)
            for s in order:
                if written >= target:
                    break
                first_copy = s.path not in seen
                seen.add(s.path)
                foff = block * args.frame_stride
                sbase = str_base[s.path]
                hs = s.hstart.replace(microsecond=0) if s.hstart else None
                if hcursor is None:
                    hcursor = hs or _dt.datetime(ASSUMED_YEAR, 1, 1)
                hshift = (hcursor - hs) if hs else _dt.timedelta(0)
                es = int(s.estart) if s.estart is not None else None
                if ecursor is None and es is not None:
                    ecursor = es
                eshift = (ecursor - es) if es is not None else 0
                buf = []
                run = []  # --shape tensor: the describe_* entries just written (time, loc, env)

                def header(ht, loc, env):
                    return (
                        f"{e.prefix_lvl}{ht.month:02d}{ht.day:02d} {ht.hour:02d}:{ht.minute:02d}:"
                        f"{ht.second:02d}.{ht.microsecond:06d} {pid} {loc}] {env}\n"
                    )

                def flush_run():
                    nonlocal entries_out
                    for k in range(1, args.tensor_copies):
                        for ht, loc, env in run:
                            n = block * args.tensor_copies + k
                            buf.append(header(ht, loc, describe_copy(env, block, k, n, id_stride, args.frame_stride)))
                            entries_out += 1
                    run.clear()

                id_stride = s.max_desc_id + 1
                for e in s.entries:
                    if run and not (e.raw is None and e.describe):
                        flush_run()
                    if e.raw is not None:
                        buf.append(e.raw + "\n")
                        continue
                    if e.is_str and not first_copy:
                        continue
                    ht = e.htime + hshift
                    md5 = None
                    ptxt = None
                    if e.payload is not None:
                        ptxt = render(e.payload, foff, sbase, eshift)
                    elif e.payload_static is not None:
                        pblock, md5, ptxt = e.payload_static
                    changed = e.payload is not None
                    if tensor and ptxt is not None and e.payload_md5_ok and not e.json_payload:
                        if e.guards:
                            ptxt, changed = amplify_guards(ptxt, block, args.tensor_copies)
                        if not changed and block > 0:
                            # The same text in every block: make it this block's own.
                            ptxt += f"\n# block {block}"
                            changed = True
                    if changed:
                        if e.payload_md5_ok:
                            md5 = hashlib.md5(ptxt.encode("utf-8", "surrogateescape")).hexdigest()
                        pblock = "\t" + ptxt.replace("\n", "\n\t") + "\n"
                    elif ptxt is None:
                        pblock = ""
                    if not e.payload_md5_ok:
                        md5 = None
                    env = e.env_static if e.env_static is not None else render(e.env, foff, sbase, eshift, md5)
                    if tensor and e.describe:
                        env = describe_copy(env, block, 0, 0, id_stride, args.frame_stride)
                        run.append((ht, e.loc, env))
                    buf.append(header(ht, e.loc, env))
                    if pblock:
                        buf.append(pblock)
                    entries_out += 1
                if run:
                    flush_run()
                chunk = "".join(buf)
                out.write(chunk)
                written += len(chunk.encode("utf-8", "surrogateescape")) if not chunk.isascii() else len(chunk)
                dur = s.duration_s()
                hcursor = hcursor + _dt.timedelta(seconds=dur)
                if ecursor is not None:
                    ecursor += dur
                block += 1
            rnd += 1
    os.replace(tmp, args.out)
    dt = time.monotonic() - t0
    print(
        f"make_big_log: wrote {args.out}: {written} bytes ({written / 2**20:.1f} MiB), "
        f"{entries_out} entries, {block} blocks from {len(sources)} sources "
        f"({rnd} rounds), max frame id {(block - 1) * args.frame_stride + max_frame}, "
        f"{dt:.1f}s",
        file=sys.stderr,
    )
    return 0


def verify(paths) -> int:
    """Check every has_payload md5, and report line/entry counts."""
    rc = 0
    for path in paths:
        t0 = time.monotonic()
        lines = entries = payloads = bad = missing_hdr = 0
        str_redef = str_undef = 0
        strtab = {}
        pids = set()
        with open(path, "rb") as f:
            cur_md5 = None
            h = None
            first = True

            def finish():
                nonlocal bad, payloads
                if cur_md5 is not None:
                    payloads += 1
                    got = h.hexdigest() if h is not None else hashlib.md5(b"").hexdigest()
                    if got != cur_md5:
                        bad += 1

            for raw in f:
                lines += 1
                if raw.startswith(b"\t"):
                    if h is None:
                        if cur_md5 is None:
                            continue
                        h = hashlib.md5()
                        first = True
                    if not first:
                        h.update(b"\n")
                    first = False
                    h.update(raw[1:].rstrip(b"\n"))
                    continue
                finish()
                cur_md5 = None
                h = None
                m = re.match(rb"^[VIWEF]\d{4} \S+ +(\d+) [^\]]*\] ", raw)
                if not m:
                    missing_hdr += 1
                    continue
                entries += 1
                pids.add(m.group(1))
                if raw.find(b'{"str": [') >= 0:
                    sm = re.search(rb'\{"str": \[("(?:[^"\\]|\\.)*"), (\d+)\]', raw)
                    if sm:
                        old = strtab.setdefault(int(sm.group(2)), sm.group(1))
                        if old != sm.group(1):
                            str_redef += 1
                if raw.find(b'"filename": ') >= 0:
                    for fm in re.finditer(rb'"filename": (\d+)', raw):
                        if int(fm.group(1)) not in strtab:
                            str_undef += 1
                mm = re.search(rb'"has_payload": "([0-9a-f]{32})"', raw)
                if mm:
                    cur_md5 = mm.group(1).decode()
            finish()
        dt = time.monotonic() - t0
        ok = bad == 0 and missing_hdr == 0 and str_redef == 0 and str_undef == 0
        print(
            f"verify {path}: {lines} lines, {entries} entries, {payloads} payloads with md5, "
            f"{bad} md5 mismatches, {missing_hdr} non-header non-payload lines, "
            f"{len(strtab)} str entries ({str_redef} redefined, {str_undef} undefined refs), "
            f"{len(pids)} pid(s) -> {'OK' if ok else 'FAIL'} ({dt:.1f}s)"
        )
        if not ok:
            rc = 1
    return rc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="output log path")
    ap.add_argument("--size-mb", type=float, default=150, help="minimum output size in MiB (default 150)")
    ap.add_argument("--fixtures", help="fixture dir (default: <repo>/fixtures-repo, else <repo>/../shared/fixtures)")
    ap.add_argument("--seed", type=int, default=0, help="shuffles source order per round (default 0)")
    ap.add_argument("--sources", nargs="+", help="glob(s) relative to the fixture dir (single-rank logs)")
    ap.add_argument("--pid", type=int, default=424242, help="pid written on every header line")
    ap.add_argument("--frame-stride", type=int, default=1000, help="frame id offset per block (default 1000)")
    ap.add_argument(
        "--shape",
        choices=["default", "tensor", "compiles"],
        default="default",
        help="tensor: tensor-heavy compiles with unique payloads, like a large model (see above); "
        "compiles: many small compiles, most failing (COMPILES_SOURCES)",
    )
    ap.add_argument(
        "--tensor-copies",
        type=int,
        default=16,
        help="--shape tensor: copies of each described tensor and its guards (default 16)",
    )
    ap.add_argument("--verify", nargs="+", metavar="LOG", help="only verify md5s / counts of existing logs")
    args = ap.parse_args(argv)
    if args.verify:
        return verify(args.verify)
    if not args.out:
        ap.error("OUT_PATH is required")
    return generate(args)


if __name__ == "__main__":
    sys.exit(main())
