"""The web app's static files, as ``make run`` serves them: ``python web/serve.py``.

web/dist (``make web`` builds it) over plain HTTP from Python's own http.server, with
``config.json`` answered from the settings (where the page finds the gateway), hashed
files cached for good and the rest revalidated, and a Content-Security-Policy that lets
the page call its gateway and nothing else. Settings by environment, as every process of
the project (``--help``). In Kubernetes the same files are a web server's own.
"""

from __future__ import annotations

import http.server
import json
import re
import signal
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from services.kit import config, logs

DIST = Path(__file__).resolve().parent / "dist"
HASHED = re.compile(r"-[A-Z0-9]{8}\.(js|css|map)$")


def settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("host", "TABLETOP_WEB_HOST", "127.0.0.1", "str", "address the web app is served on"),
        S("port", "TABLETOP_WEB_PORT", "8080", "port", "the web app's port (0: a free one)"),
        S("gateway", "TABLETOP_WEB_GATEWAY", "", "str",
          "the gateway's URL as the browser reaches it, such as https://games.example.com "
          "('': the page's own host on TABLETOP_WEB_GATEWAY_PORT)"),
        S("gateway_port", "TABLETOP_WEB_GATEWAY_PORT", "50051", "port",
          "the gateway's port on the page's host, when TABLETOP_WEB_GATEWAY is empty"),
        S("dist", "TABLETOP_WEB_DIST", str(DIST), "str", "the built app (make web)"),
        S("log_format", "TABLETOP_LOG_FORMAT", "json", "str", "json or console"),
    ]  # fmt: skip


class Handler(http.server.SimpleHTTPRequestHandler):
    """Files of the build; config.json from the settings; quiet but for failures."""

    page_config: bytes = b"{}"
    policy: str = "default-src 'self'"
    server_version = "tabletop-web"
    sys_version = ""

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/config.json":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.page_config)))
            self.end_headers()
            self.wfile.write(self.page_config)
            return
        super().do_GET()

    def end_headers(self) -> None:
        path = self.path.split("?", 1)[0]
        # Hashed names never change content: cache them for good; the rest is revalidated.
        cache = "public, max-age=31536000, immutable" if HASHED.search(path) else "no-cache"
        self.send_header("Cache-Control", cache)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Content-Security-Policy", self.policy)
        super().end_headers()

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if str(int(code) if isinstance(code, int) else code)[:1] in ("4", "5"):
            super().log_request(code, size)

    def log_message(self, format: str, *args: Any) -> None:
        logs.get("web").info("request", line=format % args)


def content_policy(gateway: str, gateway_port: int) -> str:
    """Scripts and styles from the page's own origin; calls to it and the gateway only."""
    connect = gateway or f"http://*:{gateway_port} https://*:{gateway_port}"
    return (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        f"connect-src 'self' {connect}; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'"
    )


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    known = settings()
    if argv and argv[0] in ("-h", "--help"):
        print(config.help_text("python web/serve.py", "Serve the web app's files.", known))
        return
    try:
        cfg = config.load(known)
    except config.ConfigError as exc:
        sys.exit(f"configuration error: {exc}")
    logs.configure("info", cfg.log_format)
    log = logs.get("web")
    dist = Path(cfg.dist)
    if not (dist / "index.html").exists():
        sys.exit(f"{dist}/index.html is missing: build the web app first (make web)")
    page: dict[str, Any] = {"gatewayPort": cfg.gateway_port}
    if cfg.gateway:
        page["gateway"] = cfg.gateway
    handler = type(
        "PageHandler",
        (Handler,),
        {
            "page_config": json.dumps(page).encode(),
            "policy": content_policy(cfg.gateway, cfg.gateway_port),
            "extensions_map": {
                **Handler.extensions_map,
                ".js": "text/javascript",
                ".map": "application/json",
            },
        },
    )
    server = http.server.ThreadingHTTPServer(
        (cfg.host, cfg.port), partial(handler, directory=str(dist))
    )
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    port = server.server_address[1]
    log.info("serving", port=port, url=f"http://{cfg.host}:{port}", dist=str(dist))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
