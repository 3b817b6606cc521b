"""S3 helper of the share tests, run with target/moto-venv's python (boto3) beside scripts/with-moto.

    s3.py create BUCKET      a bucket anyone may read (as a public bundle host is)
    s3.py objects BUCKET PREFIX   every object under PREFIX/ with its headers, as JSON
"""
import json
import sys

import boto3

s3 = boto3.client("s3")
command, bucket = sys.argv[1], sys.argv[2]
if command == "create":
    s3.create_bucket(Bucket=bucket)
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                       "Resource": f"arn:aws:s3:::{bucket}/*"}],
    }
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
elif command == "objects":
    prefix = sys.argv[3] + "/"
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            head = s3.head_object(Bucket=bucket, Key=o["Key"])
            out[o["Key"][len(prefix):]] = {
                "etag": head["ETag"],
                "modified": head["LastModified"].isoformat(),
                "size": head["ContentLength"],
                "type": head.get("ContentType"),
                "cache": head.get("CacheControl"),
                "encoding": head.get("ContentEncoding"),
                "blake3": head.get("Metadata", {}).get("blake3"),
            }
    json.dump(out, sys.stdout)
else:
    sys.exit(f"unknown command {command}")
