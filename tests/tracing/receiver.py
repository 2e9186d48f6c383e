"""An OTLP/gRPC trace receiver in the test's process: what a collector would be sent."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass(frozen=True)
class Received:
    """One span as the collector got it, with its service's name."""

    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, object]
    status: int  # 0 unset, 1 ok, 2 error
    status_message: str


def _value(any_value) -> object:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


@dataclass
class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    spans: list[Received] = field(default_factory=list)
    exports: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def Export(self, request, context):  # the proto's name
        got = []
        for resource_spans in request.resource_spans:
            attributes = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            service = str(attributes.get("service.name", ""))
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    got.append(
                        Received(
                            service=service,
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            status=span.status.code,
                            status_message=span.status.message,
                        )
                    )
        with self.lock:
            self.spans.extend(got)
            self.exports += 1
        return trace_service_pb2.ExportTraceServiceResponse()

    def snapshot(self) -> list[Received]:
        with self.lock:
            return list(self.spans)

    def wait_for(self, found: Callable[[list[Received]], object], timeout: float = 30) -> object:
        """Wait until ``found(spans)`` is truthy; return it (fail after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = found(self.snapshot())
            if result:
                return result
            time.sleep(0.1)
        spans = "\n".join(f"  {s.service} {s.name} {s.trace_id}" for s in self.snapshot())
        raise AssertionError(f"not received in {timeout} s; received:\n{spans}")


def trace_of(spans: list[Received], trace_id: str) -> list[Received]:
    return [s for s in spans if s.trace_id == trace_id]


def by_name(spans: list[Received], name: str) -> list[Received]:
    return [s for s in spans if s.name == name]


@contextlib.contextmanager
def receiving() -> Iterator[tuple[Receiver, str]]:
    """A receiver serving on a free loopback port; yields it and its ``http://`` endpoint."""
    receiver = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(receiver, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield receiver, f"http://127.0.0.1:{port}"
    finally:
        server.stop(0)
