"""Paths inside a bundle: every path taken from a bundle (its manifest, a table) is checked here
before any source opens it, so nothing outside the bundle is ever read. The rules are the Rust
reader's (`tlparse_bundle::source::BundlePath`)."""

from __future__ import annotations

from typing import Optional

from .errors import BundleError, clip

# The longest path, in UTF-8 bytes.
MAX_PATH_BYTES = 1024


def why_bad(path: str) -> Optional[str]:
    """Why `path` may not name a bundle file, or None when it may: relative, `/`-separated,
    made of plain names (no empty part, no `.` or `..`, no backslash, colon or NUL)."""
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate, which JSON can spell as \ud800
        return "not valid Unicode"
    if size == 0 or size > MAX_PATH_BYTES:
        return f"empty or longer than {MAX_PATH_BYTES} bytes"
    if path.startswith("/"):
        return "absolute"
    if any(c in path for c in "\\:\0"):
        # A backslash is a separator on Windows, and a colon names a drive (C:) or a URL scheme.
        return "holds \\, : or NUL"
    for part in path.split("/"):
        if part == "":
            return "has an empty part"
        if part in (".", ".."):
            return "leaves its directory (. or ..)"
    return None


def check_path(path: object, where: str = "manifest.json") -> str:
    """`path` if it may name a bundle file; else a `BundleError` naming `where` it came from."""
    if not isinstance(path, str):
        raise BundleError(f"{where}: a path must be a string, not {clip(path, 80)}")
    why = why_bad(path)
    if why is not None:
        raise BundleError(
            f"{where}: path {clip(path)!r} is not allowed in a bundle ({why}); refused, nothing was read"
        )
    return path
