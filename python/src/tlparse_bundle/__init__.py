"""Reads tlparse bundles, the directories `tlparse-build` compiles PyTorch TORCH_TRACE logs into,
from a local directory or an http(s) URL:

    import tlparse_bundle
    b = tlparse_bundle.open("bundle/")
    b.table("compile_directory", stream="rank0").rows
    b.artifact("rank0", "[0/0]", "inductor_output_code")

The format is docs/format.md of the tlparse-build repository (version 2.x: reader version 2)."""

from .bundle import Bundle, RowNumbering, normalize_compile_id, open, source_for
from .errors import BundleError, NotFoundError, UnsupportedBundleError
from .limits import FORMAT_NAME, READER_VERSION, Limits
from .source import ByteSource, Capped, DirSource, HttpSource
from .stacks import Stacks
from .tables import CROSS_RANK_TABLES, ROWS_COUNTED_OTHERWISE, STREAM_TABLES, Table

__version__ = "0.1.0"

__all__ = [
    "Bundle",
    "BundleError",
    "ByteSource",
    "CROSS_RANK_TABLES",
    "Capped",
    "DirSource",
    "FORMAT_NAME",
    "HttpSource",
    "Limits",
    "NotFoundError",
    "READER_VERSION",
    "ROWS_COUNTED_OTHERWISE",
    "RowNumbering",
    "STREAM_TABLES",
    "Stacks",
    "Table",
    "UnsupportedBundleError",
    "normalize_compile_id",
    "open",
    "source_for",
]
