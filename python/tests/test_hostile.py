"""Bundles read back are untrusted: refused versions, and manifests and files made to reach
outside the bundle, to exhaust memory or to crash the reader, each end in a BundleError whose
message says what is wrong (never another exception)."""

from __future__ import annotations

import ctypes
import io
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
import zstandard

import tlparse_bundle
from tlparse_bundle import BundleError, Limits, NotFoundError, UnsupportedBundleError

from helpers import shard_entries


def edit_manifest(root: Path, edit: Callable[[Dict[str, Any]], None]) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    edit(manifest)
    (root / "manifest.json").write_text(json.dumps(manifest))


def zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


TABLE = "tables/log0/compile_directory.json.zst"


def first_blob(root: Path) -> str:
    return next(iter(shard_entries(root)))


# --- versions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [tlparse_bundle.READER_VERSION + 1, 99, "7", None, True])
def test_a_bundle_needing_a_newer_reader_is_refused(simple_copy: Path, version: Any) -> None:
    edit_manifest(simple_copy, lambda m: m.update(min_reader_version=version))
    with pytest.raises(UnsupportedBundleError) as refused:
        tlparse_bundle.open(simple_copy)
    message = str(refused.value)
    assert f"needs a reader of version {version!r}" in message or f"version {version}" in message
    assert f"this reader is version {tlparse_bundle.READER_VERSION}" in message and "update tlparse-bundle" in message


def test_a_newer_minor_with_unknown_fields_is_read(simple_copy: Path) -> None:
    major = tlparse_bundle.READER_VERSION

    def newer_minor(m: Dict[str, Any]) -> None:
        m.update(format_version=f"{major}.7", min_reader_version=major, a_field_of_format_1_7={"x": 1})
        m["streams"][0]["another_new_field"] = [1, 2]

    edit_manifest(simple_copy, newer_minor)
    b = tlparse_bundle.open(simple_copy)  # unknown fields are ignored
    assert b.manifest["format_version"] == f"{major}.7"
    assert b.streams == ["log0"]
    assert [c["compile_id"] for c in b.table("compile_directory", stream="log0").rows] == ["[0/0]"]


def test_another_format_is_refused(simple_copy: Path) -> None:
    edit_manifest(simple_copy, lambda m: m.update(format="something-else"))
    with pytest.raises(UnsupportedBundleError, match="not a tlparse-bundle manifest"):
        tlparse_bundle.open(simple_copy)


# --- paths taken from the manifest ---------------------------------------------------------------


def set_path(field: str, value: str) -> Callable[[Dict[str, Any]], None]:
    def edit(m: Dict[str, Any]) -> None:
        if field == "table":
            m["streams"][0]["tables"]["compile_directory"]["parts"] = [value]
        elif field in ("index", "stacks"):
            m["streams"][0][field] = value
        elif field == "diagnostics":
            m["diagnostics"]["path"] = value
        elif field == "index_path":
            m["blobs"]["index_path"] = value
        elif field == "pack":
            for pack in m["blobs"]["packs"]:
                pack["path"] = value
    return edit


def read(field: str, b: tlparse_bundle.Bundle, blob_id: str) -> object:
    """What reads the file named by `field` (`blob_id` a blob of the bundle, for the blob store)."""
    if field == "table":
        return b.table("compile_directory")
    if field == "index":
        return list(b.index_rows())
    if field == "stacks":
        return b.stacks()
    if field == "diagnostics":
        return list(b.diagnostics())
    return b.blob(blob_id)


