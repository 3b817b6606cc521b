"""What the Python share tests (proxy_s3.py, azure.py) have in common: the binary under test, a
failing check, and a running `tlparse-build proxy`."""

import atexit
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request

BINARY = os.environ["TLPARSE_BUILD"]
TIMEOUT = 30


def check(condition, message):
    if not condition:
        sys.exit(f"FAIL: {message}")


class Proxy:
    """A running `tlparse-build proxy` on a free port, its URL read from its first line of output;
    killed at exit, also when a check fails."""

    def __init__(self, upstream, allowed_origin, *extra, env=None):
        self.process = subprocess.Popen(
            [BINARY, "proxy", upstream, "--allow-origin", allowed_origin, "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        atexit.register(self.process.kill)
        self.output, url_lines, ready = [], [], threading.Event()

        def read_stdout():
            for line in self.process.stdout:
                self.output.append(line)
                if " at http://" in line:
                    url_lines.append(line)
                    ready.set()
            ready.set()

        threading.Thread(target=read_stdout, daemon=True).start()
        threading.Thread(target=lambda: self.output.extend(self.process.stderr), daemon=True).start()
        check(ready.wait(60) and url_lines, f"no URL from the proxy: {self.output}")
        self.url = url_lines[0].split(" at ")[1].split(" ")[0].rstrip("/")

    def get(self, path, headers=None, method="GET"):
        """(status, headers with lower-case names, body) of a request to the proxy."""
        request = urllib.request.Request(self.url + path, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
        except urllib.error.HTTPError as error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()

    def stop(self):
        """Kills the proxy; everything it printed."""
        self.process.kill()
        self.process.wait(timeout=TIMEOUT)
        return "".join(self.output)
