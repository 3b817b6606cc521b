"""Tables stored in parts (format 2): bundles built with `--table-part-bytes 2000` read as their
one-part builds; tables split into three parts by hand, read whole (merged) and part by part,
checked against the documents written; and parts that are hostile or do not agree, each refused
with a message naming the part."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

import tlparse_bundle
from tlparse_bundle import BundleError, Limits, NotFoundError

from conftest import PARTED
from helpers import manifest, split_table, table_refs, unzstd_json, zstd_json


@pytest.fixture
def ranks_copy(bundles: Dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the four-rank bundle (no viewer), its tables to split."""
    copy = tmp_path / "bundle"
    shutil.copytree(bundles["ranks_shifted"], copy, ignore=shutil.ignore_patterns("viewer", "index.html"))
    return copy


def ref_of(root: Path, stream: Optional[str], name: str) -> Dict[str, Any]:
    """A table's reference in the manifest."""
    return next(r for s, t, r in table_refs(manifest(root)) if (s, t) == (stream, name))


def table_file(root: Path, stream: Optional[str], name: str) -> Any:
    """A one-part table read without the reader."""
    (path,) = ref_of(root, stream, name)["parts"]
    return unzstd_json(root / path)


def test_tables_split_by_hand_read_whole_and_part_by_part(ranks_copy: Path) -> None:
    refs = list(table_refs(manifest(ranks_copy)))
    wholes = {(stream, name): table_file(ranks_copy, stream, name) for stream, name, _ in refs}
    written = {(stream, name): split_table(ranks_copy, stream, name) for stream, name, _ in refs}
    b = tlparse_bundle.open(ranks_copy)
    for stream, name, ref in refs:
        assert len(ref_of(ranks_copy, stream, name)["parts"]) == 3
        table = b.table(name, stream)
        assert table is not None and table.part is None
        assert dict(table) == wholes[stream, name], (stream, name)
        assert table.manifest_rows == ref["rows"]
        parts = list(b.table_parts(name, stream))
        assert [p.part for p in parts] == [0, 1, 2]
        assert [dict(p) for p in parts] == written[stream, name], (stream, name)
        assert all((p.name, p.stream, p.manifest_rows) == (name, stream, ref["rows"]) for p in parts)
    # Cross-rank tables are split too, and read without stream= as ever.
    assert sum(1 for stream, _, _ in refs if stream is None) == 6
    alignment = [dict(p) for p in b.table_parts("compile_alignment")]
    assert [len(p["compiles"]) for p in alignment] == [2, 2, 2]  # its 6 compiles, cut in three
    assert [c for p in alignment for c in p["compiles"]] == b.table("compile_alignment").rows


# --- hostile and disagreeing parts ---------------------------------------------------------------

CD = "tables/log0/compile_directory"


def edit_ref(root: Path, name: str, edit: Any) -> None:
    m = manifest(root)
    edit(m["streams"][0]["tables"][name])
    (root / "manifest.json").write_text(json.dumps(m))


def refused(b: tlparse_bundle.Bundle, name: str, message: str) -> None:
    """Both ways of reading table `name` refuse it with `message`: whole, and walking its parts."""
    with pytest.raises(BundleError, match=message):
        b.table(name)
    with pytest.raises(BundleError, match=message):
        list(b.table_parts(name))


def test_a_part_path_leaving_the_bundle_is_refused_before_any_part_is_read(simple_copy: Path) -> None:
    split_table(simple_copy, "log0", "compile_directory")
    edit_ref(simple_copy, "compile_directory", lambda ref: ref["parts"].__setitem__(2, "../../../etc/passwd"))
    (simple_copy / f"{CD}.0.json.zst").unlink()  # were part 0 read first, it would be found missing
    b = tlparse_bundle.open(simple_copy)
    message = r"compile_directory.parts\[2\]: path '../../../etc/passwd' is not allowed in a bundle"
    with pytest.raises(BundleError, match=message):
        b.table("compile_directory")
    with pytest.raises(BundleError, match=message):
        b.table_parts("compile_directory")  # at the call, before iterating


@pytest.mark.parametrize("edit,message", [
    (lambda ref: ref.pop("parts"), r"compile_directory.parts: a table lists its parts, at least one path, not None$"),
    (lambda ref: ref.update(parts=[]), r"compile_directory.parts: .* not \[\]"),
    (lambda ref: ref.update(parts="tables/log0/compile_directory.json.zst"), r"compile_directory.parts: .* not tables/"),
    (lambda ref: ref.update(path=ref.pop("parts")[0]), r"at least one path, not None \(it has a path, as in format 1: "
                                                       "rebuild the bundle with a current tlparse-build\\)"),
    (lambda ref: ref.update(parts=[7]), r"compile_directory.parts\[0\]: a path must be a string, not 7"),
])
def test_a_table_reference_without_parts_is_refused(simple_copy: Path, edit: Any, message: str) -> None:
    edit_ref(simple_copy, "compile_directory", edit)
    refused(tlparse_bundle.open(simple_copy), "compile_directory", message)


def write_part(root: Path, path: str, value: Any) -> None:
    (root / path).write_bytes(zstd_json(value))


def test_a_part_that_is_not_an_object_is_refused_when_reached(simple_copy: Path) -> None:
    split_table(simple_copy, "log0", "compile_directory")
    write_part(simple_copy, f"{CD}.1.json.zst", [1, 2])
    b = tlparse_bundle.open(simple_copy)
    refused(b, "compile_directory", f"{CD}.1.json.zst: part 1 of table compile_directory is not a JSON object")
    walk = b.table_parts("compile_directory")
    assert next(walk).part == 0  # parts are read one at a time: part 0 is read before part 1 fails
    with pytest.raises(BundleError, match="part 1 of table compile_directory is not a JSON object"):
        next(walk)


