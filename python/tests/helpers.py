"""What the tests check the reader against, computed without it: blob-index shards read with
zstandard directly, the manifest's `rows` rule of each table as its docs page states it, and
payloads cut out of the raw logs; and tables split into parts by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import zstandard


def manifest(root: Path) -> Dict[str, Any]:
    return json.loads((root / "manifest.json").read_text())


def unzstd_json(path: Path) -> Any:
    return json.loads(zstandard.ZstdDecompressor().stream_reader(path.read_bytes()).read())


def shard_entries(root: Path) -> Dict[str, Dict[str, int]]:
    """Every blob of a bundle, {id: {pack, offset, size}}, from all of its blob-index shards."""
    blobs = manifest(root)["blobs"]
    n = blobs["index_prefix_len"]
    prefixes = [format(i, f"0{n}x") for i in range(16**n)] if n else ["all"]
    entries: Dict[str, Dict[str, int]] = {}
    for prefix in prefixes:
        entries.update(unzstd_json(root / blobs["index_path"].replace("{prefix}", prefix)))
    return entries


GUARD_LISTS = ("dynamo_guards", "guard_trees", "shape_guards", "specializations", "symbols", "data_dependent")


def counted_rows(name: str, data: Any, main: List[Any]) -> int:
    """The manifest's `rows` of a table, by the rule its docs page states."""
    if name == "guards":  # docs/tables/guards.md: every list except compiles
        return sum(len(data[k]) for k in GUARD_LISTS)
    if name == "stack_trie":  # docs/tables/stack_trie.md: the nodes of both tries
        return len(data["nodes"]) + len(data["unknown_nodes"])
    if name == "graph_execution":  # docs/tables/graph_execution.md: executions
        return sum(len(r["order"]) for r in data["recordings"]) + len(data["legacy"])
    if name == "execution_order":  # docs/cross_rank/execution_order.md: streams with an order
        return sum(1 for s in data["streams"] if s["recorded_group"] is not None or s["legacy_group"] is not None)
    return len(main)


def logged_payload(log_lines: List[bytes], header_line: int, count: int) -> bytes:
    """A payload as torch logged it: the `count` lines after the header (numbered from 1), each
    without its leading tab, joined with newlines (format.md: "Payload / blob")."""
    lines = [line.rstrip(b"\r") for line in log_lines[header_line : header_line + count]]
    assert all(line.startswith(b"\t") for line in lines), f"payload of line {header_line} is not tab-indented"
    return b"\n".join(line[1:] for line in lines)


def zstd_json(value: Any) -> bytes:
    return zstandard.ZstdCompressor().compress(json.dumps(value).encode())


def table_refs(m: Dict[str, Any]) -> Iterator[Tuple[Optional[str], str, Dict[str, Any]]]:
    """Every table reference of a manifest: (stream id, None for cross-rank; name; reference)."""
    for stream in m["streams"]:
        for name, ref in stream["tables"].items():
            yield stream["id"], name, ref
    for name, ref in ((m.get("cross_rank") or {}).get("tables") or {}).items():
        yield None, name, ref


def slices(items: List[Any], n: int) -> List[List[Any]]:
    """`items` cut in `n` consecutive slices as even as can be (some empty when items are few)."""
    bounds = [len(items) * k // n for k in range(n + 1)]
    return [items[bounds[k] : bounds[k + 1]] for k in range(n)]


def split_table(root: Path, stream: Optional[str], name: str, n: int = 3) -> List[Dict[str, Any]]:
    """Splits a one-part table of a format 2 bundle into `n` parts by hand, as the writer does
    (docs/format.md): each top-level list cut into consecutive slices, every
    other member copied into every part, the parts written as `<name>.<k>.json.zst` beside the
    table's file (which is removed) and listed in the manifest. The parts' documents, in order."""
    m = manifest(root)
    ref = next(r for s, t, r in table_refs(m) if (s, t) == (stream, name))
    (path,) = ref["parts"]
    whole = unzstd_json(root / path)
    lists = {k: slices(v, n) for k, v in whole.items() if isinstance(v, list)}
    parts = [{k: lists[k][i] if k in lists else v for k, v in whole.items()} for i in range(n)]
    stem = path[: -len(".json.zst")]
    ref["parts"] = [f"{stem}.{i}.json.zst" for i in range(n)]
    for part_path, part in zip(ref["parts"], parts):
        (root / part_path).write_bytes(zstd_json(part))
    (root / path).unlink()
    (root / "manifest.json").write_text(json.dumps(m))
    return parts
