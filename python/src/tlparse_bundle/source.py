"""Where a bundle's bytes come from. A `ByteSource` opens bundle files by path, checked to stay
inside the bundle; `DirSource` reads a local directory, `HttpSource` a bundle served over HTTP(S).
Another source (object storage, a zip file) is a subclass with `open` and `describe`. Every
stream a source gives is `Capped`: it fails rather than give more bytes than asked for."""

from __future__ import annotations

import gzip
import http.client
import os
import stat
import zlib
from abc import ABC, abstractmethod
from typing import Callable, Optional, Protocol
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlsplit, urlunsplit
from urllib.request import (
    HTTPDefaultErrorHandler,
    HTTPErrorProcessor,
    HTTPHandler,
    HTTPRedirectHandler,
    HTTPSHandler,
    OpenerDirector,
    ProxyHandler,
    Request,
)

import zstandard

from .errors import BundleError, NotFoundError, clip
from .paths import check_path

# How much is read at a time when a whole file is wanted.
CHUNK = 1 << 20

# What a read of a file, a connection or a decompressor raises when its bytes are bad or cut.
READ_ERRORS = (OSError, EOFError, ValueError, zlib.error, zstandard.ZstdError, http.client.HTTPException)


class Readable(Protocol):
    """What a byte stream needs to be read: a file, an HTTP response, a decoder."""

    def read(self, size: int = ...) -> bytes: ...


class Capped:
    """A binary stream that gives at most `limit` bytes of `inner` and raises a `BundleError`
    if `inner` has more, so a cut is never mistaken for the end. Read errors of `inner` (a
    dropped connection, corrupt gzip or zstd) become `BundleError`s naming `what`."""

    def __init__(self, inner: Readable, limit: int, what: str, too_large: str = "larger than") -> None:
        self._inner = inner
        self._left = limit
        self._limit = limit
        self._what = what
        self._too_large = too_large

    def read(self, size: Optional[int] = -1) -> bytes:
        # Asking for one byte past the limit is how a stream that goes on is told from one that ends.
        if size is None or size < 0 or size > self._left + 1:
            size = self._left + 1
        try:
            data = self._inner.read(size)
        except BundleError:
            raise
        except READ_ERRORS as e:
            raise BundleError(f"{self._what}: cannot be read: {clip(str(e))}") from e
        if len(data) > self._left:
            raise BundleError(f"{self._what}: {self._too_large} {self._limit} bytes; refused")
        self._left -= len(data)
        return data

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> "Capped":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_all(stream: Capped) -> bytes:
    """Every byte of a capped stream, grown as it arrives (never preallocating a declared size)."""
    out = bytearray()
    with stream:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                return bytes(out)
            out += chunk


class ByteSource(ABC):
    """Where a bundle's files come from."""

    @abstractmethod
    def open(self, path: str, limit: int) -> Capped:
        """The file at `path` (checked by `check_path`) as stored, as a stream that fails past
        `limit` bytes. Raises `NotFoundError` when the file is missing, `BundleError` when it is
        refused."""

    @abstractmethod
    def describe(self) -> str:
        """What to call the bundle in messages."""

    def read(self, path: str, limit: int) -> bytes:
        """The whole file at `path`, refused past `limit` bytes."""
        return read_all(self.open(path, limit))


