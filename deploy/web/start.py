"""The web app's image: write nginx's configuration and config.json from the settings,
then become nginx (``exec``: it is PID 1 and gets the container's signals itself).

The settings are web/serve.py's (``make run``'s static server), so the page finds the
gateway the same way everywhere: ``config.json`` holds ``{"gatewayPort": N}`` and, when
set, ``{"gateway": URL}``; the Content-Security-Policy lets the page call that gateway
and nothing else. Python's standard library only: the image holds Debian's nginx and
the base's python3, not the project's code. ``--help`` lists the settings.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "nginx.conf"
NGINX = "/usr/sbin/nginx"
# (variable, default, meaning): TABLETOP_WEB_GATEWAY* as web/serve.py reads them.
SETTINGS = (
    ("TABLETOP_WEB_HOST", "0.0.0.0", "address nginx listens on"),
    ("TABLETOP_WEB_PORT", "8080", "port nginx listens on (not root: above 1023)"),
    ("TABLETOP_WEB_GATEWAY", "",
     "the gateway's URL as the browser reaches it, such as https://games.example.com "
     "('': the page's own host on TABLETOP_WEB_GATEWAY_PORT)"),
    ("TABLETOP_WEB_GATEWAY_PORT", "50051",
     "the gateway's port on the page's host, when TABLETOP_WEB_GATEWAY is empty "
     "(443: the page's own origin behind an HTTPS edge that routes gRPC-Web there)"),
    ("TABLETOP_WEB_RUN_DIR", "/tmp/tabletop-web",
     "where nginx's configuration, pid and temporary files are written (writable)"),
)  # fmt: skip
# A URL that can go into nginx's configuration and a header as it is: no quotes, spaces,
# semicolons or braces, no path.
URL = re.compile(
    r"^https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?/?$|^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?/?$"
)


class SettingError(ValueError):
    """A setting that cannot be used, with the variable's name and why."""


def _port(name: str, text: str, low: int = 1) -> int:
    if not text.strip().isdigit() or not low <= int(text) <= 65535:
        raise SettingError(f"{name}={text!r}: a port number ({low}-65535)")
    return int(text)


def settings(environ: Mapping[str, str]) -> dict[str, str]:
    """Each setting's value: the environment's, else its default."""
    return {name: environ.get(name, default) for name, default, _ in SETTINGS}


def page_config(gateway: str, gateway_port: int) -> dict[str, object]:
    """config.json: what web/src/api.ts reads (and web/serve.py answers)."""
    page: dict[str, object] = {"gatewayPort": gateway_port}
    if gateway:
        page["gateway"] = gateway
    return page


def content_policy(gateway: str, gateway_port: int) -> str:
    """Scripts and styles from the page's own origin; calls to it and the gateway only
    (web/serve.py's content_policy: tests/containers checks the two agree)."""
    connect = gateway or f"http://*:{gateway_port} https://*:{gateway_port}"
    return (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        f"connect-src 'self' {connect}; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'"
    )


def headers(policy: str) -> str:
    """Every file's headers (an nginx snippet each location includes: a location that adds
    a header of its own inherits none from its server)."""
    found = {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
    }
    return "".join(f'add_header {name} "{value}" always;\n' for name, value in found.items())


def render(environ: Mapping[str, str]) -> dict[str, str]:
    """The files to write under the run folder: nginx.conf, headers.conf, config.json."""
    cfg = settings(environ)
    port = _port("TABLETOP_WEB_PORT", cfg["TABLETOP_WEB_PORT"], low=1024)
    gateway_port = _port("TABLETOP_WEB_GATEWAY_PORT", cfg["TABLETOP_WEB_GATEWAY_PORT"])
    gateway = cfg["TABLETOP_WEB_GATEWAY"].strip().rstrip("/")
    if gateway and not URL.match(gateway):
        raise SettingError(
            f"TABLETOP_WEB_GATEWAY={gateway!r}: a URL such as https://games.example.com "
            "(scheme and host, an optional port, no path)"
        )
    host = cfg["TABLETOP_WEB_HOST"].strip()
    if not re.fullmatch(r"[0-9.]+|\[[0-9A-Fa-f:]+\]|[A-Za-z0-9.\-]+", host):
        raise SettingError(f"TABLETOP_WEB_HOST={host!r}: an address")
    run = cfg["TABLETOP_WEB_RUN_DIR"]
    if not run.startswith("/") or re.search(r"[\s;{}\"']", run):
        raise SettingError(f"TABLETOP_WEB_RUN_DIR={run!r}: an absolute path")
    listen = f"{port}" if host in ("0.0.0.0", "") else f"{host}:{port}"
    conf = TEMPLATE.read_text()
    for marker, value in (("@@RUN@@", run.rstrip("/")), ("@@LISTEN@@", listen)):
        conf = conf.replace(marker, value)
    if re.search(r"@@[A-Z]+@@", conf):
        raise SettingError(f"{TEMPLATE}: a marker was left unfilled")
    return {
        "nginx.conf": conf,
        "headers.conf": headers(content_policy(gateway, gateway_port)),
        "config.json": json.dumps(page_config(gateway, gateway_port)) + "\n",
    }


def help_text() -> str:
    lines = ["usage: docker run tabletop-web  (nginx serving the web app)", "", "settings:"]
    for name, default, meaning in SETTINGS:
        lines.append(f"  {name} (default {default!r}): {meaning}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(help_text())
        return
    try:
        files = render(os.environ)
    except SettingError as exc:
        sys.exit(f"configuration error: {exc}")
    run = Path(settings(os.environ)["TABLETOP_WEB_RUN_DIR"])
    run.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (run / name).write_text(text)
    conf = str(run / "nginx.conf")
    page = json.loads(files["config.json"])
    print(json.dumps({"event": "starting", "logger": "web", "config": page}), flush=True)
    # -e: the error log from the first moment (before the configuration is read, nginx
    # would try its compiled-in /var/log/nginx/error.log, on a read-only filesystem).
    command = [NGINX, "-e", "stderr", "-c", conf, "-g", "daemon off;"]
    os.execv(NGINX, command)


if __name__ == "__main__":
    main()
