"""``python -m bench.echo``: a raw-bytes echo service, the ceiling of gRPC on this machine.

The same grpc.aio server setup as the game services, on the same event loop
(TABLETOP_EVENT_LOOP, as they read it), with a handler that returns the request's bytes:
no parsing, no work. Prints ``serving port=N`` when ready.
"""

from __future__ import annotations

import asyncio
import os
import signal

import grpc

from services.kit.server import loop_factory

METHOD = "/tabletop.bench.v1.EchoService/Echo"


async def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


async def main() -> None:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "tabletop.bench.v1.EchoService",
                {"Echo": grpc.unary_unary_rpc_method_handler(_echo)},
            )
        ]
    )
    port = server.add_insecure_port(f"127.0.0.1:{os.environ.get('BENCH_PORT', '0')}")
    await server.start()
    print(f"serving port={port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(0)


if __name__ == "__main__":
    with asyncio.Runner(
        loop_factory=loop_factory(os.environ.get("TABLETOP_EVENT_LOOP", "auto"))
    ) as r:
        r.run(main())
