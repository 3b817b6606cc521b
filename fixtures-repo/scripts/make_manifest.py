#!/usr/bin/env python3
"""(Re)generate manifest.json of this fixtures repository, or check it.

The descriptive fields of every trace (id, path, source, shows, real,
derivation, notes) are hand-written in scripts/traces.json. Everything else is
computed from the tree:

  files              every file of the trace (the file itself, or every file
                     under the trace's directory, recursively), each with its
                     path relative to the repository root, size in bytes and
                     BLAKE3 hash (64 lowercase hex digits)
  torch_version      the public version (the part before "+") of the
                     `pytorch_version` in the trace's `torch_version`
                     artifact, or null when no file has that artifact
  torch_version_hint the distinct versions named by `# torch version: X`
                     comments in inductor-generated code inside the logs
                     (comma-separated), or null; older logs have no
                     torch_version artifact but often have these comments

Usage:
  python3 scripts/make_manifest.py           # write manifest.json
  python3 scripts/make_manifest.py --check   # exit 1 if manifest.json differs
  python3 scripts/make_manifest.py --audit   # also print has_payload md5
                                             # checks per file (diagnostic)

Requires the `blake3` package (pip install blake3).
"""

import argparse
import difflib
import hashlib
import json
import os
import re
import sys

try:
    import blake3
except ImportError:  # pragma: no cover
    sys.exit("make_manifest.py needs the blake3 package: pip install blake3")

FORMAT = "tlparse-fixtures"
VERSION = 1

# Top-level directories that hold traces; every file in them must belong to
# exactly one trace unless it matches DOC_FILES.
TRACE_ROOTS = ("tlparse-tests", "torch-2.15", "hostile")

# Files under TRACE_ROOTS that are documentation or generator scripts, not traces.
DOC_FILES = [
    re.compile(r"^tlparse-tests/(README\.md|LICENSE-tlparse)$"),
    re.compile(r"^torch-2\.15/(README\.md|SUMMARY\.md|CATALOG\.md)$"),
    re.compile(r"^torch-2\.15/scenarios/[^/]+\.py$"),
]

KEY_ORDER = [
    "id",
    "path",
    "source",
    "torch_version",
    "torch_version_hint",
    "shows",
    "real",
    "derivation",
    "notes",
    "files",
]

HINT_RE = re.compile(rb"^\t# torch version: (\S+)\s*$", re.M)


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


def list_files(root, relpath):
    full = os.path.join(root, relpath)
    if os.path.isfile(full):
        return [relpath]
    if not os.path.isdir(full):
        raise SystemExit("trace path does not exist: %s" % relpath)
    out = []
    for dirpath, dirnames, filenames in os.walk(full):
        dirnames.sort()
        for name in filenames:
            out.append(rel(root, os.path.join(dirpath, name)))
    return sorted(out)


def entries(data):
    """Yield (metadata dict, payload bytes or None) for each log entry.

    A header line is any line not starting with a tab; its JSON starts at the
    first '{'. Payload lines follow, each prefixed by one tab."""
    lines = data.split(b"\n")
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if line.startswith(b"\t"):
            continue
        start = line.find(b"{")
        if start < 0:
            continue
        try:
            meta = json.loads(line[start:])
        except ValueError:
            continue
        payload = []
        while i < n and lines[i].startswith(b"\t"):
            payload.append(lines[i][1:])
            i += 1
        yield meta, (b"\n".join(payload) if payload else None)


def torch_versions(data):
    """pytorch_version values of torch_version artifacts in one log."""
    found = set()
    if b'"torch_version"' not in data:
        return found
    for meta, payload in entries(data):
        art = meta.get("artifact") if isinstance(meta, dict) else None
        if isinstance(art, dict) and art.get("name") == "torch_version" and payload:
            try:
                v = json.loads(payload).get("pytorch_version")
            except (ValueError, AttributeError):
                v = None
            if v:
                found.add(str(v))
    return found


def md5_audit(data):
    ok = bad = 0
    for meta, payload in entries(data):
        if isinstance(meta, dict) and "has_payload" in meta:
            h = hashlib.md5(payload or b"").hexdigest()
            if h == meta["has_payload"]:
                ok += 1
            else:
                bad += 1
    return ok, bad


