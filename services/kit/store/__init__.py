"""The move-log store, chosen by URL: ``memory://``, ``sqlite:///path``, ``postgresql://...``."""

from __future__ import annotations

from .base import (
    STATUSES,
    CorruptRow,
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    PlayerQuotas,
    Quarantined,
    QuotaExceeded,
    Quotas,
    SharedStore,
    Store,
    StoreCorrupt,
    StoreError,
    VersionConflict,
)


def open_store(url: str) -> Store:
    """The backend a URL names. Raises StoreError for a scheme it does not know."""
    scheme = url.split(":", 1)[0].lower()
    if scheme == "memory":
        from .memory import MemoryStore

        return MemoryStore(url)
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(url)
    if scheme in ("postgresql", "postgres"):
        from .postgres import PostgresStore

        return PostgresStore(url)
    raise StoreError(
        f"unknown store URL scheme {scheme!r}: use memory://, sqlite:/// or postgresql://"
    )


def open_store_or_exit(url: str) -> Store:
    """``open_store``, or SystemExit with one line saying why (a process that must not
    serve, e.g. on a corrupt file, says so without a traceback)."""
    try:
        return open_store(url)
    except StoreError as exc:
        raise SystemExit(f"not serving: {exc}") from None


__all__ = [
    "STATUSES",
    "CorruptRow",
    "DuplicateRequest",
    "GameExists",
    "GameRecord",
    "MoveRecord",
    "PlayerQuotas",
    "Quarantined",
    "QuotaExceeded",
    "Quotas",
    "SharedStore",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "VersionConflict",
    "open_store",
    "open_store_or_exit",
]
