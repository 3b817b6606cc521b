"""The errors of the reader: every problem with a bundle is a `BundleError` whose message names
the bundle file at fault, so a malformed or hostile bundle never ends in a bare traceback."""

from __future__ import annotations

from typing import Iterable

# Values quoted in messages come from the bundle, which a hostile one makes as long as it likes.
MAX_QUOTED = 200


class BundleError(Exception):
    """A bundle, or a part of it, that cannot be read: missing, refused, or malformed."""


class UnsupportedBundleError(BundleError):
    """A manifest this reader refuses: not a tlparse bundle, or it needs a newer reader."""


class NotFoundError(BundleError, KeyError):
    """A stream, table, compile id, artifact, blob or file that the bundle does not have. Also a
    `KeyError`, so `except KeyError` catches it too."""

    def __str__(self) -> str:
        # KeyError's own __str__ shows the repr of its argument, quotes and all.
        return str(self.args[0]) if self.args else ""


def clip(value: object, limit: int = MAX_QUOTED) -> str:
    """`value` as text for a message, cut after `limit` characters."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def suggest(wanted: str, known: Iterable[object], limit: int = 20) -> str:
    """A hint for a message: the known names close to `wanted`, else the first known names."""
    import difflib

    names = [n for n in known if isinstance(n, str)]
    close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
    if close:
        return "did you mean " + ", ".join(close) + "?"
    if not names:
        return "there are none"
    shown = ", ".join(clip(n, 80) for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"known: {shown}{more}"
