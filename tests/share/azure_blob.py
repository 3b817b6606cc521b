"""Azure Blob Storage's REST API, signed with a SharedKey, from the standard library only: what
tests/share/azure.py needs beside Azurite (create a container, list and read blobs with their
properties). The account, key and service URL are the ones scripts/with-azurite exports."""
import base64
import datetime
import hashlib
import hmac
import os
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

VERSION = "2021-10-04"
TIMEOUT = 30


class Blob:
    def __init__(self):
        self.account = os.environ["AZURE_STORAGE_ACCOUNT_NAME"]
        self.key = base64.b64decode(os.environ["AZURE_STORAGE_ACCOUNT_KEY"])
        self.base = os.environ["AZURITE_BLOB_STORAGE_URL"].rstrip("/") + "/" + self.account

    def request(self, method, path, query=None, body=b"", ms_headers=None):
        """(status, headers with lower-case names, body) of a signed request to /ACCOUNT/path;
        `ms_headers`: more x-ms-* headers, signed."""
        query = query or {}
        headers = {
            **(ms_headers or {}),
            "x-ms-date": datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT"),
            "x-ms-version": VERSION,
        }
        length = str(len(body)) if body else ""
        # urllib gives a request with a body a Content-Type of its own: name one, and sign it.
        content_type = "application/octet-stream" if method in ("PUT", "POST") else ""
        canonical_headers = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
        # Path-style (the emulator): the URL path, account included, after the account.
        resource = f"/{self.account}/{self.account}/{path}" + "".join(f"\n{k}:{v}" for k, v in sorted(query.items()))
        to_sign = "\n".join([method, "", "", length, "", content_type, "", "", "", "", "", ""]) + "\n" + canonical_headers + resource
        signature = base64.b64encode(hmac.new(self.key, to_sign.encode(), hashlib.sha256).digest()).decode()
        headers["Authorization"] = f"SharedKey {self.account}:{signature}"
        if content_type:
            headers["Content-Type"] = content_type
        url = f"{self.base}/{urllib.parse.quote(path)}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url, data=body if method in ("PUT", "POST") else None,
                                         headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
        except urllib.error.HTTPError as error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()

    def create_container(self, container, public_blobs=False):
        """A container; `public_blobs`: its blobs readable by anyone (not its listing)."""
        ms_headers = {"x-ms-blob-public-access": "blob"} if public_blobs else {}
        status, _, body = self.request("PUT", container, {"restype": "container"}, ms_headers=ms_headers)
        assert status == 201, f"create container {container}: {status} {body[:300]!r}"

    def list(self, container, prefix):
        """{name: properties (Content-Type, Cache-Control, Content-Length, ...)} under prefix."""
        blobs, marker = {}, None
        while True:
            query = {"restype": "container", "comp": "list", "prefix": prefix}
            if marker:
                query["marker"] = marker
            status, _, body = self.request("GET", container, query)
            assert status == 200, f"list {container}/{prefix}: {status} {body[:300]!r}"
            root = ET.fromstring(body)
            for blob in root.iter("Blob"):
                properties = {p.tag: p.text for p in blob.find("Properties")}
                blobs[blob.findtext("Name")] = properties
            marker = root.findtext("NextMarker")
            if not marker:
                return blobs

    def get(self, container, name):
        return self.request("GET", f"{container}/{name}")