FIELDS = ["table", "index", "stacks", "diagnostics", "index_path", "pack"]
BAD_PATHS = {
    "../../../../etc/passwd": "leaves its directory",
    "tables/../../x.json": "leaves its directory",
    "/etc/passwd": "absolute",
    "tables\\..\\..\\x": r"holds \\, : or NUL",
    "C:/Windows/win.ini": r"holds \\, : or NUL",
    "tables//x": "has an empty part",
    "./manifest.json": "leaves its directory",
    "": "empty",
    "a\u0000b": "NUL",
}


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("bad", list(BAD_PATHS))
def test_paths_leaving_the_bundle_are_refused(simple_copy: Path, field: str, bad: str) -> None:
    blob_id = first_blob(simple_copy)
    # index_path is a template: with {prefix} after the bad part (an empty path then has an empty part).
    value = (bad + "{prefix}" if bad else "{prefix}/") if field == "index_path" else bad
    edit_manifest(simple_copy, set_path(field, value))
    b = tlparse_bundle.open(simple_copy)
    with pytest.raises(BundleError, match="not allowed in a bundle") as refused:
        read(field, b, blob_id)
    assert BAD_PATHS[bad].replace("\\\\", "\\") in str(refused.value) or pytest.fail(str(refused.value))


@pytest.mark.parametrize("field", FIELDS)
def test_a_path_that_is_not_a_string_is_refused(simple_copy: Path, field: str) -> None:
    blob_id = first_blob(simple_copy)
    edit_manifest(simple_copy, set_path(field, 7))  # type: ignore[arg-type]
    b = tlparse_bundle.open(simple_copy)
    with pytest.raises(BundleError, match="must be a"):
        read(field, b, blob_id)


def test_symlinks_are_never_followed(simple_copy: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text('{"compiles": [], "unattributed": []}')
    table = simple_copy / TABLE
    table.unlink()
    table.symlink_to(outside / "secret.json")
    b = tlparse_bundle.open(simple_copy)
    with pytest.raises(BundleError, match="symlink"):
        b.table("compile_directory")
    # A directory replaced by a symlink to a copy of it elsewhere.
    stacks = simple_copy / "stacks"
    stacks.rename(outside / "stacks")
    stacks.symlink_to(outside / "stacks")
    with pytest.raises(BundleError, match="symlink"):
        b.stacks()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 (RENAME_EXCHANGE) is Linux's")
def test_a_parent_swapped_for_a_symlink_while_read_gives_nothing_from_outside(tmp_path: Path) -> None:
    # A directory of the bundle and a symlink to a twin outside it trade places over and over
    # (atomically) while a file under it is read: every read that succeeds gives the bundle's
    # own bytes.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ok.json").write_text("outside")
    root = tmp_path / "bundle"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "ok.json").write_text("inside")
    (root / "link").symlink_to(outside)
    libc = ctypes.CDLL(None, use_errno=True)
    rename_exchange = 2
    sub, link = bytes(root / "sub"), bytes(root / "link")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            assert libc.renameat2(-100, sub, -100, link, rename_exchange) == 0  # AT_FDCWD

    swapper = threading.Thread(target=swap)
    swapper.start()
    source = tlparse_bundle.DirSource(root)
    inside = 0
    try:
        for _ in range(5000):
            try:
                data = source.read("sub/ok.json", 100)
            except BundleError:
                continue
            assert data == b"inside"
            inside += 1
    finally:
        stop.set()
        swapper.join()
    assert inside > 0


def test_a_fifo_is_not_read(simple_copy: Path) -> None:
    (simple_copy / TABLE).unlink()
    os.mkfifo(simple_copy / TABLE)  # opening it to read would block forever
    with pytest.raises(BundleError, match="not a regular file"):
        tlparse_bundle.open(simple_copy).table("compile_directory")


# --- sizes ---------------------------------------------------------------------------------------


def test_a_pack_declaring_a_huge_size_is_refused(simple_copy: Path) -> None:
    edit_manifest(simple_copy, lambda m: [p.update(raw_size=10**15) for p in m["blobs"]["packs"]])
    with pytest.raises(BundleError, match="declares 1000000000000000 bytes decompressed, over the limit"):
        tlparse_bundle.open(simple_copy).blob(first_blob(simple_copy))


