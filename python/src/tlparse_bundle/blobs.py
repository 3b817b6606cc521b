"""The blob store: a blob id is looked up in its blob-index shard (`blobs.index_path` with
`{prefix}` = the id's first `index_prefix_len` hex digits, `all` when 0), which gives a pack, an
offset and a size; the pack is zstd-decompressed as a stream only as far as the blob ends.
Recently used shards and packs (with what was decompressed of them) are cached. Blob ids are
blake3-128 of the bytes; they are not checked here (the standard library has no blake3)."""

from __future__ import annotations

import io
import re
from collections import OrderedDict
from typing import Any, Dict, Generic, Optional, Tuple, TypeVar

from .decode import open_decoded, read_json
from .errors import BundleError, NotFoundError, clip
from .limits import Limits
from .paths import check_path
from .source import ByteSource, Capped, read_all

BLOB_ID = re.compile(r"[0-9a-f]{32}")

# The longest shard prefix a blob id can name (as the Rust reader).
MAX_PREFIX_LEN = 8

# Shards hold up to ~4096 entries (a few hundred KB parsed); packs ~1 MiB decompressed.
SHARDS_CACHED = 16
PACKS_CACHED = 4

# Decompress a pack at least this much further at a time, so reading its blobs one after
# another does not call the decoder once per blob.
PACK_STEP = 1 << 18

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """A small least-recently-used cache."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: "OrderedDict[K, V]" = OrderedDict()

    def get(self, key: K) -> Optional[V]:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)


def _int(value: object, where: str, high: Optional[int] = None) -> int:
    """`value` if it is a non-negative integer (not a bool) up to `high`; else a BundleError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (high is not None and value > high):
        bound = f" up to {high}" if high is not None else ""
        raise BundleError(f"{where} must be an integer from 0{bound}, not {clip(value, 40)}")
    return value


class _Pack:
    """A pack being decompressed: what was decompressed so far, and the decoder to go on with."""

    def __init__(self, stream: Capped) -> None:
        self.stream: Optional[Capped] = stream
        self.data = bytearray()

    def decompress_to(self, end: int) -> bool:
        """Decompresses until the first `end` bytes are there (going on by at least PACK_STEP
        at a time, never past the pack's declared size); False when the pack ends before."""
        while len(self.data) < end and self.stream is not None:
            chunk = self.stream.read(max(end - len(self.data), PACK_STEP))
            if not chunk:
                self.stream.close()
                self.stream = None
            self.data += chunk
        return len(self.data) >= end


class BlobStore:
    """Reads blobs through the manifest's `blobs` section."""

    def __init__(self, source: ByteSource, blobs: Any, limits: Limits) -> None:
        if not isinstance(blobs, dict):
            raise BundleError("manifest.json: blobs is not an object")
        self._source = source
        self._limits = limits
        self._prefix_len = _int(blobs.get("index_prefix_len"), "manifest.json: blobs.index_prefix_len", MAX_PREFIX_LEN)
        template = blobs.get("index_path")
        if not isinstance(template, str) or "{prefix}" not in template:
            raise BundleError("manifest.json: blobs.index_path must be a path holding {prefix}")
        self._template = template
        packs = blobs.get("packs")
        if not isinstance(packs, list):
            raise BundleError("manifest.json: blobs.packs is not a list")
        self._packs = packs
        self._shards: Lru[str, Dict[str, Any]] = Lru(SHARDS_CACHED)
        self._decoded: Lru[int, _Pack] = Lru(PACKS_CACHED)

    def shard_name(self, blob_id: str) -> str:
        return blob_id[: self._prefix_len] if self._prefix_len else "all"

    def shard_path(self, name: str) -> str:
        return check_path(self._template.replace("{prefix}", name), "manifest.json: blobs.index_path")

    def locate(self, blob_id: str) -> Tuple[int, int, int]:
        """(pack, offset, size) of a blob, checked against the manifest's packs."""
        if not isinstance(blob_id, str) or not BLOB_ID.fullmatch(blob_id):
            raise NotFoundError(f"{clip(blob_id, 80)} is not a blob id (32 lowercase hex digits)")
        path = self.shard_path(self.shard_name(blob_id))
        entry = self._shard(path).get(blob_id)
        if entry is None:
            raise NotFoundError(f"no blob {blob_id} in {path}")
        if not isinstance(entry, dict):
            raise BundleError(f"{path}: the entry of {blob_id} is not an object")
        where = f"{path}: {blob_id}"
        pack = _int(entry.get("pack"), f"{where}.pack", len(self._packs) - 1)
        offset = _int(entry.get("offset"), f"{where}.offset")
        size = _int(entry.get("size"), f"{where}.size")
        raw_size = self._pack_info(pack)[1]
        if offset + size > raw_size:
            raise BundleError(f"{where}: lies outside its pack ({offset} + {size} > {raw_size} bytes)")
        return pack, offset, size

    def read(self, blob_id: str) -> bytes:
        """The bytes of a blob."""
        pack, offset, size = self.locate(blob_id)
        decoded = self._pack(pack)
        if not decoded.decompress_to(offset + size):
            path = self._pack_info(pack)[0]
            raise BundleError(f"{path}: decompresses to fewer bytes than blob {blob_id} needs ({offset + size})")
        return bytes(decoded.data[offset : offset + size])

    def _shard(self, path: str) -> Dict[str, Any]:
        shard = self._shards.get(path)
        if shard is None:
            shard = read_json(self._source, path, self._limits)
            if not isinstance(shard, dict):
                raise BundleError(f"{path}: a blob-index shard is a JSON object")
            self._shards.put(path, shard)
        return shard

    def _pack_info(self, pack: int) -> Tuple[str, int]:
        """A pack's path and declared decompressed size, checked against the limits."""
        info = self._packs[pack]
        where = f"manifest.json: blobs.packs[{pack}]"
        if not isinstance(info, dict):
            raise BundleError(f"{where} is not an object")
        path = check_path(info.get("path"), f"{where}.path")
        raw_size = _int(info.get("raw_size"), f"{where}.raw_size")
        if raw_size > self._limits.pack:
            raise BundleError(f"{path}: manifest.json declares {raw_size} bytes decompressed, over the limit of {self._limits.pack}")
        return path, raw_size

    def _pack(self, pack: int) -> _Pack:
        decoded = self._decoded.get(pack)
        if decoded is None:
            path, raw_size = self._pack_info(pack)
            # The pack is fetched whole (one request over HTTP; packs hold ~1 MiB before
            # compression), then decompressed only as far as the blobs asked for, and never past
            # its declared size.
            stored = read_all(self._source.open(path, self._limits.file))
            decoded = _Pack(open_decoded(_Bytes(path, stored), path, len(stored), raw_size))
            self._decoded.put(pack, decoded)
        return decoded


class _Bytes(ByteSource):
    """One file already in memory, as a source (so a pack is sniffed and decoded like any file)."""

    def __init__(self, path: str, data: bytes) -> None:
        self._path = path
        self._data = data

    def open(self, path: str, limit: int) -> Capped:
        return Capped(io.BytesIO(self._data), limit, path)

    def describe(self) -> str:
        return self._path