def load_traces(root):
    with open(os.path.join(root, "scripts", "traces.json"), encoding="utf-8") as f:
        traces = json.load(f)
    ids = set()
    for t in traces:
        for key in ("id", "path", "source", "shows", "real"):
            if key not in t:
                raise SystemExit("traces.json: %r lacks %r" % (t.get("id"), key))
        extra = set(t) - set(KEY_ORDER)
        if extra:
            raise SystemExit("traces.json: %s has unknown keys %s" % (t["id"], sorted(extra)))
        if t["id"] in ids:
            raise SystemExit("traces.json: duplicate id %s" % t["id"])
        ids.add(t["id"])
        if not isinstance(t["real"], bool):
            raise SystemExit("traces.json: %s: real must be true or false" % t["id"])
        if not t["real"] and not t.get("derivation"):
            raise SystemExit("traces.json: %s is not real but has no derivation" % t["id"])
        if t["real"] and t.get("derivation"):
            raise SystemExit("traces.json: %s is real but has a derivation" % t["id"])
    return traces


def build(root, audit=False):
    traces = load_traces(root)
    owner = {}
    out = []
    for t in traces:
        files = []
        versions = set()
        hints = set()
        for path in list_files(root, t["path"]):
            if path in owner:
                raise SystemExit("%s belongs to both %s and %s" % (path, owner[path], t["id"]))
            owner[path] = t["id"]
            with open(os.path.join(root, path), "rb") as f:
                data = f.read()
            files.append(
                {
                    "path": path,
                    "size": len(data),
                    "blake3": blake3.blake3(data).hexdigest(),
                }
            )
            versions |= torch_versions(data)
            hints |= {h.decode() for h in HINT_RE.findall(data)}
            if audit:
                ok, bad = md5_audit(data)
                print("%-80s md5 ok %5d  mismatched %4d" % (path, ok, bad), file=sys.stderr)
        public = sorted({v.split("+", 1)[0] for v in versions})
        if len(public) > 1:
            raise SystemExit("%s: several torch versions %s" % (t["id"], public))
        entry = {
            "id": t["id"],
            "path": t["path"],
            "source": t["source"],
            "torch_version": public[0] if public else None,
            "torch_version_hint": ", ".join(sorted(hints)) or None,
            "shows": t["shows"],
            "real": t["real"],
            "derivation": t.get("derivation"),
            "notes": t.get("notes"),
            "files": sorted(files, key=lambda x: x["path"]),
        }
        out.append({k: entry[k] for k in KEY_ORDER})

    # Every file under the trace roots must be a trace file or a known doc file.
    stray = []
    for top in TRACE_ROOTS:
        for path in list_files(root, top):
            if path not in owner and not any(p.match(path) for p in DOC_FILES):
                stray.append(path)
    if stray:
        raise SystemExit("files in no trace (add them to scripts/traces.json):\n  " + "\n  ".join(stray))

    out.sort(key=lambda x: x["id"])
    manifest = {"format": FORMAT, "version": VERSION, "traces": out}
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if manifest.json differs")
    ap.add_argument("--audit", action="store_true", help="print has_payload md5 checks per file to stderr")
    ap.add_argument("--root", default=repo_root(), help="repository root (default: parent of scripts/)")
    args = ap.parse_args()

    root = os.path.abspath(args.root)
    text = build(root, audit=args.audit)
    target = os.path.join(root, "manifest.json")

    if args.check:
        try:
            with open(target, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            print("manifest.json is missing", file=sys.stderr)
            return 1
        if current != text:
            diff = difflib.unified_diff(
                current.splitlines(True), text.splitlines(True), "manifest.json", "generated"
            )
            sys.stderr.writelines(list(diff)[:200])
            print("manifest.json is out of date; run scripts/make_manifest.py", file=sys.stderr)
            return 1
        n = len(json.loads(text)["traces"])
        print("manifest.json is up to date (%d traces)" % n)
        return 0

    with open(target, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print("wrote %s" % target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
