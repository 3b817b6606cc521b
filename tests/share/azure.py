"""`tlparse-build publish az://...` and `tlparse-build proxy az://...` against Azurite, Azure
Storage's emulator, on loopback: run by tests/share/azure.sh beside scripts/with-azurite.

A two-rank bundle is published to az://bundles/runs/x/: every file must be there byte for byte
with its Content-Type and Cache-Control (read from the service's own listing and each blob's GET),
and come back byte for byte through `tlparse-build proxy az://bundles/runs/`; a second publish
uploads nothing; a different bundle is refused without --replace and replaces the first with it,
leaving exactly its files; a container that does not exist is an error. Every request and wait is bounded in time.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from azure_blob import Blob  # noqa: E402
from share_common import BINARY, TIMEOUT, Proxy, check  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CONTAINER, PREFIX = "bundles", "runs/x"
URL = f"az://{CONTAINER}/{PREFIX}/"
IMMUTABLE, REVALIDATE = "public, max-age=31536000, immutable", "no-cache"
TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
         "css": "text/css; charset=utf-8", "json": "application/json", "jsonl": "application/jsonl",
         "txt": "text/plain; charset=utf-8", "wasm": "application/wasm", "zst": "application/zstd",
         "gz": "application/gzip", "svg": "image/svg+xml", "map": "application/json"}
RUNNABLE = {"text/html; charset=utf-8", "text/javascript; charset=utf-8", "image/svg+xml"}


def build_bundle(fixture, out):
    subprocess.run([BINARY, str(REPO / "fixtures-repo/tlparse-tests" / fixture), "-o", str(out), "-q"],
                   check=True, timeout=300)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def expected_headers(files, as_data=False):
    """{path: (Content-Type, Cache-Control)}, as src/media.rs gives them; `as_data`: as the proxy
    serves them, the viewer's files included (it serves no page)."""
    viewer = set() if as_data else {entry["path"] for entry in json.loads(files["manifest.json"]).get("viewer", [])}
    expected = {}
    for path in files:
        kind = TYPES.get(path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else "",
                         "application/octet-stream")
        if path not in viewer and kind in RUNNABLE:
            kind = "text/plain; charset=utf-8"
        immutable = re.fullmatch(r"blobs/packs/[0-9a-f]{32}\.zst", path) is not None
        expected[path] = (kind, IMMUTABLE if immutable else REVALIDATE)
    return expected


def publish(bundle, *extra):
    started = time.monotonic()
    result = subprocess.run([BINARY, "publish", str(bundle), URL, *extra], capture_output=True, text=True,
                            timeout=300)
    return result, time.monotonic() - started


def check_published(blob, files):
    """Every file of `files`, and nothing else, under PREFIX: bytes, type and cache policy."""
    listed = blob.list(CONTAINER, PREFIX + "/")
    names = {name.removeprefix(PREFIX + "/") for name in listed}
    check(names == set(files), f"listed {len(names)} blobs, bundle has {len(files)}: "
          f"extra {sorted(names - set(files))[:5]}, missing {sorted(set(files) - names)[:5]}")
    for path, (kind, cache) in expected_headers(files).items():
        properties = listed[f"{PREFIX}/{path}"]
        check(int(properties["Content-Length"]) == len(files[path]), f"{path}: Content-Length {properties}")
        check(properties.get("Content-Type") == kind, f"{path}: Content-Type {properties.get('Content-Type')}, not {kind}")
        check(properties.get("Cache-Control") == cache, f"{path}: Cache-Control {properties.get('Cache-Control')}, not {cache}")
        status, headers, body = blob.get(CONTAINER, f"{PREFIX}/{path}")
        check(status == 200 and body == files[path], f"{path}: GET {status}, {len(body)} of {len(files[path])} bytes")
        check((headers.get("content-type"), headers.get("cache-control")) == (kind, cache), f"{path}: GET headers {headers}")
        check("content-encoding" not in headers, f"{path}: Content-Encoding {headers.get('content-encoding')}")


def main():
    blob = Blob()
    blob.create_container(CONTAINER, public_blobs=True)
    with tempfile.TemporaryDirectory() as tmp:
        first_dir, second_dir = Path(tmp) / "first", Path(tmp) / "second"
        first = build_bundle("multi_rank_logs", first_dir)
        second = build_bundle("multi_rank_schedule", second_dir)
        check(first["manifest.json"] != second["manifest.json"], "the two fixtures give one bundle")

        result, took = publish(first_dir)
        check(result.returncode == 0, f"publish: {result.returncode} {result.stdout} {result.stderr}")
        check(re.search(rf": {len(first)} file\(s\) uploaded \(.*\), 0 already there, 0 old file\(s\) deleted",
                        result.stdout), result.stdout)
        print(f"published {len(first)} files ({sum(map(len, first.values()))} bytes) to Azurite in {took:.2f} s")
        print("  " + result.stdout.strip().replace("\n", "\n  "))
        check_published(blob, first)
        # The URL printed is the one a browser opens: the blobs are public, no signature needed.
        folder = f"{os.environ['AZURITE_BLOB_STORAGE_URL'].rstrip('/')}/{blob.account}/{CONTAINER}/{PREFIX}/"
        check(f"open:       {folder}index.html\n" in result.stdout, f"the URL to open: {result.stdout}")
        with urllib.request.urlopen(folder + "index.html", timeout=TIMEOUT) as response:
            check(response.read() == first["index.html"], "index.html at the printed URL")

        proxy = Proxy(f"az://{CONTAINER}/runs/", "http://127.0.0.1:1")
        as_data = expected_headers(first, as_data=True)
        for path, data in first.items():
            status, headers, body = proxy.get(f"/x/{path}")
            check(status == 200 and body == data, f"proxy {path}: {status}, {len(body)} of {len(data)} bytes")
            check((headers.get("content-type"), headers.get("cache-control")) == as_data[path], f"proxy {path}: {headers}")
        status, _, _ = proxy.get("/x/stacks/rank9.json")
        check(status == 404, f"proxy, a missing file: {status}")
        output = proxy.stop()
        check(os.environ["AZURE_STORAGE_ACCOUNT_KEY"] not in output, "the proxy printed the account key")
        print(f"proxy az://: {len(first)} files read back byte for byte")

        result, took = publish(first_dir)
        check(result.returncode == 0 and re.search(rf": 0 file\(s\) uploaded \(0 B\), {len(first)} already there",
                                                   result.stdout), f"second publish: {result.stdout} {result.stderr}")
        print(f"second publish: nothing uploaded, in {took:.2f} s")

        result, _ = publish(second_dir)
        check(result.returncode != 0 and "already holds a different bundle" in result.stderr,
              f"a different bundle without --replace: {result.returncode} {result.stdout} {result.stderr}")
        check_published(blob, first)
        result, took = publish(second_dir, "--replace")
        key = os.environ["AZURE_STORAGE_ACCOUNT_KEY"]
        check(key not in result.stdout + result.stderr, "publish printed the account key")
        check(result.returncode == 0, f"--replace: {result.returncode} {result.stdout} {result.stderr}")
        check_published(blob, second)
        print(f"--replace: {result.stdout.splitlines()[0]}")

        # No container: the service's own answer, and nothing published.
        missing = subprocess.run([BINARY, "publish", str(first_dir), "az://no-such-container/x/"],
                                 capture_output=True, text=True, timeout=300)
        check(missing.returncode != 0 and "ContainerNotFound" in missing.stderr and key not in missing.stderr,
              f"a missing container: {missing.returncode} {missing.stderr}")
        print("publish and proxy over Azure (Azurite): ok")


if __name__ == "__main__":
    main()
