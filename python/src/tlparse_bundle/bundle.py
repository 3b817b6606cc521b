"""`open()` and `Bundle`: a bundle opened through a byte source, its manifest checked for format
and version, and its tables, artifacts, blobs, index rows, diagnostics and stacks read on demand.
Everything taken from the bundle is untrusted: paths are checked, sizes capped, and malformed
content raises `BundleError` naming the file."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, Iterator, List, Optional, Union

from .blobs import BlobStore, Lru
from .decode import iter_json_lines, open_decoded, parse_json, read_json
from .errors import BundleError, NotFoundError, UnsupportedBundleError, clip, suggest
from .limits import FORMAT_NAME, READER_VERSION, Limits
from .paths import check_path
from .source import ByteSource, DirSource, HttpSource, read_all
from .stacks import Stacks
from .tables import CROSS_RANK_TABLES, STREAM_TABLES, Parts, Table

MANIFEST = "manifest.json"

PathOrUrl = Union[str, "os.PathLike[str]", ByteSource]


def open(where: PathOrUrl, *, limits: Optional[Limits] = None, timeout: float = 30.0) -> "Bundle":
    """Opens a bundle: a local directory (str or path), an `http(s)://` URL of the bundle's
    directory (with or without a trailing slash), or any `ByteSource`. `timeout` is per HTTP
    request, in seconds."""
    return Bundle(source_for(where, timeout), limits or Limits())


def source_for(where: PathOrUrl, timeout: float = 30.0) -> ByteSource:
    """The byte source for what `open` was given."""
    if isinstance(where, ByteSource):
        return where
    if isinstance(where, str) and re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", where):
        if where.split(":", 1)[0].lower() in ("http", "https"):
            return HttpSource(where, timeout)
        raise ValueError(f"cannot read a bundle from {clip(where)}: only local directories and http(s) URLs")
    return DirSource(where)


def normalize_compile_id(compile_id: str) -> str:
    """A compile id in display form: `0/0` and `[0/0]` are both `[0/0]`."""
    text = str(compile_id).strip()
    return text if text.startswith("[") else f"[{text}]"


class Bundle:
    """An open bundle. `manifest` is manifest.json as a dict; `streams` the ids of its streams
    (`"rank0"`, `"log0"`, ...) in manifest order, which the methods taking `stream=` accept
    (None means the only stream of a one-stream bundle). Caches are not locked: use a Bundle
    from one thread at a time (open one per thread)."""

    def __init__(self, source: ByteSource, limits: Optional[Limits] = None) -> None:
        self.source = source
        self.limits = limits or Limits()
        self.manifest: Dict[str, Any] = read_manifest(source, self.limits)
        self._streams = _stream_entries(self.manifest)
        self.streams: List[str] = list(self._streams)
        self._blobs: Optional[BlobStore] = None
        # compile_directory by stream, kept for artifact(): over HTTP, one fetch per stream.
        self._directories: Lru[str, "tuple[List[Dict[str, Any]], List[Any]]"] = Lru(4)

    def __repr__(self) -> str:
        return f"<Bundle {self.source.describe()}: {len(self.streams)} stream(s)>"

    # Streams and tables.

    def _stream(self, stream: Optional[str]) -> "tuple[str, Dict[str, Any]]":
        """A stream's id and manifest entry; None names the only stream."""
        if stream is None:
            if len(self.streams) == 1:
                return self.streams[0], self._streams[self.streams[0]]
            shown = ", ".join(self.streams[:8]) + (", ..." if len(self.streams) > 8 else "")
            raise BundleError(f"this bundle has {len(self.streams)} streams ({shown}): pass stream=")
        entry = self._streams.get(stream) if isinstance(stream, str) else None
        if entry is None:
            raise NotFoundError(f"no stream {clip(stream, 80)!r} in this bundle: {suggest(str(stream), self.streams)}")
        return stream, entry

    def table(self, name: str, stream: Optional[str] = None) -> Optional[Table]:
        """A table, parsed and whole: its parts merged (part 0's document, each of its lists
        extended by the same list of the later parts, in order). With `stream=None`: the
        cross-rank table of that name if it is one, else the only stream's table (a bundle of
        several streams needs `stream=`). None when the table is absent: a table with no rows is
        not written, and a one-stream bundle has no cross-rank tables."""
        found = self._table_ref(name, stream)
        if found is None:
            return None
        sid, rows, paths = found
        parts = Parts(name)
        merged: Dict[str, Any] = {}
        for index, part in enumerate(self._read_parts(parts, paths)):
            if index == 0:
                merged = part
            else:
                parts.extend(merged, part)
        return Table(name, sid, merged, rows)

    def table_parts(self, name: str, stream: Optional[str] = None) -> Iterator[Table]:
        """The parts of a table, one `Table` each (its `part` the index), read one at a time in
        order, so that a table too big to hold whole can be walked: each part's lists are its
        slices of the table's lists; its other members are the whole table's. `name` and
        `stream` as for `table()`, cross-rank tables included; nothing when the table is
        absent. The stream and the parts' paths are checked at the call, each part as it is read."""
        found = self._table_ref(name, stream)
        if found is None:
            return iter(())
        sid, rows, paths = found
        parts = self._read_parts(Parts(name), paths)
        return (Table(name, sid, part, rows, part=index) for index, part in enumerate(parts))

    def _table_ref(self, name: str, stream: Optional[str]) -> "Optional[tuple[Optional[str], Any, List[str]]]":
        """A table's stream (None: cross-rank), manifest `rows` and part paths; None if absent."""
        if stream is None:
            cross = self._cross_rank_tables()
            if name in cross:
                return self._ref(name, None, cross[name], "manifest.json: cross_rank.tables")
            if name in CROSS_RANK_TABLES:
                return None
        elif name in CROSS_RANK_TABLES:
            raise BundleError(f"{name} is a cross-rank table: call table({name!r}) without stream=")
        sid, entry = self._stream(stream)
        tables = _object(entry.get("tables", {}), f"manifest.json: stream {sid}: tables")
        if name in tables:
            return self._ref(name, sid, tables[name], f"manifest.json: stream {sid}: tables")
        if name in STREAM_TABLES:
            return None
        known = list(STREAM_TABLES) + list(CROSS_RANK_TABLES) + list(tables)
        raise NotFoundError(f"no table named {clip(name, 80)!r}: {suggest(name, known)}")

    def _cross_rank_tables(self) -> Dict[str, Any]:
        cross = self.manifest.get("cross_rank")
        if cross is None:
            return {}
        cross = _object(cross, "manifest.json: cross_rank")
        return _object(cross.get("tables", {}), "manifest.json: cross_rank.tables")

    @staticmethod
    def _ref(name: str, stream: Optional[str], ref: Any, where: str) -> "tuple[Optional[str], Any, List[str]]":
        """A table reference's stream, `rows` and part paths, every path checked before any is read."""
        ref = _object(ref, f"{where}.{name}")
        parts = ref.get("parts")
        if not isinstance(parts, list) or not parts:
            # A format 1 reference names one file in `path`: that bundle is for a reader of version 1.
            old = " (it has a path, as in format 1: rebuild the bundle with a current tlparse-build)"
            old = old if "path" in ref else ""
            raise BundleError(
                f"{where}.{name}.parts: a table lists its parts, at least one path, not {clip(parts, 80)}{old}"
            )
        paths = [check_path(path, f"{where}.{name}.parts[{i}]") for i, path in enumerate(parts)]
        return stream, ref.get("rows"), paths

    def _read_parts(self, parts: Parts, paths: List[str]) -> Iterator[Dict[str, Any]]:
        """Each part of a table, read when asked for and checked against part 0 (`Parts`)."""
        for index, path in enumerate(paths):
            yield parts.check(read_json(self.source, path, self.limits), path, index)

    # Artifacts and blobs.

    def artifact(self, stream: Optional[str], compile_id: str, name: str, occurrence: int = 0) -> str:
        """The text of an artifact of a compile, found through the stream's `compile_directory`
        (`compile_id` as `[0/0]` or `0/0`; `name` as in its `artifacts[].name`, or tlparse's
        `tlparse_name`). A compile that logged several artifacts of that name has them in log
        order: `occurrence` picks one (0, the first, as `tlparse-build cat`). Bytes that are not
        UTF-8 are replaced by U+FFFD: `blob()` gives them exactly."""
        ref = self._artifact_ref(stream, compile_id, name, occurrence)
        return self.blob(ref["blob"]).decode("utf-8", errors="replace")

    def compile_artifacts(self, stream: Optional[str], compile_id: str) -> List[Dict[str, Any]]:
        """The artifacts a compile logged, in log order (`compile_id` as `[0/0]` or `0/0`): its
        slice of the stream's `compile_directory` `artifacts` list, which the compile's row names
        by `first_artifact` and `artifact_count`."""
        sid, _ = self._stream(stream)
        wanted = normalize_compile_id(compile_id)
        compiles, listed = self._directory(sid)
        found = [c for c in compiles if c.get("compile_id") == wanted]
        if not found:
            ids = [c.get("compile_id") for c in compiles]
            raise NotFoundError(f"stream {sid} has no compile id {clip(wanted, 80)}: {suggest(wanted, ids)}")
        first, count = found[0].get("first_artifact"), found[0].get("artifact_count")
        if not (_is_count(first) and _is_count(count) and first + count <= len(listed)):
            raise BundleError(
                f"compile_directory of stream {sid}: {wanted} names artifacts {first!r}+{count!r} of {len(listed)}"
            )
        return [a for a in listed[first : first + count] if isinstance(a, dict)]

    def _artifact_ref(self, stream: Optional[str], compile_id: str, name: str, occurrence: int) -> Dict[str, Any]:
        sid, _ = self._stream(stream)
        wanted = normalize_compile_id(compile_id)
        where = f"compile {wanted} of stream {sid}"
        artifacts = self.compile_artifacts(sid, wanted)
        named = [a for a in artifacts if name in (a.get("name"), a.get("tlparse_name"))]
        if not named:
            names = list(dict.fromkeys(a.get("name") for a in artifacts))
            raise NotFoundError(f"{where} has no artifact named {clip(name, 80)!r}: {suggest(name, names)}")
        if not 0 <= occurrence < len(named):
            raise NotFoundError(f"{where} has {len(named)} artifact(s) named {name!r}, no occurrence {occurrence}")
        ref = named[occurrence]
        if not isinstance(ref.get("blob"), str):
            what = f"a link to {clip(ref['url'])}" if ref.get("url") else "logged without a payload"
            raise NotFoundError(f"{name} of {where} is {what} (log line {ref.get('line')}): no text to read")
        return ref

    def _directory(self, stream: str) -> "tuple[List[Dict[str, Any]], List[Any]]":
        """The compile rows and the artifact list of a stream's compile_directory (both empty
        when it has no such table); a row's artifacts are its `first_artifact`, `artifact_count`
        slice of the list."""
        cached = self._directories.get(stream)
        if cached is None:
            directory = self.table("compile_directory", stream)
            compiles = [c for c in (directory.rows if directory else []) if isinstance(c, dict)]
            artifacts = directory.get("artifacts", []) if directory else []
            if not isinstance(artifacts, list):
                raise BundleError(f"compile_directory of stream {stream}: its artifacts are not a list")
            cached = (compiles, artifacts)
            self._directories.put(stream, cached)
        return cached

    def blob(self, blob_id: str) -> bytes:
        """The bytes of a blob (a payload as logged), by its id. Not checked against the id:
        ids are blake3-128, which the standard library does not compute."""
        if self._blobs is None:
            self._blobs = BlobStore(self.source, self.manifest.get("blobs"), self.limits)
        return self._blobs.read(blob_id)

    # Files read line by line, and stacks.

    def index_rows(self, stream: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """The event index of a stream: one dict per log entry, in log order, read lazily, with
        the `seq` and `line` the file leaves out filled in (see `RowNumbering`)."""
        sid, entry = self._stream(stream)
        path = check_path(entry.get("index"), f"manifest.json: stream {sid}: index")
        declared = _declared_count(entry.get("entries"), f"manifest.json: stream {sid}: entries")
        numbering = RowNumbering()
        rows = _at_most(iter_json_lines(self.source, path, self.limits), declared, path, "entries")
        return (numbering.fill(row) for row in rows)

    def diagnostics(self) -> Iterator[Dict[str, Any]]:
        """The problems found in the logs (`diagnostics.jsonl`), one dict each, read lazily."""
        diagnostics = _object(self.manifest.get("diagnostics"), "manifest.json: diagnostics")
        path = check_path(diagnostics.get("path"), "manifest.json: diagnostics.path")
        declared = _declared_count(diagnostics.get("total"), "manifest.json: diagnostics.total")
        return _at_most(iter_json_lines(self.source, path, self.limits), declared, path, "diagnostics")

    def stacks(self, stream: Optional[str] = None) -> Stacks:
        """The stack table of a stream."""
        sid, entry = self._stream(stream)
        path = check_path(entry.get("stacks"), f"manifest.json: stream {sid}: stacks")
        return Stacks(path, read_json(self.source, path, self.limits))


def read_manifest(source: ByteSource, limits: Limits) -> Dict[str, Any]:
    """manifest.json, refused unless it names this format and a reader version this one meets."""
    try:
        data = read_all(open_decoded(source, MANIFEST, limits.manifest, limits.manifest))
    except NotFoundError as e:
        raise NotFoundError(f"{source.describe()}: not a bundle (no {MANIFEST}): {e}") from e
    manifest = parse_json(data, MANIFEST)
    if not isinstance(manifest, dict):
        raise BundleError(f"{MANIFEST}: not a JSON object")
    if manifest.get("format") != FORMAT_NAME:
        raise UnsupportedBundleError(
            f"{MANIFEST}: not a {FORMAT_NAME} manifest (its format is {clip(manifest.get('format'), 80)})"
        )
    needed = manifest.get("min_reader_version")
    if isinstance(needed, bool) or not isinstance(needed, int) or needed > READER_VERSION:
        raise UnsupportedBundleError(
            f"{MANIFEST}: this bundle needs a reader of version {clip(needed, 40)} "
            f"(min_reader_version); this reader is version {READER_VERSION}: update tlparse-bundle"
        )
    return manifest


def _stream_entries(manifest: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The manifest's streams by id, checked to be objects with distinct string ids."""
    streams = manifest.get("streams")
    if not isinstance(streams, list):
        raise BundleError(f"{MANIFEST}: streams is not a list")
    entries: Dict[str, Dict[str, Any]] = {}
    for i, entry in enumerate(streams):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise BundleError(f"{MANIFEST}: streams[{i}] is not an object with a string id")
        if entry["id"] in entries:
            raise BundleError(f"{MANIFEST}: stream id {clip(entry['id'], 80)!r} is listed twice")
        entries[entry["id"]] = entry
    return entries


def _object(value: Any, where: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise BundleError(f"{where} is not a JSON object")
    return value


def _count(n: Any) -> int:
    """A line or line count as stored; a hostile row's junk counts as 0."""
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0


class RowNumbering:
    """Numbers the rows of one stream's index as they are read, in order. A row stores no `seq`
    (its position, from 0) and stores `line` only where the row before does not imply it: the
    first row implies line 1, a row implies `line + 1 + payload["lines"]`. `Bundle.index_rows`
    uses it; use it when reading an index file yourself."""

    def __init__(self) -> None:
        self.seq = 0
        self.next_line = 1

    def fill(self, row: Dict[str, Any]) -> Dict[str, Any]:
        """Sets `row["seq"]` and, unless stored, `row["line"]`; returns the row."""
        if not isinstance(row, dict):
            raise BundleError(f"index row {self.seq}: not a JSON object")
        row["seq"] = self.seq
        self.seq += 1
        if not _count(row.get("line")):
            row["line"] = self.next_line
        payload = row.get("payload")
        lines = _count(payload.get("lines")) if isinstance(payload, dict) else 0
        self.next_line = row["line"] + 1 + lines if row["line"] else 0
        return row


def _is_count(value: Any) -> bool:
    """A JSON whole number from 0 (never a bool, which Python counts as an int)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _declared_count(value: Any, what: str) -> int:
    """A count the manifest declares: a JSON whole number from 0."""
    if not _is_count(value):
        raise BundleError(f"{what}: {clip(value)} is not a count")
    return value


def _at_most(rows: Iterator[Any], declared: int, path: str, what: str) -> Iterator[Any]:
    """`rows`, refused at the first one past the `declared` number: a file holding more than its
    manifest says is damaged or hostile, and is not read on."""
    for n, row in enumerate(rows):
        if n >= declared:
            raise BundleError(f"{path}: more rows than the {declared} {what} manifest.json declares")
        yield row
