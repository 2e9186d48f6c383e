"""The web image's health check: nginx answers /healthz on its own port.

Exit 0 when ``GET /healthz`` answers 200, 1 otherwise, as Docker's HEALTHCHECK expects.
Python's standard library only (the image holds nginx and the base's python3).
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def main() -> int:
    port = os.environ.get("TABLETOP_WEB_PORT", "8080")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as reply:
            status = reply.status
    except (OSError, urllib.error.URLError) as error:
        print(f"unhealthy: {error}", file=sys.stderr)
        return 1
    print("healthy" if status == 200 else f"unhealthy: HTTP {status}")
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
