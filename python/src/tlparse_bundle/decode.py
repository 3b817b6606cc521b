"""Bundle files as data: zstd sniffed from the bytes (never from a file name or an HTTP header)
and decompressed as a stream with a cap, JSON documents and JSON lines parsed with limits."""

from __future__ import annotations

import json
from typing import Any, Iterator

import zstandard

from .errors import BundleError, clip
from .limits import Limits
from .source import Capped, ByteSource, read_all

# Every zstd frame starts with these bytes. A host may have decoded a `.zst` file already (and a
# file of another name may be zstd): what the bytes are decides, as in the JavaScript loader.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

# The largest zstd window accepted (16 MiB, as the Rust reader): tlparse-build uses 4 MiB at
# most, and a frame asking for more would make the decoder allocate it.
MAX_ZSTD_WINDOW = 1 << 24

# How much of a JSONL stream is read at a time.
LINES_CHUNK = 1 << 16


class _Prefixed:
    """`head` (bytes already read from `inner` to sniff it), then the rest of `inner`."""

    def __init__(self, head: bytes, inner: Capped) -> None:
        self._head = head
        self._inner = inner

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size is None or size < 0 or size >= len(self._head):
                head, self._head = self._head, b""
                rest = size - len(head) if size is not None and size >= 0 else -1
                return head + (self._inner.read(rest) if rest != 0 else b"")
            head, self._head = self._head[:size], self._head[size:]
            return head
        return self._inner.read(size)

    def close(self) -> None:
        self._inner.close()


def _sniff(raw: Capped) -> "tuple[bytes, _Prefixed]":
    """The first bytes of a stream (as many as the zstd magic has, or the file has), and the
    stream, whole again."""
    head = b""
    while len(head) < len(ZSTD_MAGIC):
        more = raw.read(len(ZSTD_MAGIC) - len(head))
        if not more:
            break
        head += more
    return head, _Prefixed(head, raw)


# Compressed bytes given to the decoder at a time. zstd expands at most ~32,000 times (a 4-byte
# RLE block gives 128 KiB), so one call never outputs more than ~32 MiB, whatever the limit.
ZSTD_INPUT_PIECE = 1 << 10


class _Zstd:
    """zstd frames decoded as a stream, with a frame cut short or bytes after the last frame
    refused (python-zstandard's own stream_reader ends quietly on a cut frame)."""

    def __init__(self, raw: _Prefixed, path: str) -> None:
        self._raw = raw
        self._path = path
        self._decoder = self._new_decoder()
        self._started = False  # the current frame has had input
        self._input = b""  # input read but not yet given to the decoder
        self._output = bytearray()
        self._ended = False

    @staticmethod
    def _new_decoder() -> Any:
        return zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW).decompressobj()

    def read(self, size: int = -1) -> bytes:
        while not self._ended and (size is None or size < 0 or len(self._output) < size):
            self._step()
        if size is None or size < 0:
            size = len(self._output)
        out = bytes(self._output[:size])
        del self._output[:size]
        return out

    def _step(self) -> None:
        """Gives the decoder one more piece of input; at the end of the input, checks the frame ended."""
        if not self._input:
            self._input = self._raw.read(ZSTD_INPUT_PIECE)
            if not self._input:
                if self._started:
                    raise BundleError(f"{self._path}: its zstd frame is cut short")
                self._ended = True
                return
        piece, self._input = self._input[:ZSTD_INPUT_PIECE], self._input[ZSTD_INPUT_PIECE:]
        self._started = True
        self._output += self._decoder.decompress(piece)
        if self._decoder.eof:
            # Whatever follows a frame must be another frame (zstd files may be concatenated).
            rest = self._decoder.unused_data + self._input
            if rest and not rest.startswith(ZSTD_MAGIC[: len(rest)]):
                raise BundleError(f"{self._path}: bytes after the end of its zstd frame")
            self._input, self._decoder, self._started = rest, self._new_decoder(), False

    def close(self) -> None:
        self._raw.close()


def open_decoded(source: ByteSource, path: str, stored_limit: int, limit: int) -> Capped:
    """A bundle file as a stream of its decoded bytes: zstd-decompressed when it is zstd. The
    file may take `stored_limit` bytes as stored, and give `limit` bytes decoded."""
    head, stream = _sniff(source.open(path, stored_limit))
    if head != ZSTD_MAGIC:
        return Capped(stream, limit, path)
    return Capped(_Zstd(stream, path), limit, path, "decompresses to more than")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes, where: str) -> Any:
    """`data` parsed as JSON (strict: no NaN or Infinity); a `BundleError` naming `where` else."""
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except RecursionError as e:
        raise BundleError(f"{where}: JSON nested too deep to parse; refused") from e
    except ValueError as e:  # JSONDecodeError, bad UTF-8, an integer of too many digits
        raise BundleError(f"{where}: not valid JSON: {clip(str(e))}") from e


def read_json(source: ByteSource, path: str, limits: Limits) -> Any:
    """A JSON file of the bundle, plain or zstd, held whole (at most `limits.document` decoded)."""
    return parse_json(read_all(open_decoded(source, path, limits.file, limits.document)), path)


def iter_json_lines(source: ByteSource, path: str, limits: Limits) -> Iterator[Any]:
    """Each line of a JSONL file of the bundle, plain or zstd, parsed, one at a time: an index
    decompresses to more than is worth holding. The file is opened at once (so a missing file
    fails here), and closed when the iteration ends or is dropped."""
    stream = open_decoded(source, path, limits.file, limits.stream)
    return _lines(stream, path, limits.line)


def _lines(stream: Capped, path: str, max_line: int) -> Iterator[Any]:
    number = 0
    pending = bytearray()
    with stream:
        while True:
            chunk = stream.read(LINES_CHUNK)
            if not chunk:
                break
            pending += chunk
            # Split only when this chunk ended a line: a long line is not rescanned per chunk.
            if b"\n" in chunk:
                *lines, rest = pending.split(b"\n")
                pending = bytearray(rest)
                for line in lines:
                    number += 1
                    yield _line(line, f"{path}:{number}", max_line)
            if len(pending) > max_line:
                raise BundleError(f"{path}:{number + 1}: line longer than {max_line} bytes; refused")
        if pending:
            yield _line(pending, f"{path}:{number + 1}", max_line)


def _line(line: bytearray, where: str, max_line: int) -> Any:
    if len(line) > max_line:
        raise BundleError(f"{where}: line longer than {max_line} bytes; refused")
    return parse_json(bytes(line), where)