@pytest.mark.parametrize("entry,message", [
    ({"pack": 0, "offset": 0, "size": 10**12}, "lies outside its pack"),
    ({"pack": 0, "offset": 10**18, "size": 1}, "lies outside its pack"),
    ({"pack": 10**6, "offset": 0, "size": 1}, "pack must be an integer from 0 up to"),
    ({"pack": 0, "offset": -1, "size": 1}, "offset must be an integer"),
    ({"pack": 0, "offset": 0, "size": "1"}, "size must be an integer"),
    ({"pack": True, "offset": 0, "size": 1}, "pack must be an integer"),
    ([1, 2, 3], "is not an object"),
])
def test_a_bad_blob_index_entry_is_refused(simple_copy: Path, entry: Any, message: str) -> None:
    blob_id = first_blob(simple_copy)
    shard = simple_copy / "blobs/index/all.json.zst"
    shard.write_bytes(zstd(json.dumps({blob_id: entry}).encode()))
    with pytest.raises(BundleError, match=message):
        tlparse_bundle.open(simple_copy).blob(blob_id)


def test_a_decompression_bomb_is_cut_at_the_limit(simple_copy: Path) -> None:
    (simple_copy / TABLE).write_bytes(zstd(b" " * (8 << 20)))  # 8 MiB of spaces in a few hundred bytes
    b = tlparse_bundle.open(simple_copy, limits=Limits(document=1 << 20))
    with pytest.raises(BundleError, match=f"{TABLE}: decompresses to more than 1048576 bytes; refused"):
        b.table("compile_directory")


def test_a_zstd_window_over_16_mib_is_refused(simple_copy: Path) -> None:
    # A frame may ask for a 32 MiB window whatever its content: the decoder would allocate it.
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=25)
    out = io.BytesIO()
    with zstandard.ZstdCompressor(compression_params=params).stream_writer(out, closefd=False) as w:
        w.write(b'{"compiles": [], "unattributed": []}')
    assert zstandard.get_frame_parameters(out.getvalue()).window_size == 32 << 20
    (simple_copy / TABLE).write_bytes(out.getvalue())
    with pytest.raises(BundleError, match=f"{TABLE}: cannot be read: .*too much memory"):
        tlparse_bundle.open(simple_copy).table("compile_directory")


def test_a_pack_shorter_than_its_blobs_is_refused(simple_copy: Path) -> None:
    blob_id = first_blob(simple_copy)
    entry = shard_entries(simple_copy)[blob_id]
    pack = simple_copy / json.loads((simple_copy / "manifest.json").read_text())["blobs"]["packs"][entry["pack"]]["path"]
    pack.write_bytes(zstd(b"x" * entry["offset"]))  # ends where the blob would start
    with pytest.raises(BundleError, match="decompresses to fewer bytes than blob"):
        tlparse_bundle.open(simple_copy).blob(blob_id)


def test_files_over_the_limits_are_refused(simple_copy: Path) -> None:
    with pytest.raises(BundleError, match="manifest.json: larger than 100 bytes; refused"):
        tlparse_bundle.open(simple_copy, limits=Limits(manifest=100))
    b = tlparse_bundle.open(simple_copy, limits=Limits(line=100))
    with pytest.raises(BundleError, match=r"index/log0.jsonl.zst:1: line longer than 100 bytes"):
        list(b.index_rows())
    b = tlparse_bundle.open(simple_copy, limits=Limits(file=100))
    with pytest.raises(BundleError, match=r"larger than 100 bytes; refused"):
        b.table("compile_directory")


# --- malformed content ---------------------------------------------------------------------------


