"""gRPC-Web spoken by hand, over HTTP/1.1 (http.client) and HTTP/2 (python-hyper's h2), as
a browser's connect-web does: a POST with content-type application/grpc-web+proto whose
body is length-prefixed messages, answered by messages and a last frame (flag 0x80)
holding the trailers as text. Nothing here is the project's code: it checks the gateway
from outside.
"""

from __future__ import annotations

import base64
import http.client
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events
from google.rpc import error_details_pb2, status_pb2

CONTENT_TYPE = "application/grpc-web+proto"
TRAILER = 0x80


def frame(message: bytes, flags: int = 0) -> bytes:
    return struct.pack(">BI", flags, len(message)) + message


@dataclass
class Reply:
    status: int  # the HTTP status
    headers: dict[str, str]
    messages: list[bytes] = field(default_factory=list)
    trailers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def grpc(self, key: str) -> str | None:
        """A gRPC status field: from the trailer frame, or the headers (trailers-only)."""
        return self.trailers.get(key, self.headers.get(key))

    @property
    def code(self) -> int | None:
        value = self.grpc("grpc-status")
        return None if value is None else int(value)

    def error_info(self) -> error_details_pb2.ErrorInfo | None:
        raw = self.grpc("grpc-status-details-bin")
        if not raw:
            return None
        status = status_pb2.Status.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                return info
        return None


class Frames:
    """Splits a gRPC-Web response body into messages and trailers as bytes arrive."""

    def __init__(self) -> None:
        self.buffer = b""
        self.messages: list[bytes] = []
        self.trailers: dict[str, str] = {}
        self.ended = False

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= 5:
            flags, length = struct.unpack(">BI", self.buffer[:5])
            if len(self.buffer) < 5 + length:
                return
            payload, self.buffer = self.buffer[5 : 5 + length], self.buffer[5 + length :]
            if flags & TRAILER:
                for line in payload.decode().split("\r\n"):
                    if ":" in line:
                        key, _, value = line.partition(":")
                        self.trailers[key.strip().lower()] = value.strip()
                self.ended = True
            else:
                self.messages.append(payload)


def headers_for(origin: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    headers = {"content-type": CONTENT_TYPE, "x-grpc-web": "1", "x-user-agent": "grpc-web-test"}
    if origin:
        headers["origin"] = origin
    return {**headers, **(extra or {})}


def http1(
    port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
    source: str = "",
) -> Reply:  # fmt: skip
    """One HTTP/1.1 request; the whole reply, its gRPC-Web frames split out."""
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=15, source_address=(source, 0) if source else None
    )
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        response = conn.getresponse()
        raw = response.read()
        reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body=raw)
    finally:
        conn.close()
    if reply.headers.get("content-type", "").startswith("application/grpc-web"):
        frames = Frames()
        frames.feed(raw)
        reply.messages, reply.trailers = frames.messages, frames.trailers
    return reply


def http1_stream(
    port: int, path: str, body: bytes, headers: dict[str, str]
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, Iterator[bytes]]:
    """A streaming call over HTTP/1.1: each message as it arrives (a chunked body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()

    def messages() -> Iterator[bytes]:
        frames = Frames()
        while not frames.ended:
            data = response.read1(65536)
            if not data:
                return
            frames.feed(data)
            while frames.messages:
                yield frames.messages.pop(0)

    return conn, response, messages()


class H2:
    """One HTTP/2 connection (prior knowledge, as h2c) and its calls, one at a time."""

    def __init__(self, port: int, source: str = "") -> None:
        self.sock = socket.create_connection(
            ("127.0.0.1", port), 15, (source, 0) if source else None
        )
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        )
        self.conn.initiate_connection()
        self.port = port
        self.lock = threading.Lock()
        self._send()

    def _send(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def close(self) -> None:
        self.sock.close()

    def start(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> int:
        stream = self.conn.get_next_available_stream_id()
        pseudo = [(":method", method), (":scheme", "http"), (":path", path),
                  (":authority", f"127.0.0.1:{self.port}")]  # fmt: skip
        self.conn.send_headers(stream, pseudo + list(headers.items()), end_stream=not body)
        if body:
            self.conn.send_data(stream, body, end_stream=True)
        self._send()
        return stream

    def events(self, stream: int) -> Iterator[h2.events.Event]:
        while True:
            data = self.sock.recv(65536)
            if not data:
                return
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
                if getattr(event, "stream_id", stream) == stream:
                    yield event
            self._send()

    def call(self, method: str, path: str, body: bytes = b"",
             headers: dict[str, str] | None = None) -> Reply:  # fmt: skip
        stream = self.start(method, path, body, headers or {})
        reply = Reply(0, {})
        frames = Frames()
        for event in self.events(stream):
            if isinstance(event, h2.events.ResponseReceived):
                reply.headers = {k: v for k, v in event.headers}
                reply.status = int(reply.headers[":status"])
            elif isinstance(event, h2.events.DataReceived):
                reply.body += event.data
                frames.feed(event.data)
            elif isinstance(event, h2.events.TrailersReceived):
                reply.trailers.update(dict(event.headers))
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                break
        reply.messages = frames.messages
        reply.trailers.update(frames.trailers)
        return reply

    def stream(self, path: str, body: bytes, headers: dict[str, str]) -> Iterator[bytes]:
        """A streaming call: each message as it arrives."""
        stream = self.start("POST", path, body, headers)
        frames = Frames()
        for event in self.events(stream):
            if isinstance(event, h2.events.DataReceived):
                frames.feed(event.data)
                while frames.messages:
                    yield frames.messages.pop(0)
            elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                return
