"""`tlparse-build merge` of shards in object storage, on moto's S3 server (run by merge-s3.sh).

Shards of the 7 rank logs of fixtures-repo/tlparse-tests/multi_rank_runtime are uploaded under
s3://shards/job/rankN/; `merge s3://shards/job/rank0 ... -o OUT` must give the bundle a one-run
build of that directory gives, byte for byte. Then a shard missing from the bucket, one whose
upload stopped before shard.json, and one with a damaged chunk are each refused, naming it, with
nothing written.
"""
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import boto3

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ["TLPARSE_BUILD"]
TRACE = REPO / "fixtures-repo/tlparse-tests/multi_rank_runtime"


def check(condition, message):
    if not condition:
        sys.exit(f"merge_s3: FAILED: {message}")


def run(*args):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)


def same_trees(a, b):
    """Every file of a and b, by relative path, with equal bytes."""
    def files(root):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    check(files(a) == files(b), f"the same files in {a} and {b}")
    _, mismatch, errors = filecmp.cmpfiles(a, b, files(a), shallow=False)
    check(not mismatch and not errors, f"differing files: {mismatch + errors}")


def upload(s3, shard, key_prefix, skip=()):
    for path in sorted(shard.rglob("*")):
        rel = str(path.relative_to(shard))
        if path.is_file() and rel not in skip:
            s3.put_object(Bucket="shards", Key=f"{key_prefix}/{rel}", Body=path.read_bytes())


def main():
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="shards")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        one = tmp / "one"
        check(run(TRACE, "-o", one, "-q").returncode == 0, "one-run build")
        logs = sorted(TRACE.glob("*.log"))
        urls = []
        for log in logs:
            shard = tmp / "shards" / log.name
            r = run("shard", log, "-o", shard)
            check(r.returncode == 0, f"shard {log.name}: {r.stderr}")
            upload(s3, shard, f"job/{log.stem}")
            urls.append(f"s3://shards/job/{log.stem}")
        merged = tmp / "merged"
        r = run("merge", *reversed(urls), "-o", merged, "--expect-ranks", len(logs))
        check(r.returncode == 0, f"merge from S3: {r.stderr}")
        check(run("validate", merged).returncode == 0, "the merged bundle validates")
        same_trees(one, merged)
        print(f"merge_s3: {len(urls)} shards merged from s3://shards/job/: identical to the one-run build")

        # Refusals: each names the shard, exits 2, and writes nothing.
        first = tmp / "shards" / logs[0].name
        upload(s3, first, "partial", skip={"shard.json"})
        damaged_dir = tmp / "damaged"
        subprocess.run(["cp", "-r", str(first), str(damaged_dir)], check=True)
        chunk = next(p for p in sorted(damaged_dir.rglob("*.zst")) if "tables" not in str(p))
        data = bytearray(chunk.read_bytes())
        data[len(data) // 2] ^= 0x20
        chunk.write_bytes(bytes(data))
        upload(s3, damaged_dir, "damaged")
        cases = [("s3://shards/nowhere", "not a finished shard"),
                 ("s3://shards/partial", "not a finished shard"),
                 ("s3://shards/damaged", "damaged")]
        for url, why in cases:
            out = tmp / "refused"
            r = run("merge", *urls[1:], url, "-o", out)
            check(r.returncode == 2 and url in r.stderr and why in r.stderr, f"{url}: exit {r.returncode}: {r.stderr}")
            check(not out.exists(), f"{url}: nothing written")
            left = [p.name for p in tmp.iterdir() if "tlparse-build" in p.name]
            check(not left, f"{url}: staging left behind: {left}")
        print("merge_s3: a shard missing, unfinished or damaged in the bucket is refused, naming it; nothing written")


main()
