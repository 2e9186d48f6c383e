"""Every refusal as a gRPC status with a google.rpc.ErrorInfo (grpcio-status).

The code says what kind of refusal it is; ErrorInfo.reason says exactly which, and its
metadata carries the facts a client acts on (the rule broken, the current version).
Messages never carry hidden information: engines and the kit write them for anyone.

A refusal is small whatever was sent: the message, each metadata key and value and their
number are cut at fixed lengths here, the last line behind each refusal's own care to
echo little of the request. A refusal's trailers travel back through every proxy on the
way, and an oversized one there resets the connection it shares with other callers.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from tabletop.common.v1 import errors_pb2

from services.kit import auth, errors
from services.kit import engine as rules

DOMAIN = "tabletop"

# The most a refusal carries: message characters, metadata entries, and characters per
# metadata key and value. A status then stays within a few KB of trailers.
MESSAGE_MAX = 512
METADATA_MAX = 8
METADATA_KEY_MAX = 64
METADATA_VALUE_MAX = 256


def cut(text: str, most: int) -> str:
    """``text`` cut to at most ``most`` characters, marked where it was cut."""
    return text if len(text) <= most else text[: most - 3] + "..."


_CODES: list[tuple[type[BaseException], grpc.StatusCode]] = [
    (rules.MalformedMove, grpc.StatusCode.INVALID_ARGUMENT),
    (rules.BadOptions, grpc.StatusCode.INVALID_ARGUMENT),
    (rules.IllegalMove, grpc.StatusCode.FAILED_PRECONDITION),
    (rules.GameOver, grpc.StatusCode.FAILED_PRECONDITION),
    (rules.NotYourDecision, grpc.StatusCode.PERMISSION_DENIED),
    (rules.EngineError, grpc.StatusCode.FAILED_PRECONDITION),  # any other rule refusal
    (errors.GameNotFound, grpc.StatusCode.NOT_FOUND),
    (errors.StaleVersion, grpc.StatusCode.ABORTED),
    (errors.RequestIdReused, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.BadRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.SeedNotAllowed, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.VersionOutOfRange, grpc.StatusCode.OUT_OF_RANGE),
    (errors.LimitReached, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.RateLimited, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.WatcherTooSlow, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.Unavailable, grpc.StatusCode.UNAVAILABLE),
    (errors.GameCorrupt, grpc.StatusCode.DATA_LOSS),
    (errors.SeatNotOpen, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.GameNotStarted, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.GameStarted, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.AlreadyGivenUp, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.BadPageToken, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.PlayerHasSeat, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.NoRematch, grpc.StatusCode.FAILED_PRECONDITION),
    (auth.MissingToken, grpc.StatusCode.UNAUTHENTICATED),
    (auth.BadToken, grpc.StatusCode.UNAUTHENTICATED),
]

_AUTH_REASONS: dict[type[BaseException], str] = {
    auth.MissingToken: "MISSING_TOKEN",
    auth.BadToken: "BAD_TOKEN",
}

KNOWN: tuple[type[BaseException], ...] = tuple(cls for cls, _ in _CODES)


def classify(exc: BaseException) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """(code, reason, metadata) for an error a client caused; raises for anything else."""
    for cls, code in _CODES:
        if isinstance(exc, cls):
            # A subclass (a player token's expiry, say) keeps its own reason.
            reason: str = _AUTH_REASONS.get(type(exc), "") or getattr(exc, "reason", "UNKNOWN")
            metadata: dict[str, str] = dict(getattr(exc, "metadata", {}) or {})
            return code, reason, metadata
    raise TypeError(f"not a client error: {exc!r}")


def _bounded(metadata: dict[str, str] | None) -> dict[str, str]:
    """A refusal's metadata, at most METADATA_MAX entries, each key and value cut."""
    return {
        cut(key, METADATA_KEY_MAX): cut(str(value), METADATA_VALUE_MAX)
        for key, value in list((metadata or {}).items())[:METADATA_MAX]
    }


def status_for(
    code: grpc.StatusCode, message: str, reason: str, metadata: dict[str, str] | None = None
) -> grpc.Status:
    """The status of a refusal, its size bounded (see MESSAGE_MAX and the rest)."""
    info = error_details_pb2.ErrorInfo(reason=cut(reason, METADATA_KEY_MAX), domain=DOMAIN)
    info.metadata.update(_bounded(metadata))
    detail = any_pb2.Any()
    detail.Pack(info)
    proto = status_pb2.Status(
        code=code.value[0], message=cut(message, MESSAGE_MAX), details=[detail]
    )
    return rpc_status.to_status(proto)


def refusal(exc: BaseException) -> errors_pb2.Refusal:
    """The status ``status_of`` gives, as a message (a move's answer on Play), bounded
    the same way."""
    code, reason, metadata = classify(exc)
    return errors_pb2.Refusal(
        code=code.value[0],
        message=cut(str(getattr(exc, "message", None) or exc), MESSAGE_MAX),
        reason=cut(reason, METADATA_KEY_MAX),
        metadata=_bounded(metadata),
    )


def status_of(exc: BaseException) -> grpc.Status:
    code, reason, metadata = classify(exc)
    return status_for(code, str(getattr(exc, "message", None) or exc), reason, metadata)


async def abort(context: grpc.aio.ServicerContext[Any, Any], status: grpc.Status) -> None:
    await context.abort(status.code, status.details, status.trailing_metadata)


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo a client finds in a failed call's status (None if there is none)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]  # a raised RpcError is a Call
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return None


assert grpc.StatusCode.INVALID_ARGUMENT.value[0] == code_pb2.INVALID_ARGUMENT
