"""`tlparse-build proxy s3://...` against a real S3 API (moto, on loopback): run by
tests/share/proxy-s3.sh beside scripts/with-moto, with target/moto-venv's python (boto3).

A validated two-rank bundle goes up under s3://proxy-test/team/job-1/; through the proxy, every
file must come back byte for byte, missing files are 404, paths that are no bundle file are
refused, the token is required, CORS goes only to the allowed origin, a pack is served from the
cache once the bucket lost it, an unreachable endpoint is a 502, and the secret key never shows.
Every request and wait is bounded in time.
"""
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3

sys.path.insert(0, str(Path(__file__).parent))
from share_common import BINARY, TIMEOUT, Proxy, check  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUCKET, PREFIX = "proxy-test", "team/job-1"
ALLOWED = "http://viewer.test:8000"


def build_bundle(out):
    subprocess.run([BINARY, str(REPO / "fixtures-repo/tlparse-tests/multi_rank_logs"), "-o", str(out), "-q"],
                   check=True, timeout=300)
    subprocess.run([BINARY, "validate", str(out)], check=True, timeout=300)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    secret = "secret-" + secrets.token_hex(16)
    os.environ["AWS_SECRET_ACCESS_KEY"] = secret  # moto accepts any key; this one must never show
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    with tempfile.TemporaryDirectory() as tmp:
        files = build_bundle(Path(tmp) / "bundle")
        for path, data in files.items():
            s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{path}", Body=data)
        s3.put_object(Bucket=BUCKET, Key="team/secret.txt", Body=b"not a bundle file")
        token = secrets.token_hex(24)
        token_file = Path(tmp) / "token"
        token_file.write_text(token + "\n")

        proxy = Proxy(f"s3://{BUCKET}/team", ALLOWED, "--token-file", str(token_file))
        auth = {"Authorization": f"Bearer {token}"}
        check(len(files) > 60 and any(p.startswith("tables/cross_rank/") for p in files), f"{len(files)} files")
        for path, data in files.items():
            status, headers, body = proxy.get(f"/job-1/{path}", auth)
            check(status == 200 and body == data, f"{path}: {status}, {len(body)} of {len(data)} bytes")
            immutable = path.startswith("blobs/packs/")
            check(("immutable" in headers["cache-control"]) == immutable, f"{path}: {headers['cache-control']}")
            check(headers["content-security-policy"] == "sandbox", path)
        status, headers, _ = proxy.get("/job-1/manifest.json", auth)
        etag = headers.get("etag")
        check(status == 200 and etag, f"manifest: {status}, ETag {etag}")
        status, headers, body = proxy.get("/job-1/manifest.json", {**auth, "If-None-Match": etag})
        check((status, body, headers.get("etag")) == (304, b"", etag), f"revalidation: {status} {headers}")
        # A bundle-shaped path that the bundle's manifest does not list is refused.
        status, _, body = proxy.get("/job-1/stacks/rank9.json", auth)
        check(status == 404 and body.startswith(b"refused: "), f"{status} {body}")
        for path in ["/", "/job-1/", "/secret.txt", "/job-1/blobs/packs/", "/.aws/manifest.json"]:
            status, _, body = proxy.get(path, auth)
            check(status == 404 and body.startswith(b"refused: "), f"{path}: {status} {body}")
        for headers in [{}, {"Authorization": "Bearer " + "0" * 48}, {"Authorization": token}]:
            status, _, _ = proxy.get("/job-1/manifest.json", headers)
            check(status == 401, f"{headers}: {status}")

        status, headers, _ = proxy.get("/job-1/manifest.json", {**auth, "Origin": ALLOWED})
        check(status == 200 and headers.get("access-control-allow-origin") == ALLOWED, f"{status} {headers}")
        status, headers, body = proxy.get("/job-1/manifest.json", {**auth, "Origin": "http://evil.test"})
        check(status == 403 and "access-control-allow-origin" not in headers and b"tlparse-bundle" not in body,
              f"foreign origin: {status} {headers}")
        preflight = {"Origin": ALLOWED, "Access-Control-Request-Method": "GET",
                     "Access-Control-Request-Headers": "authorization"}
        status, headers, _ = proxy.get("/job-1/manifest.json", preflight, method="OPTIONS")
        check(status == 204 and headers.get("access-control-allow-origin") == ALLOWED, f"preflight: {status}")

        # The bucket loses a pack the proxy already served, and the manifest: the pack still
        # comes from the cache, the manifest is gone.
        pack = next(p for p in files if p.startswith("blobs/packs/"))
        for path in [pack, "manifest.json"]:
            s3.delete_object(Bucket=BUCKET, Key=f"{PREFIX}/{path}")
        status, headers, body = proxy.get(f"/job-1/{pack}", auth)
        check(status == 200 and headers.get("x-proxy-cache") == "hit" and body == files[pack], f"cached pack: {status}")
        status, _, _ = proxy.get("/job-1/manifest.json", auth)
        check(status == 404, f"deleted manifest: {status}")
        output = proxy.stop()

        down = Proxy(f"s3://{BUCKET}/team", ALLOWED, env={**os.environ, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"})
        started = time.monotonic()
        status, _, body = down.get("/job-1/manifest.json")
        check((status, body) == (502, b"upstream failed: could not connect\n"), f"down: {status} {body}")
        print(f"an unreachable endpoint answered 502 in {time.monotonic() - started:.2f} s")
        output += down.stop()
        check(secret not in output and token not in output, "the proxy printed a secret")
        print(f"proxy over S3 (moto): {len(files)} files read back byte for byte; revalidation, refusals, token, CORS, cache, 502: ok")


if __name__ == "__main__":
    main()