def disagree(part: Dict[str, Any]) -> None:
    part["total_us"] += 1


def drop_phases(part: Dict[str, Any]) -> None:
    del part["phases"]


def add_member(part: Dict[str, Any]) -> None:
    part["extra"] = []


def phases_not_a_list(part: Dict[str, Any]) -> None:
    part["phases"] = {}


def total_a_list(part: Dict[str, Any]) -> None:
    part["total_us"] = [part["total_us"]]


def events_true(part: Dict[str, Any]) -> None:
    part["events"] = True  # part 0's is made 1: equal in Python, another JSON value


@pytest.mark.parametrize("edit,message", [
    (disagree, r"part 2 of table compile_time: 'total_us' differs from part 0's \(a member that is not a list"),
    (drop_phases, r"part 2 of table compile_time has other members than part 0 \(missing \['phases'\], extra \[\]\)"),
    (add_member, r"part 2 of table compile_time has other members than part 0 \(missing \[\], extra \['extra'\]\)"),
    (phases_not_a_list, "part 2 of table compile_time: 'phases' is a list in part 0 and not in this part"),
    (total_a_list, "part 2 of table compile_time: 'total_us' differs from part 0's"),
    (events_true, "part 2 of table compile_time: 'events' differs from part 0's"),
])
def test_parts_that_disagree_are_refused(simple_copy: Path, edit: Any, message: str) -> None:
    parts = split_table(simple_copy, "log0", "compile_time")
    assert isinstance(parts[2]["total_us"], float) and isinstance(parts[2]["phases"], list)
    edit(parts[2])
    write_part(simple_copy, "tables/log0/compile_time.2.json.zst", parts[2])
    if edit is events_true:
        for k in (0, 1):
            write_part(simple_copy, f"tables/log0/compile_time.{k}.json.zst", {**parts[k], "events": 1})
    refused(tlparse_bundle.open(simple_copy), "compile_time", "tables/log0/compile_time.2.json.zst: " + message)


def test_the_document_limit_holds_per_part(simple_copy: Path) -> None:
    whole = table_file(simple_copy, "log0", "search")
    parts = split_table(simple_copy, "log0", "search")
    sizes = [len(json.dumps(p).encode()) for p in parts]
    # A limit each part is under and the whole table is over: the merged table is read.
    limit = max(sizes) + 16
    assert len(json.dumps(whole).encode()) > limit
    assert dict(tlparse_bundle.open(simple_copy, limits=Limits(document=limit)).table("search")) == whole
    # A part over it is refused, naming that part.
    write_part(simple_copy, "tables/log0/search.1.json.zst", {**parts[1], "pad": " " * limit})
    b = tlparse_bundle.open(simple_copy, limits=Limits(document=limit))
    refused(b, "search", f"tables/log0/search.1.json.zst: decompresses to more than {limit} bytes; refused")


def test_a_missing_part_is_named(simple_copy: Path) -> None:
    split_table(simple_copy, "log0", "compile_directory")
    (simple_copy / f"{CD}.2.json.zst").unlink()
    with pytest.raises(NotFoundError, match=f"{CD}.2.json.zst: missing in"):
        tlparse_bundle.open(simple_copy).table("compile_directory")


def test_table_parts_of_absent_or_unknown_tables(bundles: Dict[str, Path]) -> None:
    single = tlparse_bundle.open(bundles["simple"])
    assert list(single.table_parts("failures")) == [] and list(single.table_parts("compile_alignment")) == []
    with pytest.raises(NotFoundError, match="did you mean compile_directory"):
        single.table_parts("compile_directroy")
    multi = tlparse_bundle.open(bundles["ranks_shifted"])
    with pytest.raises(BundleError, match="pass stream="):
        multi.table_parts("compile_directory")
    with pytest.raises(BundleError, match="cross-rank table"):
        multi.table_parts("compile_alignment", "rank0")


# --- real multi-part bundles ---------------------------------------------------------------------


@pytest.mark.parametrize("bundle", PARTED)
def test_multi_part_builds_read_as_their_single_part_builds(bundles: Dict[str, Path], bundle: str) -> None:
    parted = bundles[f"{bundle}.parts"]
    single, multi = tlparse_bundle.open(bundles[bundle]), tlparse_bundle.open(parted)
    refs = list(table_refs(multi.manifest))
    assert [(s, t) for s, t, _ in refs] == [(s, t) for s, t, _ in table_refs(single.manifest)]
    split = 0
    for stream, name, ref in refs:
        whole = multi.table(name, stream)
        assert dict(whole) == dict(single.table(name, stream)), (bundle, stream, name)
        assert whole.manifest_rows == ref["rows"] == single.table(name, stream).manifest_rows
        parts = list(multi.table_parts(name, stream))
        # In the manifest's order, each the document of its file read without the reader.
        assert [p.part for p in parts] == list(range(len(ref["parts"])))
        assert [dict(p) for p in parts] == [unzstd_json(parted / path) for path in ref["parts"]]
        assert [row for p in parts for row in p.rows] == whole.rows
        split += len(ref["parts"]) > 1
    assert split > 0, f"no table of {bundle} was cut in parts at --table-part-bytes 2000"
