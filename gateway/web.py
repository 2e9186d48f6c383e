"""Browsers on the gateway's port: gRPC-Web, CORS, and a plain answer to what is not gRPC.

A browser cannot speak gRPC (it has no HTTP/2 trailers to read), so web pages call with
gRPC-Web, which Envoy's ``grpc_web`` filter turns into gRPC on the way in and back into
gRPC-Web on the way out: the services, the Python side, the limits and the access log see
an ordinary gRPC call. What this module adds to gateway.envoy's bootstrap:

- the listener accepts HTTP/1.1 as well as HTTP/2 (codec AUTO): a page served over plain
  http reaches the gateway over HTTP/1.1;
- CORS for the origins of ``TABLETOP_CORS_ORIGINS``: preflights answered by Envoy and
  cached by the browser, the headers a gRPC-Web client sends allowed, the status headers
  it reads exposed; never credentials (a seat's token travels in ``authorization``, not
  in a cookie), so ``*`` may allow every origin without letting a page act as its reader;
- a request that is not gRPC or gRPC-Web (a GET from a browser's address bar, the
  Connect protocol, JSON) is answered 415 with a text that says what the port speaks,
  instead of reaching a backend that cannot answer it.

The filters come first in the chain, so every reply, a local refusal of the rate limiter
included, goes back through them: in gRPC-Web framing and with its CORS headers.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from google.rpc import status_pb2

from services.kit import config

CORS = "envoy.filters.http.cors"
GRPC_WEB = "envoy.filters.http.grpc_web"
# What `make run` serves the web app on (services.run, TABLETOP_WEB_PORT).
WEB_PORT = 8080
DEFAULT_ORIGINS = (f"http://127.0.0.1:{WEB_PORT}", f"http://localhost:{WEB_PORT}")
# What connect-web's gRPC-Web transport sends (and the Connect protocol's, so a client
# that tries it is told why it failed rather than blocked by the preflight).
ALLOW_HEADERS = (
    "content-type", "x-grpc-web", "x-user-agent", "authorization", "grpc-timeout",
    "grpc-accept-encoding", "grpc-encoding", "connect-protocol-version",
    "connect-timeout-ms", "connect-accept-encoding", "connect-content-encoding",
    "x-request-id", "traceparent", "tracestate",
)  # fmt: skip
# What a gRPC-Web client reads from a reply: a browser hides every other header.
EXPOSE_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin")
# Seconds a browser may keep a preflight's answer (Chromium keeps at most 2 hours).
PREFLIGHT_MAX_AGE = 7200

_T = "type.googleapis.com/envoy."
SPEAKS = (
    "This port is Tabletop's gRPC gateway. It answers gRPC (content-type application/grpc) "
    "and gRPC-Web (application/grpc-web+proto or application/grpc-web-text, as sent by "
    "connect-web's createGrpcWebTransport or grpc-web), POSTed to /<package.Service>/<Method>."
)


def setting() -> config.Setting:
    return config.Setting(
        "cors_origins", "TABLETOP_CORS_ORIGINS", ",".join(DEFAULT_ORIGINS), "str",
        "origins whose web pages may call the gateway with gRPC-Web (comma-separated, "
        "scheme://host[:port] exactly as the browser sends it; '*': any origin; '': none)",
    )  # fmt: skip


def origins(text: str) -> tuple[str, ...]:
    """``TABLETOP_CORS_ORIGINS`` as a tuple of origins, each as a browser sends it."""
    found: list[str] = []
    for part in text.split(","):
        origin = part.strip().rstrip("/")
        if not origin:
            continue
        if origin != "*" and "://" not in origin:
            raise SystemExit(
                f"configuration error: TABLETOP_CORS_ORIGINS: {origin!r} is not an origin "
                "(scheme://host[:port], or *)"
            )
        if origin not in found:
            found.append(origin)
    return tuple(found)


def _typed(kind: str, **fields: Any) -> dict[str, Any]:
    return {"@type": _T + kind, **fields}


def filters() -> list[dict[str, Any]]:
    """The HTTP filters to put first in the gateway's chain: CORS, then gRPC-Web."""
    return [
        {"name": CORS, "typed_config": _typed("extensions.filters.http.cors.v3.Cors")},
        {
            "name": GRPC_WEB,
            "typed_config": _typed("extensions.filters.http.grpc_web.v3.GrpcWeb"),
        },
    ]