class DirSource(ByteSource):
    """A bundle in a local directory. No part of a path below the root may be a symlink (a
    bundle never holds one), and only regular files are read: a hostile bundle cannot point the
    reader at a file outside it, nor block it on a FIFO."""

    def __init__(self, root: "os.PathLike[str] | str") -> None:
        self.root = os.fspath(root)

    def describe(self) -> str:
        return self.root

    def open(self, path: str, limit: int) -> Capped:
        path = check_path(path)
        if not _OPENAT:
            return self._open_by_path(path, limit)
        # Each part is looked at and opened relative to the directory opened before it
        # (dir_fd), never through a path resolved again: a parent swapped for a symlink between
        # the check and the open leads nowhere. O_NONBLOCK: a FIFO swapped in is not waited on.
        nofollow = os.O_NOFOLLOW
        try:
            dir_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError as e:
            raise NotFoundError(f"{path}: missing in {self.root}") from e
        except OSError as e:
            raise BundleError(f"{path}: cannot be read: {e.strerror}") from e
        try:
            parts = path.split("/")
            for i, part in enumerate(parts):
                checked = self._lstat(path, part, dir_fd, last=i + 1 == len(parts))
                flags = os.O_RDONLY | nofollow | (os.O_NONBLOCK if i + 1 == len(parts) else os.O_DIRECTORY)
                try:
                    fd = os.open(part, flags, dir_fd=dir_fd)
                except OSError as e:
                    raise BundleError(f"{path}: changed while being opened; refused, nothing was read") from e
                os.close(dir_fd)
                dir_fd = fd
            opened = os.fstat(dir_fd)
            if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
                raise BundleError(f"{path}: changed while being opened; refused, nothing was read")
            if checked.st_size > limit:
                raise BundleError(f"{path}: larger than {limit} bytes; refused")
            fd, dir_fd = dir_fd, -1
            return Capped(os.fdopen(fd, "rb"), limit, path)
        finally:
            if dir_fd >= 0:
                os.close(dir_fd)

    def _lstat(self, path: str, part: str, dir_fd: int, last: bool) -> os.stat_result:
        """What `part` (of `path`) is in the directory `dir_fd`, checked by `_checked`."""
        return self._checked(path, last, lambda: os.stat(part, dir_fd=dir_fd, follow_symlinks=False))

    def _checked(self, path: str, last: bool, lstat: "Callable[[], os.stat_result]") -> os.stat_result:
        """`lstat()` of a part of `path`, refused unless a directory or, `last`, a regular file."""
        try:
            st = lstat()
        except FileNotFoundError as e:
            raise NotFoundError(f"{path}: missing in {self.root}") from e
        except OSError as e:
            raise BundleError(f"{path}: cannot be read: {e.strerror}") from e
        if stat.S_ISLNK(st.st_mode):
            raise BundleError(f"{path}: is or lies under a symlink, which a bundle never holds; refused, nothing was read")
        if not last and not stat.S_ISDIR(st.st_mode):
            raise NotFoundError(f"{path}: missing in {self.root}")
        if last and not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{path}: is not a regular file; refused, nothing was read")
        return st

    def _open_by_path(self, path: str, limit: int) -> Capped:
        """`open` where the platform has no `dir_fd` (Windows): each part checked by path."""
        local, checked = self._check(path)
        if checked.st_size > limit:
            raise BundleError(f"{path}: larger than {limit} bytes; refused")
        flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(local, flags)
        except OSError as e:
            raise BundleError(f"{path}: cannot be opened: {e.strerror}") from e
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
            os.close(fd)
            raise BundleError(f"{path}: changed while being opened; refused, nothing was read")
        return Capped(os.fdopen(fd, "rb"), limit, path)

    def _check(self, path: str) -> "tuple[str, os.stat_result]":
        """The file's local path and lstat, after checking each part below the root."""
        at = self.root
        parts = path.split("/")
        for i, part in enumerate(parts):
            at = os.path.join(at, part)
            st = self._checked(path, i + 1 == len(parts), lambda: os.lstat(at))
        return at, st


# Whether `os.open` and `os.stat` take `dir_fd` here (POSIX), and O_NOFOLLOW exists.
_OPENAT = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")


class _HttpRedirects(HTTPRedirectHandler):
    """Follows redirects to http(s) URLs only (urllib's own also takes ftp)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise HTTPError(newurl, code, "redirect to a URL that is not http(s); refused", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener() -> OpenerDirector:
    """urllib's opener without its file: and ftp: handlers: a bundle URL only ever fetches HTTP."""
    opener = OpenerDirector()
    for handler in (ProxyHandler(), HTTPHandler(), HTTPSHandler(), _HttpRedirects(),
                    HTTPDefaultErrorHandler(), HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


class _Gunzipped:
    """A gzip response body, decoded as it is read; closing it closes the connection too
    (GzipFile leaves the file it reads open)."""

    def __init__(self, response: http.client.HTTPResponse) -> None:
        self._response = response
        self._gzip = gzip.GzipFile(fileobj=response, mode="rb")

    def read(self, size: int = -1) -> bytes:
        return self._gzip.read(size)

    def close(self) -> None:
        self._gzip.close()
        self._response.close()


class HttpSource(ByteSource):
    """A bundle served over http(s) as static files, from the URL of its directory. Hosts may
    compress responses on the fly (GitHub Pages gzips `.json` and `.zst`); urllib does not undo
    that, so `Content-Encoding: gzip` is decoded here. What the body holds is sniffed by the
    reader afterwards, never taken from headers."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {clip(url)}")
        if parts.query:
            raise ValueError(f"a bundle URL has no query string (files are found under it by path): {clip(url)}")
        # The bundle's files are under its directory: one trailing slash, whatever was given.
        self.base = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/", "", ""))
        self.timeout = timeout
        self._opener = _opener()

    def describe(self) -> str:
        return self.base

    def url(self, path: str) -> str:
        """The URL of a bundle file. Quoting `%`, `?` and `#` keeps the checked path the path fetched."""
        return self.base + quote(check_path(path), safe="/")

    def open(self, path: str, limit: int) -> Capped:
        url = self.url(path)
        request = Request(url, headers={"Accept-Encoding": "gzip", "User-Agent": "tlparse-bundle (Python)"})
        try:
            response = self._opener.open(request, timeout=self.timeout)
        except HTTPError as e:
            e.close()
            if e.code in (404, 410):
                raise NotFoundError(f"{path}: missing ({url} answered HTTP {e.code})") from e
            raise BundleError(f"{path}: {url} answered HTTP {e.code} {clip(str(e.reason), 80)}") from e
        except (URLError, OSError, http.client.HTTPException, ValueError) as e:
            raise BundleError(f"{path}: cannot fetch {url}: {clip(str(e))}") from e
        return Capped(self._decoded(response, path), limit, path)

    def _decoded(self, response: http.client.HTTPResponse, path: str) -> Readable:
        """The response body, gunzipped when the server compressed it on the fly."""
        encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding in ("identity", ""):
            return response
        if encoding in ("gzip", "x-gzip"):
            return _Gunzipped(response)
        response.close()
        raise BundleError(f"{path}: served with Content-Encoding {clip(encoding, 40)!r}, which this reader does not decode")
