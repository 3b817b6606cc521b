"""Fixtures: real bundles built from the repository's fixture logs by the `tlparse-build` binary
(`$TLPARSE_BUILD`, default target/release/tlparse-build of the repository), once per session,
and static HTTP servers (plain, and gzipping every response on the fly like GitHub Pages) on an
ephemeral port of 127.0.0.1, each in a thread."""

from __future__ import annotations

import functools
import gzip
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures-repo"
BINARY = Path(os.environ.get("TLPARSE_BUILD", REPO / "target" / "release" / "tlparse-build"))

# Fixture logs, chosen so that every table of the format (19 per stream, 8 cross-rank) is in at
# least one bundle: the last three bring graph_execution, execution_order, runtime_estimations,
# tensor_meta, provenance, failures, graph_breaks and export_report.
SOURCES = {
    "simple": "tlparse-tests/simple.log",  # one stream (log0)
    "ranks_shifted": "torch-2.15/ranks_shifted",  # 4 ranks, cross-rank tables
    "graph_exec_order": "tlparse-tests/graph_exec_order",
    "hostile": "hostile/hostile.log",
    "export_guard_added": "tlparse-tests/export_guard_added.log",
}

# Bundles also built with multi-part tables, as `NAME.parts`.
PARTED = ["simple", "ranks_shifted", "graph_exec_order", "export_guard_added"]

# The local server must be reached directly, whatever proxy the environment names.
os.environ["no_proxy"] = os.environ["NO_PROXY"] = "127.0.0.1,localhost"


def run(*args: object) -> bytes:
    """Runs a command from the repository root; its stdout, or a test failure with its stderr."""
    done = subprocess.run([str(a) for a in args], cwd=REPO, capture_output=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"{args} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return done.stdout


@pytest.fixture(scope="session")
def binary() -> Path:
    if not BINARY.is_file():
        pytest.fail(f"no tlparse-build binary at {BINARY}: run `cargo build --release` or set TLPARSE_BUILD")
    return BINARY


@pytest.fixture(scope="session")
def bundles(binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """Bundle directories by name: SOURCES; `big`, a 30 MiB synthetic log
    (scripts/make_big_log.py) whose ~10,000 blobs take 16 blob-index shards (index_prefix_len 1);
    and `NAME.parts` for NAME in PARTED, built with `--table-part-bytes 2000`."""
    out = tmp_path_factory.mktemp("bundles")
    built = {}
    for name, source in SOURCES.items():
        run(binary, Path("fixtures-repo") / source, "-o", out / name, "-q")
        built[name] = out / name
    log = out / "big.log"
    run(sys.executable, "scripts/make_big_log.py", log, "--size-mb", "30")
    run(binary, log, "-o", out / "big", "-q", "--no-viewer")
    built["big"] = out / "big"
    # The same logs with tables cut in parts of ~2,000 bytes: most tables take several.
    for name in PARTED:
        run(binary, Path("fixtures-repo") / SOURCES[name], "-o", out / f"{name}.parts", "-q", "--table-part-bytes", 2000)
        built[f"{name}.parts"] = out / f"{name}.parts"
    return built


@pytest.fixture
def simple_copy(bundles: Dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the simple bundle (no viewer) to damage."""
    copy = tmp_path / "bundle"
    shutil.copytree(bundles["simple"], copy, ignore=shutil.ignore_patterns("viewer", "index.html"))
    return copy


class Server:
    """A static file server of one directory in a thread, recording the paths it was asked for."""

    def __init__(self, root: Path, gzip_all: bool) -> None:
        self.requests: List[str] = []
        self.gzipped = 0
        handler = functools.partial(_Handler, self, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.gzip_all = gzip_all
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


class _Handler(SimpleHTTPRequestHandler):
    timeout = 10  # seconds a connection may stay idle: a stuck client never hangs the session

    def __init__(self, server_state: Server, *args: object, **kwargs: object) -> None:
        self.state = server_state
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def log_message(self, format: str, *args: object) -> None:  # keep pytest's output clean
        pass

    def do_GET(self) -> None:
        self.state.requests.append(self.path)
        if not self.state.gzip_all:
            return super().do_GET()
        # Like GitHub Pages: compressed on the fly whatever the file is, zstd included.
        local = self.translate_path(self.path)
        if not os.path.isfile(local):
            return self.send_error(404)
        with open(local, "rb") as f:
            body = gzip.compress(f.read())
        self.state.gzipped += 1
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(local))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(root: Path, gzip_all: bool) -> Iterator[Server]:
    server = Server(root, gzip_all)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def served(bundles: Dict[str, Path]) -> Iterator[Server]:
    """The directory holding every bundle, served as is: bundle NAME is at `url + NAME`."""
    yield from _serve(bundles["simple"].parent, gzip_all=False)


@pytest.fixture(scope="session")
def served_gzip(bundles: Dict[str, Path]) -> Iterator[Server]:
    """The same, every response gzipped on the fly (`Content-Encoding: gzip`)."""
    yield from _serve(bundles["simple"].parent, gzip_all=True)
