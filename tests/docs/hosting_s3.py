"""The S3 configuration of docs/hosting.md, applied to moto's S3 server (run by
scripts/test-hosting-s3, beside it through scripts/with-moto): the CORS rules (the `s3-cli` JSON
block) are accepted by PutBucketCors and read back the same; the bucket policy (the `s3` policy
block) is accepted, and with it an anonymous GET reads a bundle's file under the prefix and not
outside it. moto answers CORS requests with permissive headers of its own, not by the bucket's
rules, so what the rules do in a browser is not checked here."""
import json
import os
import re
import sys
import urllib.error
import urllib.request

import boto3

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "hosting.md")


def block(marker):
    text = open(DOC, encoding="utf-8").read()
    m = re.search(r"<!-- " + re.escape(marker) + r" -->\s*```json\n(.*?)```", text, re.S)
    if not m:
        sys.exit(f"hosting_s3: no block after <!-- {marker} --> in docs/hosting.md")
    return json.loads(re.sub(r"^  ", "", m.group(1), flags=re.M))


def anonymous_get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    cors = block("cors: s3-cli")
    policy = block("policy: s3")
    bucket = policy["Statement"][0]["Resource"].split(":::")[1].split("/")[0]
    prefix = policy["Statement"][0]["Resource"].split("/", 1)[1].rstrip("*")
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=bucket)

    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=cors)
    got = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got == cors["CORSRules"], f"CORS rules read back differ: {got}"

    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    base = os.environ["AWS_ENDPOINT_URL"].rstrip("/")
    inside = f"{prefix}run-1/manifest.json"
    outside = "private/run-2/manifest.json"
    for key in (inside, outside):
        s3.put_object(Bucket=bucket, Key=key, Body=b"{}", ContentType="application/json")
    statuses = {key: anonymous_get(f"{base}/{bucket}/{key}") for key in (inside, outside)}
    assert statuses == {inside: 200, outside: 403}, f"anonymous GETs with the doc's policy: {statuses}"
    print(f"hosting_s3: CORS rules accepted; policy: anonymous GET {statuses}")


if __name__ == "__main__":
    main()
