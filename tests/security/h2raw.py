"""A bare HTTP/2 gRPC client for tests: it can stop reading a stream (a window of 0).

grpc's own clients always open their windows; a client that stops reading, as a hostile
or a frozen one does, needs HTTP/2 spoken by hand. This one sends one unary-stream call
per connection with SETTINGS_INITIAL_WINDOW_SIZE = ``window`` (0 by default) and never
opens it further, so the server can send headers and at most ``window`` bytes of messages
until :meth:`RawCall.resume` opens it wide; meanwhile it answers SETTINGS
and PING like any live peer (it stalls, it is not dead). It advertises grpc's "true
binary metadata" setting; a server (or Envoy) that sends them base64-coded anyway is read
too (:meth:`RawCall.trailer`). HPACK is python-hyper's ``hpack``.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = (
    0, 1, 3, 4, 6, 7, 8, 9,
)  # fmt: skip
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
SETTINGS_ENABLE_PUSH, SETTINGS_INITIAL_WINDOW_SIZE = 0x2, 0x4
GRPC_ALLOW_TRUE_BINARY_METADATA = 0xFE03


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


@dataclass
class RawCall:
    """One server-streaming call on its own connection, its window closed until resumed."""

    host: str
    port: int
    path: str
    request: bytes
    metadata: list[tuple[str, str]] = field(default_factory=list)
    window: int = 0  # bytes of messages the server may send before the client stalls
    source: str = ""  # the local address to call from ('': the system's choice)
    data: bytearray = field(default_factory=bytearray)
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    trailers: list[tuple[str, bytes]] = field(default_factory=list)
    reset: int | None = None
    closed: bool = False

    def start(self) -> RawCall:
        source = (self.source, 0) if self.source else None
        self._sock = socket.create_connection((self.host, self.port), 10, source)
        self._sock.settimeout(None)
        self._lock = threading.Lock()
        self._decoder = hpack.Decoder()
        self._done = threading.Event()
        settings = struct.pack(">HI", SETTINGS_ENABLE_PUSH, 0)
        settings += struct.pack(">HI", SETTINGS_INITIAL_WINDOW_SIZE, self.window)
        settings += struct.pack(">HI", GRPC_ALLOW_TRUE_BINARY_METADATA, 1)
        block = hpack.Encoder().encode(
            [
                (":method", "POST"),
                (":scheme", "http"),
                (":path", self.path),
                (":authority", f"{self.host}:{self.port}"),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
                *self.metadata,
            ]
        )
        message = b"\x00" + struct.pack(">I", len(self.request)) + self.request
        self._send(
            PREFACE
            + frame(SETTINGS, 0, 0, settings)
            + frame(HEADERS, END_HEADERS, 1, block)
            + frame(DATA, END_STREAM, 1, message)
        )
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        return self

    def _send(self, data: bytes) -> None:
        with self._lock:
            self._sock.sendall(data)

    def _recv(self, size: int) -> bytes:
        out = bytearray()
        while len(out) < size:
            chunk = self._sock.recv(size - len(out))
            if not chunk:
                raise ConnectionError("closed")
            out += chunk
        return bytes(out)

    def _read_loop(self) -> None:
        try:
            while True:
                head = self._recv(9)
                size = int.from_bytes(head[:3], "big")
                kind, flags = head[3], head[4]
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                payload = self._recv(size)
                if kind == SETTINGS and not flags & ACK:
                    self._send(frame(SETTINGS, ACK, 0))
                elif kind == PING and not flags & ACK:
                    self._send(frame(PING, ACK, 0, payload))
                elif kind == GOAWAY:
                    break
                elif stream == 1:
                    self._on_stream(kind, flags, payload)
                    if flags & END_STREAM or kind == RST_STREAM:
                        break
        except (ConnectionError, OSError):
            pass
        finally:
            self.closed = True
            self._done.set()

    def _on_stream(self, kind: int, flags: int, payload: bytes) -> None:
        if flags & PADDED and kind in (DATA, HEADERS):
            payload = payload[1 : len(payload) - payload[0]]
        if kind == HEADERS:
            if flags & PRIORITY:
                payload = payload[5:]
            decoded = [(k.decode(), v) for k, v in self._decoder.decode(payload, raw=True)]
            (self.trailers if self.headers else self.headers).extend(decoded)
            if flags & END_STREAM and not self.trailers:
                self.trailers.extend(decoded)  # trailers only
        elif kind == DATA:
            self.data += payload
        elif kind == RST_STREAM:
            self.reset = int.from_bytes(payload[:4], "big")

    def resume(self) -> None:
        """Open the stream's and the connection's windows wide: read everything now.

        The connection's by a WINDOW_UPDATE, the stream's by the initial window alone: both
        together would take it past 2^31-1, which a strict peer (Envoy) answers with
        FLOW_CONTROL_ERROR."""
        increment = struct.pack(">I", 0x7FFFFFFF - 65535)
        self._send(frame(WINDOW_UPDATE, 0, 0, increment))
        settings = struct.pack(">HI", SETTINGS_INITIAL_WINDOW_SIZE, 0x7FFFFFFF)
        self._send(frame(SETTINGS, 0, 0, settings))

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def messages(self) -> list[bytes]:
        out, pos = [], 0
        while pos + 5 <= len(self.data):
            size = int.from_bytes(self.data[pos + 1 : pos + 5], "big")
            if pos + 5 + size > len(self.data):
                break
            out.append(bytes(self.data[pos + 5 : pos + 5 + size]))
            pos += 5 + size
        return out

    def trailer(self, name: str) -> bytes | None:
        """A trailer's value; a binary one (``-bin``) decoded from base64 unless the
        server sent it as true binary (a leading NUL byte, kept)."""
        for key, value in self.trailers:
            if key == name:
                if name.endswith("-bin") and value[:1] != b"\x00":
                    return base64.b64decode(value + b"=" * (-len(value) % 4))
                return value
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()


def wait_all(calls: list[RawCall], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    return all(call.wait(max(0.0, deadline - time.monotonic())) for call in calls)
