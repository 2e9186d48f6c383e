"""The server interceptor (services/kit/interceptor.py) wraps every handler shape grpc.aio
accepts in its own shape: each call below is answered and counted OK with its grpc_type
and its messages, whatever way its handler is written. The control is an interceptor that
wraps every streamed response as an async generator, as this one once did: the health
service's Watch (a coroutine writing with context.write) then fails with UNKNOWN."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import CollectorRegistry

from services.kit.interceptor import ObservingInterceptor, replace_behaviour
from services.kit.metrics import RpcMetrics

SERVICE = "test.shapes.v1.Shapes"


async def unary(request, context):
    return request


async def server_generator(request, context):
    yield request
    yield request


async def server_writer(request, context):
    await context.write(request)
    await context.write(request)


def server_plain_generator(request, context):
    yield request
    yield request


async def client_stream(requests, context):
    return b"".join([r async for r in requests])


async def client_reader(requests, context):
    parts = []
    while (message := await context.read()) is not grpc.aio.EOF:
        parts.append(message)
    return b"".join(parts)


async def bidi_generator(requests, context):
    async for message in requests:
        yield message


async def bidi_writer(requests, context):
    while (message := await context.read()) is not grpc.aio.EOF:
        await context.write(message)


# method: (handler factory, grpc_type, messages received, messages sent) for 2 requests
SHAPES = {
    "Unary": (grpc.unary_unary_rpc_method_handler, unary, "unary", 1, 1),
    "ServerGenerator": (
        grpc.unary_stream_rpc_method_handler, server_generator, "server_stream", 1, 2,
    ),
    "ServerWriter": (grpc.unary_stream_rpc_method_handler, server_writer, "server_stream", 1, 2),
    "ServerPlainGenerator": (
        grpc.unary_stream_rpc_method_handler, server_plain_generator, "server_stream", 1, 2,
    ),
    "ClientStream": (grpc.stream_unary_rpc_method_handler, client_stream, "client_stream", 2, 1),
    "ClientReader": (grpc.stream_unary_rpc_method_handler, client_reader, "client_stream", 2, 1),
    "BidiGenerator": (grpc.stream_stream_rpc_method_handler, bidi_generator, "bidi_stream", 2, 2),
    "BidiWriter": (grpc.stream_stream_rpc_method_handler, bidi_writer, "bidi_stream", 2, 2),
}  # fmt: skip


class AlwaysAGenerator(grpc.aio.ServerInterceptor):
    """The control: every streamed response wrapped as an async generator."""

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        if handler is None or not handler.response_streaming or handler.request_streaming:
            return handler
        inner = handler.unary_stream

        async def wrapped(request, context) -> AsyncIterator[bytes]:
            async for response in inner(request, context):
                yield response

        return replace_behaviour(handler, unary_stream=wrapped)


@contextlib.asynccontextmanager
async def server(interceptor: grpc.aio.ServerInterceptor):
    handlers = {name: factory(fn) for name, (factory, fn, *_) in SHAPES.items()}
    srv = grpc.aio.server(interceptors=[interceptor])
    srv.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])
    port = srv.add_insecure_port("127.0.0.1:0")
    await srv.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield channel
    finally:
        await srv.stop(0)


async def call(channel: grpc.aio.Channel, method: str) -> list[bytes]:
    grpc_type = SHAPES[method][2]
    path = f"/{SERVICE}/{method}"
    requests = [b"a", b"b"]
    if grpc_type == "unary":
        return [await channel.unary_unary(path)(requests[0])]
    if grpc_type == "server_stream":
        return [r async for r in channel.unary_stream(path)(requests[0])]
    if grpc_type == "client_stream":
        return [await channel.stream_unary(path)(iter(requests))]
    return [r async for r in channel.stream_stream(path)(iter(requests))]


@pytest.mark.parametrize("method", SHAPES)
async def test_every_handler_shape_is_answered_and_counted_as_its_type(method):
    registry_ = CollectorRegistry()
    metrics = RpcMetrics("server", registry_)
    async with server(ObservingInterceptor(metrics, access_log=False)) as channel:
        answers = await call(channel, method)
    *_, grpc_type, received, sent = SHAPES[method]
    assert len(answers) == sent and all(answers), answers
    labels = {"grpc_type": grpc_type, "grpc_service": SERVICE, "grpc_method": method}
    sample = registry_.get_sample_value
    assert sample("grpc_server_started_total", labels) == 1
    assert sample("grpc_server_handled_total", {**labels, "grpc_code": "OK"}) == 1
    assert sample("grpc_server_msg_received_total", labels) == received
    assert sample("grpc_server_msg_sent_total", labels) == sent
    assert sample("grpc_server_handling_seconds_count", labels) == 1


# The control's wrapper calls the writer without awaiting it: that is the bug it shows.
@pytest.mark.filterwarnings("ignore:coroutine 'server_writer' was never awaited")
async def test_control_a_generator_wrapper_breaks_a_writer_handler():
    async with server(AlwaysAGenerator()) as channel:
        assert len(await call(channel, "ServerGenerator")) == 2
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(channel, "ServerWriter")
    assert caught.value.code() == grpc.StatusCode.UNKNOWN
