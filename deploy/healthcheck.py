"""The images' health check: ask the process's own gRPC health service on loopback.

Exit 0 when it answers SERVING for the whole server (service name ""), 1 otherwise,
as Docker's HEALTHCHECK expects. Asks TABLETOP_HEALTH_PORT (the plaintext health-only
listener) when it is set, else TABLETOP_PORT, which every image sets: a process serving
TLS on its gRPC port needs TABLETOP_HEALTH_PORT for this check to see it.
"""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main() -> int:
    port = os.environ.get("TABLETOP_HEALTH_PORT", "0").strip()
    if port in ("", "0"):
        port = os.environ.get("TABLETOP_PORT", "")
    service = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            check = stub.Check  # type: ignore[attr-defined]  # HealthStub's stub lacks its methods
            reply = check(health_pb2.HealthCheckRequest(service=service), timeout=2)
    except grpc.RpcError as error:
        print(f"unhealthy: {error.code().name}", file=sys.stderr)
        return 1
    serving = reply.status == health_pb2.HealthCheckResponse.SERVING
    print(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
    return 0 if serving else 1


if __name__ == "__main__":
    sys.exit(main())
