"""The judged client's side of issue 28: a gateway in front of Channeling's replicas,
and a client that knows only the gateway's address and what its reflection says
(JSON bodies, ``authorization: Bearer <guest token>``), never the generated code."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format, message_factory

from services import registry
from tests.gateway.test_tables_reflection import ReflectedClient
from tests.players.stack import GUEST_ISSUER
from tests.support import ROOT, Process, free_port, start_process, wait_serving

CHANNELING = "tabletop.channeling.v1.ChannelingService"
PLAYERS = "tabletop.gateway.v1.PlayersService"
# A rated table needs a clock that forfeits; a minute a decision never runs out here.
FORFEIT = {"perDecision": "60s", "onTimeout": "TIMEOUT_ACTION_FORFEIT"}
RETRIED = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
# Calls retried, by status code: what a test's faults made its clients do.
RETRIES: Counter[str] = Counter()

# Every guest of a test comes from one loopback address, where a deployment's come from
# as many addresses as players: the gateway's per-address limits are raised to that.
ONE_ADDRESS_FOR_ALL = {
    "TABLETOP_GUEST_SIGNINS_PER_CLIENT": "1000",
    "TABLETOP_RATE_PER_CLIENT": "5000",
    "TABLETOP_STREAMS_PER_CLIENT": "1000",
}


class Reflected(ReflectedClient):
    """A ReflectedClient whose every method's messages are made once, up front, so that
    threads can share it; with server streams, and a deadline per call."""

    def __init__(self, address: str, service: str) -> None:
        super().__init__(address, service)
        self.types: dict[str, tuple[Any, Any]] = {
            m.name: (
                message_factory.GetMessageClass(m.input_type),
                message_factory.GetMessageClass(m.output_type),
            )
            for m in self.service.methods
        }

    def _stub(self, method: str, kind: Callable[..., Any]) -> tuple[Any, Callable[[dict], Any]]:
        """The method's callable of ``kind`` (unary_unary, unary_stream), and how to build
        its request from a JSON-like dict."""
        request, response = self.types[method]
        stub = kind(
            f"/{self.service.full_name}/{method}",
            request_serializer=request.SerializeToString,
            response_deserializer=response.FromString,
        )
        return stub, lambda body: json_format.ParseDict(body, request())

    def call(
        self, method: str, body: dict[str, Any], token: str | None = None, timeout: float = 15
    ) -> dict[str, Any]:
        stub, request = self._stub(method, self.channel.unary_unary)
        reply = stub(request(body), metadata=_bearer(token), timeout=timeout)
        return json_format.MessageToDict(reply)

    def stream(
        self, method: str, body: dict[str, Any], token: str | None = None, timeout: float = 120
    ) -> Iterator[dict[str, Any]]:
        """A server stream's messages, as dicts; closing the iterator cancels the call."""
        stub, request = self._stub(method, self.channel.unary_stream)
        call = stub(request(body), metadata=_bearer(token), timeout=timeout)
        try:
            for message in call:
                yield json_format.MessageToDict(message)
        finally:
            call.cancel()


def _bearer(token: str | None):
    return (("authorization", f"Bearer {token}"),) if token else None


def retried(call: Callable[[], dict[str, Any]], attempts: int = 60) -> dict[str, Any]:
    """``call`` again after UNAVAILABLE (a replica down, before the gateway's health check
    says so) with growing pauses: the caller makes the call safe to repeat."""
    for attempt in range(attempts):
        try:
            return call()
        except grpc.RpcError as error:
            if error.code() not in RETRIED or attempt == attempts - 1:
                raise
            RETRIES[error.code().name] += 1
            time.sleep(min(1.0, 0.05 * (attempt + 1)))
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Guest:
    player_id: str
    name: str
    token: str


def sign_in(address: str, names: list[str]) -> list[Guest]:
    """New guests, signed in by the gateway's PlayersService (reflection, JSON)."""
    players = Reflected(address, PLAYERS)
    try:
        guests = []
        for name in names:
            answer = players.call("SignIn", {"playerName": name})
            assert answer["playerName"] == name and answer["playerId"]
            guests.append(Guest(answer["playerId"], name, answer["token"]))
        assert len({g.player_id for g in guests}) == len(names)  # a new id each
        return guests
    finally:
        players.close()


@dataclass
class Stack:
    gateway: Process
    replicas: list[Process]

    @property
    def address(self) -> str:
        return self.gateway.address


@contextlib.contextmanager
def judged_stack(
    logs: Path, store_url: str, replicas: int = 1, service_env: dict[str, str] | None = None
) -> Iterator[Stack]:
    """``replicas`` Channeling processes on one store, trusting the guests' JWKS of one
    ``python -m gateway`` (Envoy in front) whose route lists every replica's address."""
    started: list[Process] = []
    metrics = free_port()
    env = {
        "TABLETOP_STORE_URL": store_url,
        "TABLETOP_ALLOW_SEED": "true",  # the client deals the same game to its own engine
        "TABLETOP_ACCESS_LOG": "false",
        "TABLETOP_JWT_JWKS_URL": f"http://127.0.0.1:{metrics}/.well-known/jwks.json",
        "TABLETOP_JWT_ISSUER": GUEST_ISSUER,
        **(service_env or {}),
    }
    try:
        for r in range(replicas):
            started.append(start_process("services.channeling", env, logs / f"replica{r}.log"))
        routes = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
        routes["TABLETOP_ROUTE_CHANNELING"] = ",".join(p.address for p in started)
        gateway = start_process(
            "gateway",
            {
                "TABLETOP_ACCESS_LOG": "false",
                "TABLETOP_METRICS_PORT": str(metrics),
                "TABLETOP_GUEST_SIGNING_KEY_FILE": str(logs / "guest-key.pem"),
                "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.5",
                **ONE_ADDRESS_FOR_ALL,
                **routes,
            },
            logs / "gateway.log",
        )
        stack = Stack(gateway, list(started))
        started.append(gateway)
        wait_serving(gateway.address, CHANNELING, timeout=30)
        yield stack
    finally:
        for process in reversed(started):
            if process.popen.poll() is None:
                process.popen.kill()
                process.popen.wait(10)


def rebuild_check(store_url: str) -> subprocess.CompletedProcess[str]:
    """The rebuild a user runs: ``python -m services.kit.ratings rebuild --check``."""
    return subprocess.run(
        [sys.executable, "-m", "services.kit.ratings", "rebuild", "--store-url", store_url,
         "--game", "channeling", "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
