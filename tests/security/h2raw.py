"""A bare HTTP/2 gRPC client for tests: it can stop reading a stream (a window of 0).

grpc's own clients always open their windows; a client that stops reading, as a hostile
or a frozen one does, needs HTTP/2 spoken by hand. This one sends one unary-stream call
per connection with SETTINGS_INITIAL_WINDOW_SIZE = ``window`` (0 by default) and never
opens it further, so the server can send headers and at most ``window`` bytes of messages
until :meth:`RawCall.resume` opens it wide; meanwhile it answers SETTINGS
and PING like any live peer (it stalls, it is not dead). It advertises grpc's "true
binary metadata" setting, so the server sends binary trailers without base64 or Huffman
coding and the small HPACK decoder here can read them.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = (
    0, 1, 3, 4, 6, 7, 8, 9,
)  # fmt: skip
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
SETTINGS_ENABLE_PUSH, SETTINGS_INITIAL_WINDOW_SIZE = 0x2, 0x4
GRPC_ALLOW_TRUE_BINARY_METADATA = 0xFE03

# RFC 7541 appendix A.
STATIC_TABLE: list[tuple[str, str]] = [
    (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"),
    (":path", "/index.html"), (":scheme", "http"), (":scheme", "https"), (":status", "200"),
    (":status", "204"), (":status", "206"), (":status", "304"), (":status", "400"),
    (":status", "404"), (":status", "500"), ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""),
    ("accept", ""), ("access-control-allow-origin", ""), ("age", ""), ("allow", ""),
    ("authorization", ""), ("cache-control", ""), ("content-disposition", ""),
    ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
    ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""),
    ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
    ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
    ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""),
    ("max-forwards", ""), ("proxy-authenticate", ""), ("proxy-authorization", ""),
    ("range", ""), ("referer", ""), ("refresh", ""), ("retry-after", ""), ("server", ""),
    ("set-cookie", ""), ("strict-transport-security", ""), ("transfer-encoding", ""),
    ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
]  # fmt: skip


def _int(value: int, prefix_bits: int, first: int) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_headers(headers: list[tuple[str, str]]) -> bytes:
    """Literal header fields without indexing, strings without Huffman coding."""
    out = bytearray()
    for name, value in headers:
        out += b"\x00" + _int(len(name), 7, 0) + name.encode()
        out += _int(len(value), 7, 0) + value.encode()
    return bytes(out)


class Decoder:
    """HPACK decoding without Huffman (the server sends none to this client's headers)."""

    def __init__(self) -> None:
        self.dynamic: list[tuple[str, bytes]] = []

    def _entry(self, index: int) -> tuple[str, bytes]:
        if index <= len(STATIC_TABLE):
            name, value = STATIC_TABLE[index - 1]
            return name, value.encode()
        return self.dynamic[index - len(STATIC_TABLE) - 1]

    @staticmethod
    def _read_int(data: bytes, pos: int, prefix_bits: int) -> tuple[int, int]:
        limit = (1 << prefix_bits) - 1
        value = data[pos] & limit
        pos += 1
        if value < limit:
            return value, pos
        shift = 0
        while True:
            byte = data[pos]
            pos += 1
            value += (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value, pos

    def _read_str(self, data: bytes, pos: int) -> tuple[bytes, int]:
        huffman = data[pos] & 0x80
        size, pos = self._read_int(data, pos, 7)
        if huffman:
            raise ValueError("Huffman-coded string: not expected from a gRPC server here")
        return data[pos : pos + size], pos + size

    def decode(self, data: bytes) -> list[tuple[str, bytes]]:
        headers: list[tuple[str, bytes]] = []
        pos = 0
        while pos < len(data):
            byte = data[pos]
            if byte & 0x80:  # indexed
                index, pos = self._read_int(data, pos, 7)
                headers.append(self._entry(index))
                continue
            if byte & 0xE0 == 0x20:  # dynamic table size update
                _, pos = self._read_int(data, pos, 5)
                continue
            indexing = byte & 0xC0 == 0x40
            index, pos = self._read_int(data, pos, 6 if indexing else 4)
            if index:
                name = self._entry(index)[0]
            else:
                raw, pos = self._read_str(data, pos)
                name = raw.decode()
            value, pos = self._read_str(data, pos)
            headers.append((name, value))
            if indexing:
                self.dynamic.insert(0, (name, value))
        return headers


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
    data: bytearray = field(default_factory=bytearray)
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    trailers: list[tuple[str, bytes]] = field(default_factory=list)
    reset: int | None = None
    closed: bool = False

    def start(self) -> RawCall:
        self._sock = socket.create_connection((self.host, self.port), timeout=10)
        self._sock.settimeout(None)
        self._lock = threading.Lock()
        self._decoder = Decoder()
        self._done = threading.Event()
        settings = struct.pack(">HI", SETTINGS_ENABLE_PUSH, 0)
        settings += struct.pack(">HI", SETTINGS_INITIAL_WINDOW_SIZE, self.window)
        settings += struct.pack(">HI", GRPC_ALLOW_TRUE_BINARY_METADATA, 1)
        block = encode_headers(
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
            decoded = self._decoder.decode(payload)
            (self.trailers if self.headers else self.headers).extend(decoded)
            if flags & END_STREAM and not self.trailers:
                self.trailers.extend(decoded)  # trailers only
        elif kind == DATA:
            self.data += payload
        elif kind == RST_STREAM:
            self.reset = int.from_bytes(payload[:4], "big")

    def resume(self) -> None:
        """Open the stream's and the connection's windows wide: read everything now."""
        increment = struct.pack(">I", 0x7FFFFFFF - 65535)
        self._send(frame(WINDOW_UPDATE, 0, 0, increment) + frame(WINDOW_UPDATE, 0, 1, increment))
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
        for key, value in self.trailers:
            if key == name:
                return value
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()


def wait_all(calls: list[RawCall], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    return all(call.wait(max(0.0, deadline - time.monotonic())) for call in calls)
