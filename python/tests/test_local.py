"""The reader on real bundles in local directories, checked against the raw logs, the bundle
files read without it, and `tlparse-build cat`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict

import pytest

import tlparse_bundle
from tlparse_bundle import BundleError, NotFoundError

from conftest import FIXTURES, REPO, SOURCES, run
from helpers import counted_rows, logged_payload, manifest, shard_entries


def test_open_a_path_str_or_pathlike(bundles: Dict[str, Path]) -> None:
    for where in (bundles["simple"], str(bundles["simple"]), str(bundles["simple"]) + os.sep):
        b = tlparse_bundle.open(where)
        assert b.manifest["format"] == "tlparse-bundle"
        assert b.manifest["format_version"] == "2.0"
        assert b.manifest["min_reader_version"] == 2
        assert b.streams == ["log0"]
    assert tlparse_bundle.READER_VERSION == 2


def test_streams_of_a_multi_rank_bundle(bundles: Dict[str, Path]) -> None:
    b = tlparse_bundle.open(bundles["ranks_shifted"])
    # One file per rank in fixtures-repo/torch-2.15/ranks_shifted.
    assert b.streams == ["rank0", "rank1", "rank2", "rank3"]
    assert [m["label"] for m in b.manifest["cross_rank"]["members"]] == ["rank 0", "rank 1", "rank 2", "rank 3"]


def test_every_table_loads_and_rows_match_the_manifest(bundles: Dict[str, Path]) -> None:
    seen = set()
    for name, root in bundles.items():
        b = tlparse_bundle.open(root)
        m = manifest(root)
        scopes = [(s["id"], s["tables"]) for s in m["streams"]]
        if m["cross_rank"]:
            scopes.append((None, m["cross_rank"]["tables"]))
        for stream, tables in scopes:
            for table_name, ref in tables.items():
                table = b.table(table_name, stream)
                assert table is not None and table.name == table_name and table.stream == stream
                assert isinstance(table.rows, list)
                assert table.manifest_rows == ref["rows"]
                assert counted_rows(table_name, table, table.rows) == ref["rows"], (name, stream, table_name)
                if table_name not in tlparse_bundle.ROWS_COUNTED_OTHERWISE:
                    assert len(table.rows) == ref["rows"], (name, stream, table_name)
                seen.add(table_name)
    # The fixtures were chosen to hold every table of the format at least once.
    assert seen == set(tlparse_bundle.STREAM_TABLES) | set(tlparse_bundle.CROSS_RANK_TABLES)


def test_table_picks_its_stream_or_asks_for_one(bundles: Dict[str, Path]) -> None:
    single = tlparse_bundle.open(bundles["simple"])
    assert single.table("compile_directory").stream == "log0"
    # Absent tables are None: simple.log has no failure, and one stream has no cross-rank tables.
    assert "failures" not in manifest(bundles["simple"])["streams"][0]["tables"]
    assert single.table("failures") is None
    assert single.table("compile_alignment") is None
    with pytest.raises(NotFoundError, match="did you mean compile_directory"):
        single.table("compile_directroy")

    multi = tlparse_bundle.open(bundles["ranks_shifted"])
    with pytest.raises(BundleError, match=r"4 streams \(rank0, rank1, rank2, rank3\): pass stream="):
        multi.table("compile_directory")
    alignment = multi.table("compile_alignment")
    assert alignment is not None and alignment.stream is None and len(alignment.rows) == 6
    with pytest.raises(BundleError, match="cross-rank table"):
        multi.table("compile_alignment", stream="rank0")
    with pytest.raises(NotFoundError, match="no stream 'rank9'"):
        multi.table("compile_directory", stream="rank9")
    # No stream of ranks_shifted recorded an execution order.
    assert multi.table("execution_order") is None


def test_values_checked_by_hand(bundles: Dict[str, Path]) -> None:
    b = tlparse_bundle.open(bundles["ranks_shifted"])
    # dedicated_log_torch_trace_rank_2_*.log line 3445: compilation_metrics of compile_id "0/0"
    # has co_name "rank_local_metric": rank 2 compiled a function the other ranks did not.
    rank2 = b.table("compile_directory", "rank2").rows
    assert (rank2[0]["compile_id"], rank2[0]["co_name"], rank2[0]["status"]) == ("[0/0]", "rank_local_metric", "ok")
    # rank 1's log has compilation_metrics for 0/0, 1/0, 1/1, 1/2, then 0/1 (forward recompiled).
    rank1 = b.table("compile_directory", "rank1").rows
    assert [c["compile_id"] for c in rank1] == ["[0/0]", "[1/0]", "[1/1]", "[1/2]", "[0/1]"]
    assert [c["co_name"] for c in rank1][-1] == "forward"

    simple = tlparse_bundle.open(bundles["simple"])
    # simple.log has 76 glog headers (`grep -c '^[VIWE][0-9]'`), one compile.
    assert simple.manifest["streams"][0]["entries"] == 76
    assert [c["compile_id"] for c in simple.table("compile_directory").rows] == ["[0/0]"]


def test_index_rows_and_stacks(bundles: Dict[str, Path]) -> None:
    b = tlparse_bundle.open(bundles["simple"])
    rows = list(b.index_rows())
    assert len(rows) == 76 and [r["seq"] for r in rows] == list(range(76))
    # simple.log line 97 is the dynamo_start of [0/0], logged by convert_frame.py:961, whose
    # stack starts at test_torchinductor.py line 13037, in <module> (docs/format.md's example).
    row = rows[19]
    assert (row["line"], row["kind"], row["compile_id"], row["src"]) == (
        97, "dynamo_start", "[0/0]", "torch/_dynamo/convert_frame.py:961")
    outermost = b.stacks().stack(row["meta"]["stack"])[0]
    assert (outermost["line"], outermost["name"]) == (13037, "<module>")
    assert outermost["file"].endswith("test/inductor/test_torchinductor.py")
    assert list(b.index_rows("log0")) == rows


def test_row_numbering_restarts_at_a_stored_line() -> None:
    numbering = tlparse_bundle.RowNumbering()
    stored = [{}, {"line": 10, "payload": {"lines": 2}}, {}, {"line": "x"}, {"line": 20}]
    rows = [numbering.fill(dict(r)) for r in stored]
    assert [(r["seq"], r["line"]) for r in rows] == [(0, 1), (1, 10), (2, 13), (3, 14), (4, 20)]


def test_diagnostics(bundles: Dict[str, Path]) -> None:
    assert list(tlparse_bundle.open(bundles["simple"]).diagnostics()) == []
    b = tlparse_bundle.open(bundles["hostile"])
    (diagnostic,) = b.diagnostics()
    # hostile.log line 128: an envelope cut in the middle of a string.
    assert (diagnostic["kind"], diagnostic["line"], diagnostic["stream"]) == ("bad_json", 128, "log0")
    raw = b.blob(diagnostic["raw"])
    expected = (REPO / "fixtures-repo/hostile/hostile.log").read_bytes().split(b"\n")[127] + b"\n"
    assert raw == expected and raw.startswith(b"V1120 23:44:59.000000 4242 ")


@pytest.mark.parametrize("bundle,stream", [("simple", "log0"), ("ranks_shifted", "rank2"), ("ranks_shifted", "rank0")])
def test_artifact_is_what_tlparse_build_cat_prints(
    bundles: Dict[str, Path], binary: Path, bundle: str, stream: str
) -> None:
    b = tlparse_bundle.open(bundles[bundle])
    first = b.table("compile_directory", stream).rows[0]
    assert first["compile_id"] == "[0/0]"
    artifacts = b.compile_artifacts(stream, "[0/0]")
    assert artifacts == b.table("compile_directory", stream)["artifacts"][: first["artifact_count"]]
    assert {a["compile_id"] for a in artifacts} == {"[0/0]"}
    names = list(dict.fromkeys(a["name"] for a in artifacts if a["blob"]))
    assert len(names) >= 9  # every artifact of [0/0] with a payload, each name once
    for name in names:
        printed = run(binary, "cat", bundles[bundle], "--stream", stream, "[0/0]", name)
        assert b.artifact(stream, "[0/0]", name).encode() == printed, name
        assert b.artifact(stream, "0/0", name) == b.artifact(stream, "[0/0]", name)


def test_artifact_occurrences_and_errors(bundles: Dict[str, Path]) -> None:
    b = tlparse_bundle.open(bundles["ranks_shifted"])
    # rank 0's [0/0] (a training step) has two output codes: forward, then backward.
    codes = [a for a in b.compile_artifacts("rank0", "0/0") if a["name"] == "inductor_output_code"]
    assert len(codes) == 2
    second = b.artifact("rank0", "[0/0]", "inductor_output_code", occurrence=1)
    assert second == b.blob(codes[1]["blob"]).decode() != b.artifact("rank0", "[0/0]", "inductor_output_code")
    with pytest.raises(NotFoundError, match="has 2 artifact"):
        b.artifact("rank0", "[0/0]", "inductor_output_code", occurrence=2)
    with pytest.raises(KeyError, match="did you mean dynamo_output_graph"):
        b.artifact("rank2", "0/0", "dynamo_output_grap")
    with pytest.raises(NotFoundError, match=r"no compile id \[7/7\]"):
        b.artifact("rank2", "7/7", "dynamo_output_graph")
    with pytest.raises(BundleError, match="pass stream="):
        b.artifact(None, "0/0", "dynamo_output_graph")
    # rank2 log lines 4590-4591: two artifacts of [1/0] logged with no has_payload, no payload.
    with pytest.raises(NotFoundError, match="logged without a payload"):
        b.artifact("rank2", "1/0", "inductor_provenance_tracking_node_mappings")
    # hostile.log logs links (a url, no payload) under [0/0].
    hostile = tlparse_bundle.open(bundles["hostile"])
    with pytest.raises(NotFoundError, match="is a link to https://example.com/"):
        hostile.artifact(None, "0/0", "<script>window.__pwned=1</script>")


@pytest.mark.parametrize("bundle", ["simple", "ranks_shifted", "big"])
def test_every_blob_decodes_to_its_size(bundles: Dict[str, Path], bundle: str) -> None:
    root = bundles[bundle]
    entries = shard_entries(root)
    counts = manifest(root)["counts"]
    assert len(entries) == counts["unique_blobs"]
    b = tlparse_bundle.open(root)
    total = 0
    # In pack order: a few packs are cached, so this decompresses each pack once.
    for blob_id, loc in sorted(entries.items(), key=lambda e: (e[1]["pack"], e[1]["offset"])):
        assert len(b.blob(blob_id)) == loc["size"]
        total += loc["size"]
    assert total == counts["unique_blob_bytes"]


def test_the_big_bundle_has_sharded_blob_index(bundles: Dict[str, Path]) -> None:
    blobs = manifest(bundles["big"])["blobs"]
    assert blobs["index_prefix_len"] == 1
    assert sorted(p.name for p in (bundles["big"] / "blobs" / "index").iterdir()) == [f"{i:x}.json.zst" for i in range(16)]


def input_file(bundle: str, path: str) -> Path:
    """An input of a bundle of SOURCES on disk: its path is relative to the trace given (below
    the directory, or the file's name when the trace is a file)."""
    trace = FIXTURES / SOURCES[bundle]
    return trace / path if trace.is_dir() else trace


@pytest.mark.parametrize("bundle", ["simple", "ranks_shifted"])
def test_blobs_are_the_payloads_as_logged(bundles: Dict[str, Path], bundle: str) -> None:
    b = tlparse_bundle.open(bundles[bundle])
    checked = 0
    for stream in b.manifest["streams"]:
        log = input_file(bundle, b.manifest["inputs"][stream["input"]]["path"]).read_bytes().split(b"\n")
        for row in b.index_rows(stream["id"]):
            if "payload" in row:
                expected = logged_payload(log, row["line"], row["payload"]["lines"])
                assert b.blob(row["payload"]["hash"]) == expected, (stream["id"], row["line"])
                checked += 1
    assert checked > 50


def test_a_pack_is_decompressed_only_as_far_as_needed(bundles: Dict[str, Path]) -> None:
    root = bundles["big"]
    entries = shard_entries(root)
    blob_id, loc = min(entries.items(), key=lambda e: (e[1]["pack"], e[1]["offset"]))
    raw_size = manifest(root)["blobs"]["packs"][loc["pack"]]["raw_size"]
    b = tlparse_bundle.open(root)
    b.blob(blob_id)
    decoded = b._blobs._decoded.get(loc["pack"])  # the reader's cache, looked into on purpose
    assert raw_size > 512 * 1024 and loc["offset"] + loc["size"] <= len(decoded.data) < raw_size // 2


def test_blob_ids_that_are_not_there(bundles: Dict[str, Path]) -> None:
    b = tlparse_bundle.open(bundles["simple"])
    with pytest.raises(NotFoundError, match="not a blob id"):
        b.blob("../../etc/passwd")
    with pytest.raises(NotFoundError, match="no blob 0{32}"):
        b.blob("0" * 32)


def test_to_pandas(bundles: Dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    table = tlparse_bundle.open(bundles["ranks_shifted"]).table("compile_directory", "rank1")
    try:
        import pandas  # noqa: F401
    except ImportError:
        # Without pandas (scripts/test-python installs it), the error path is what can be tested.
        with pytest.raises(ImportError, match="pip install pandas"):
            table.to_pandas()
        return
    frame = table.to_pandas()
    assert list(frame["compile_id"]) == ["[0/0]", "[1/0]", "[1/1]", "[1/2]", "[0/1]"]
    assert len(table.to_pandas("unattributed")) == len(table["unattributed"]) == 1
    with pytest.raises(NotFoundError, match="no 'compile'"):
        table.to_pandas("compile")


def test_to_pandas_without_pandas(bundles: Dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    table = tlparse_bundle.open(bundles["simple"]).table("compile_directory")
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    with pytest.raises(ImportError, match=r"needs pandas, which is not installed: pip install pandas"):
        table.to_pandas()


def test_table_is_a_read_only_mapping(bundles: Dict[str, Path]) -> None:
    table = tlparse_bundle.open(bundles["simple"]).table("compile_directory")
    assert sorted(table) == ["artifacts", "compiles", "unattributed"] and len(table) == 3
    assert table["compiles"] is table.rows and dict(table)["unattributed"] == table["unattributed"]
    assert "compile_directory" in repr(table)
