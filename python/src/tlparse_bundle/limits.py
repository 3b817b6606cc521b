"""The reader's version and the most it takes from a bundle, whatever the bundle's manifest says."""

from __future__ import annotations

from dataclasses import dataclass

# The reader version this is: the major of the format it is written against (docs/format.md,
# Versioning). A bundle whose manifest asks for a newer reader (`min_reader_version` above this)
# is refused; any 2.x bundle is read, its fields this reader does not know ignored.
READER_VERSION = 2

# The manifest's `format`.
FORMAT_NAME = "tlparse-bundle"

MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Sizes past which a file or what it decompresses to is refused (a `BundleError`), never
    read further. The defaults are those of the Rust reader (`tlparse_bundle::reader::Limits`).
    Parsed JSON takes several times its size in Python objects: memory is bounded by these
    sizes, not equal to them."""

    # manifest.json as stored.
    manifest: int = 32 * MiB
    # Any other file as stored (a pack, an index, a table before decompression).
    file: int = 256 * MiB
    # A JSON document held whole once decompressed: a table, a blob-index shard, a stack table.
    document: int = 64 * MiB
    # One line of an event index or of the diagnostics.
    line: int = 16 * MiB
    # Everything decompressed from a file read line by line (an index): bounds time, not memory.
    stream: int = 4 << 30
    # A decompressed pack, of which a few are cached.
    pack: int = 512 * MiB