@pytest.mark.parametrize("text,message", [
    (b"not json", "manifest.json: not valid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"format": "tlparse-bundle", "min_reader_version": 2, "streams": 3}', "streams is not a list"),
    (b'{"format": "tlparse-bundle", "min_reader_version": 2, "streams": [{"id": 1}]}', "string id"),
    (b'{"format": "tlparse-bundle", "min_reader_version": 2, "streams": [{"id": "a"}, {"id": "a"}]}', "listed twice"),
    (b"\xff\xfe\x00", "not valid JSON"),
    (b'{"a": NaN}', "not valid JSON"),
    (b"[" * 100000, "nested too deep"),
])
def test_a_malformed_manifest_is_refused(simple_copy: Path, text: bytes, message: str) -> None:
    (simple_copy / "manifest.json").write_bytes(text)
    with pytest.raises(BundleError, match=message):
        tlparse_bundle.open(simple_copy)


@pytest.mark.parametrize("stored,message", [
    (zstd(b"[" * 100000), "nested too deep"),
    (zstd(b"[1, 2, 3]"), "a table is a JSON object"),
    (zstd(b'{"compiles": 3}'), "'compiles' is not a list"),
    (b"\x28\xb5\x2f\xfd" + b"\x00" * 64, "zstd frame is cut short"),  # empty blocks, never a last one
    (zstd(b'{"compiles": []}')[:-4], "zstd frame is cut short"),
    (zstd(b'{"compiles": []}') + b"junk", "bytes after the end of its zstd frame"),
    (b"\x28\xb5\x2f\xfd\xff" + b"\xff" * 64, "cannot be read"),  # zstd magic, then a bad header
])
def test_a_malformed_table_is_refused(simple_copy: Path, stored: bytes, message: str) -> None:
    (simple_copy / TABLE).write_bytes(stored)
    with pytest.raises(BundleError, match=message):
        tlparse_bundle.open(simple_copy).table("compile_directory").rows


def row(first: Any = 0, count: Any = 1) -> Dict[str, Any]:
    return {"compile_id": "[0/0]", "first_artifact": first, "artifact_count": count}


@pytest.mark.parametrize("compiles,artifacts,message", [
    ([row()], 5, "its artifacts are not a list"),
    ([row(count=2)], [{"name": "x"}], r"\[0/0\] names artifacts 0\+2 of 1"),
    ([row(first=-1)], [{"name": "x"}], r"names artifacts -1\+1 of 1"),
    ([row(count=True)], [{"name": "x"}], r"names artifacts 0\+True of 1"),
    ([row()], [{"name": "x", "blob": "../../etc/passwd"}], "not a blob id"),
    ([7, row(first=1)], ["x", {"name": "x", "blob": None}], "logged without a payload"),
])
def test_a_malformed_compile_directory_fails_artifact_clearly(
    simple_copy: Path, compiles: Any, artifacts: Any, message: str
) -> None:
    table = {"compiles": compiles, "artifacts": artifacts, "unattributed": []}
    (simple_copy / TABLE).write_bytes(zstd(json.dumps(table).encode()))
    with pytest.raises(BundleError, match=message):
        tlparse_bundle.open(simple_copy).artifact(None, "0/0", "x")


def test_a_table_already_decompressed_by_a_host_is_read(simple_copy: Path, bundles: Dict[str, Path]) -> None:
    # Some hosts serve `.zst` decoded: the bytes, not the name, say whether it is zstd.
    plain = zstandard.ZstdDecompressor().stream_reader((simple_copy / TABLE).read_bytes()).read()
    (simple_copy / TABLE).write_bytes(plain)
    expected = tlparse_bundle.open(bundles["simple"]).table("compile_directory")
    assert dict(tlparse_bundle.open(simple_copy).table("compile_directory")) == dict(expected)


def test_missing_files_are_named(simple_copy: Path, tmp_path: Path) -> None:
    (simple_copy / TABLE).unlink()
    with pytest.raises(NotFoundError, match=f"{TABLE}: missing in"):
        tlparse_bundle.open(simple_copy).table("compile_directory")
    (simple_copy / "blobs/index/all.json.zst").unlink()
    with pytest.raises(NotFoundError, match="blobs/index/all.json.zst: missing"):
        tlparse_bundle.open(simple_copy).blob(first_blob(simple_copy) if False else "0" * 32)
    with pytest.raises(NotFoundError, match="not a bundle"):
        tlparse_bundle.open(tmp_path / "empty-dir-that-does-not-exist")


def test_a_bad_index_line_names_its_line(simple_copy: Path) -> None:
    rows = (simple_copy / "index/log0.jsonl.zst").read_bytes()
    lines = zstandard.ZstdDecompressor().stream_reader(rows).read().split(b"\n")
    lines[2] = b"{not json"
    (simple_copy / "index/log0.jsonl.zst").write_bytes(zstd(b"\n".join(lines)))
    rows_read = tlparse_bundle.open(simple_copy).index_rows()
    assert next(rows_read)["seq"] == 0 and next(rows_read)["seq"] == 1
    with pytest.raises(BundleError, match=r"index/log0.jsonl.zst:3: not valid JSON"):
        next(rows_read)


def test_an_index_or_diagnostics_longer_than_the_manifest_declares_is_refused_there(simple_copy: Path) -> None:
    # A file that inflates far past what the manifest declares is not read on (a bomb of rows).
    manifest = json.loads((simple_copy / "manifest.json").read_text())
    declared = manifest["streams"][0]["entries"]
    rows = zstandard.ZstdDecompressor().stream_reader((simple_copy / "index/log0.jsonl.zst").read_bytes()).read()
    (simple_copy / "index/log0.jsonl.zst").write_bytes(zstd(rows * 1000))
    read = tlparse_bundle.open(simple_copy).index_rows()
    assert len([next(read) for _ in range(declared)]) == declared
    with pytest.raises(BundleError, match=f"index/log0.jsonl.zst: more rows than the {declared} entries manifest.json declares"):
        next(read)
    diagnostics = manifest["diagnostics"]
    one = b'{"kind": "bad_prefix", "file": "x", "line": 1, "message": "m", "raw": "r"}\n'
    (simple_copy / diagnostics["path"]).write_bytes(zstd(one * (diagnostics["total"] + 5)))
    with pytest.raises(BundleError, match=f"more rows than the {diagnostics['total']} diagnostics"):
        list(tlparse_bundle.open(simple_copy).diagnostics())


def test_bad_stack_ids_are_refused(simple_copy: Path) -> None:
    (simple_copy / "stacks/log0.json").write_text('{"frames": [], "stacks": [[5]]}')
    stacks = tlparse_bundle.open(simple_copy).stacks()
    with pytest.raises(BundleError, match="names frame 5, which does not exist"):
        stacks.stack(0)
    with pytest.raises(NotFoundError, match="no stack 1"):
        stacks.stack(1)


# --- any odd value anywhere the reader looks -------------------------------------------------------

FIELDS_READ = [
    ("streams",), ("streams", 0), ("streams", 0, "id"), ("streams", 0, "index"), ("streams", 0, "stacks"),
    ("streams", 0, "tables"), ("streams", 0, "tables", "compile_directory"),
    ("streams", 0, "tables", "compile_directory", "parts"), ("streams", 0, "tables", "compile_directory", "parts", 0),
    ("cross_rank",), ("diagnostics",),
    ("diagnostics", "path"), ("blobs",), ("blobs", "index_prefix_len"), ("blobs", "index_path"),
    ("blobs", "packs"), ("blobs", "packs", 0), ("blobs", "packs", 0, "path"), ("blobs", "packs", 0, "raw_size"),
]
ODD_VALUES = [None, -1, 10**30, 1.5, True, "x", "", [], {}, [1], {"a": 1}]


def replace_at(path: tuple, value: Any) -> Callable[[Dict[str, Any]], None]:
    def edit(m: Dict[str, Any]) -> None:
        target: Any = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def read_everything(b: tlparse_bundle.Bundle, blob_ids: Any) -> None:
    b.table("compile_directory")
    b.table("compile_alignment")
    list(b.index_rows())
    list(b.diagnostics())
    b.stacks()
    for blob_id in blob_ids:
        b.blob(blob_id)
    b.artifact(None, "0/0", "inductor_output_code")


@pytest.mark.parametrize("field", FIELDS_READ, ids=lambda f: "/".join(map(str, f)))
def test_odd_values_in_the_manifest_raise_bundle_errors_only(simple_copy: Path, field: tuple) -> None:
    # Blobs of every pack, so that pack 0's entry is used whatever the shard order.
    blob_ids = list({loc["pack"]: blob_id for blob_id, loc in shard_entries(simple_copy).items()}.values())
    pristine = (simple_copy / "manifest.json").read_text()
    for value in ODD_VALUES:
        (simple_copy / "manifest.json").write_text(pristine)
        edit_manifest(simple_copy, replace_at(field, value))
        try:
            read_everything(tlparse_bundle.open(simple_copy), blob_ids)
        except BundleError:
            pass  # refused with a message: what is wanted; any other exception fails the test
