"""The reader over HTTP: bundles served by a local static server, as is and gzipped on the fly
like GitHub Pages, read the same as from their directories."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

import tlparse_bundle
from tlparse_bundle import BundleError, NotFoundError

from conftest import Server
from helpers import manifest, shard_entries

TIMEOUT = 10.0  # seconds per request: a stuck server fails the test instead of hanging it


@pytest.fixture(params=["plain", "gzip"])
def server(request: pytest.FixtureRequest, served: Server, served_gzip: Server) -> Server:
    return served if request.param == "plain" else served_gzip


def test_open_a_url_with_or_without_slash(server: Server, bundles: Dict[str, Path]) -> None:
    for url in (server.url + "simple", server.url + "simple/"):
        b = tlparse_bundle.open(url, timeout=TIMEOUT)
        assert b.streams == ["log0"]
        assert b.manifest == manifest(bundles["simple"])


@pytest.mark.parametrize("bundle", ["simple", "ranks_shifted", "ranks_shifted.parts"])
def test_http_reads_what_the_directory_holds(server: Server, bundles: Dict[str, Path], bundle: str) -> None:
    gzipped = server.gzipped
    local = tlparse_bundle.open(bundles[bundle])
    remote = tlparse_bundle.open(server.url + bundle, timeout=TIMEOUT)
    for stream in local.manifest["streams"]:
        for name in stream["tables"]:
            assert dict(remote.table(name, stream["id"])) == dict(local.table(name, stream["id"]))
            remote_parts = [dict(p) for p in remote.table_parts(name, stream["id"])]
            assert remote_parts == [dict(p) for p in local.table_parts(name, stream["id"])]
        assert list(remote.index_rows(stream["id"])) == list(local.index_rows(stream["id"]))
        assert remote.stacks(stream["id"]).frames == local.stacks(stream["id"]).frames
    for name in (local.manifest["cross_rank"] or {}).get("tables", {}):
        assert dict(remote.table(name)) == dict(local.table(name))
    assert list(remote.diagnostics()) == list(local.diagnostics())
    # Each stream's first compile, every artifact with a payload.
    for stream in local.streams:
        first = local.table("compile_directory", stream).rows[0]
        for ref in local.compile_artifacts(stream, first["compile_id"]):
            if ref["blob"]:
                assert remote.artifact(stream, first["compile_id"], ref["name"]) == local.artifact(
                    stream, first["compile_id"], ref["name"])
    if server.gzip_all:
        assert server.gzipped > gzipped  # the gzip path was really taken


def test_every_blob_over_http(server: Server, bundles: Dict[str, Path]) -> None:
    local = tlparse_bundle.open(bundles["simple"])
    remote = tlparse_bundle.open(server.url + "simple", timeout=TIMEOUT)
    for blob_id in shard_entries(bundles["simple"]):
        assert remote.blob(blob_id) == local.blob(blob_id)


def test_one_artifact_costs_four_requests(served: Server, bundles: Dict[str, Path]) -> None:
    start = len(served.requests)
    b = tlparse_bundle.open(served.url + "simple", timeout=TIMEOUT)
    code = b.artifact(None, "[0/0]", "inductor_output_code")
    assert code.startswith("# AOT ID: ['0_inference']")  # simple.log's output code, first line
    assert b.artifact(None, "[0/0]", "inductor_output_code") == code  # from the caches
    asked = served.requests[start:]
    assert asked[:3] == ["/simple/manifest.json", "/simple/tables/log0/compile_directory.json.zst",
                         "/simple/blobs/index/all.json.zst"]
    assert len(asked) == 4 and asked[3].startswith("/simple/blobs/packs/")


def test_urls_that_are_no_bundle(served: Server) -> None:
    with pytest.raises(NotFoundError, match=r"not a bundle \(no manifest.json\).*HTTP 404"):
        tlparse_bundle.open(served.url + "nothing-here/", timeout=TIMEOUT)
    with pytest.raises(ValueError, match="only local directories and http"):
        tlparse_bundle.open("ftp://127.0.0.1/bundle")
    with pytest.raises(ValueError, match="no query string"):
        tlparse_bundle.open(served.url + "simple/?x=1")


def test_a_server_that_is_not_there() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/bundle/"
        with pytest.raises(BundleError, match="cannot fetch"):
            tlparse_bundle.open(url, timeout=TIMEOUT)