def cors_policy(allowed: Sequence[str]) -> dict[str, Any]:
    """The virtual host's per-filter configuration: the CORS policy for ``allowed``."""
    matchers = [{"safe_regex": {"regex": ".+"}} if o == "*" else {"exact": o} for o in allowed]
    # No origin allowed: a matcher nothing matches (an empty list would be refused).
    policy = _typed(
        "extensions.filters.http.cors.v3.CorsPolicy",
        allow_origin_string_match=matchers or [{"exact": "null-no-origin-allowed"}],
        allow_methods="POST, OPTIONS",
        allow_headers=", ".join(ALLOW_HEADERS),
        expose_headers=", ".join(EXPOSE_HEADERS),
        max_age=str(PREFLIGHT_MAX_AGE),
        allow_credentials=False,
        # A preflight from an origin not allowed is answered here (without the headers
        # that would allow it), never passed on to a backend.
        forward_not_matching_preflights=False,
    )
    return {CORS: policy}


def _refusal(headers: list[dict[str, Any]], message: str) -> dict[str, Any]:
    return {
        "match": {
            "prefix": "/",
            # A preflight is the CORS filter's to answer, on the route it asks about.
            "headers": [
                {"name": ":method", "string_match": {"exact": "OPTIONS"}, "invert_match": True},
                *headers,
            ],
        },
        "direct_response": {"status": 415, "body": {"inline_string": f"{message}\n{SPEAKS}\n"}},
        "response_headers_to_add": [
            {
                "header": {"key": "content-type", "value": "text/plain; charset=utf-8"},
                "append_action": "OVERWRITE_IF_EXISTS_OR_ADD",
            }
        ],
    }


def unroutable() -> list[dict[str, Any]]:
    """Routes to put before the games': what is not gRPC or gRPC-Web, answered 415 with
    the reason. ``application/grpc`` as a prefix matches gRPC-Web's types too."""
    content_type = "content-type"
    return [
        _refusal(
            [{"name": content_type, "present_match": False}],
            "the request has no content-type: it is not a gRPC or gRPC-Web call "
            "(a page to play in a browser is served by the web app, not by this port).",
        ),
        _refusal(
            [{"name": content_type, "string_match": {"prefix": "application/connect"}},],
            "the Connect protocol is not served here; use gRPC-Web.",
        ),
        _refusal(
            [
                {
                    "name": content_type,
                    "string_match": {"prefix": "application/grpc"},
                    "invert_match": True,
                }
            ],
            "this content-type is not gRPC or gRPC-Web (JSON and the Connect "
            "protocol's unary calls are not served here).",
        ),
    ]  # fmt: skip


def grpc_web_refusals(mappers: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The gateway's own refusals (gateway.envoy.refusals) as a gRPC-Web client reads them.

    Envoy answers a gRPC call it refuses itself in gRPC (HTTP 200, grpc-status), but a
    gRPC-Web one in plain HTTP (429, 503), which gRPC-Web clients read as UNAVAILABLE
    with no reason. Each mapper here, matched first, answers a gRPC-Web request (it
    carries x-grpc-web, as connect-web and grpc-web send it) with HTTP 200 and the code,
    message and ErrorInfo of the refusal it stands for."""
    twins: list[dict[str, Any]] = []
    for mapper in mappers:
        details = next(
            h["header"]["value"]
            for h in mapper["headers_to_add"]
            if h["header"]["key"] == "grpc-status-details-bin"
        )
        status = status_pb2.Status.FromString(base64.b64decode(details))
        twins.append(
            {
                **mapper,
                "filter": {
                    "and_filter": {
                        "filters": [
                            mapper["filter"],
                            {
                                "header_filter": {
                                    "header": {"name": "x-grpc-web", "present_match": True}
                                }
                            },
                        ]
                    }
                },
                "status_code": 200,
                "headers_to_add": [
                    *mapper["headers_to_add"],
                    _set("grpc-status", str(status.code)),
                    _set("grpc-message", status.message),
                    _set("content-type", "application/grpc-web+proto"),
                ],
                "body": {"inline_string": ""},
            }
        )
    return twins


def _set(key: str, value: str) -> dict[str, Any]:
    return {"header": {"key": key, "value": value}, "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}
