"""The move-log store, chosen by URL: ``memory://``, ``sqlite:///path``, ``postgresql://...``."""

from __future__ import annotations

from .base import (
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    SharedStore,
    Store,
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


__all__ = [
    "DuplicateRequest",
    "GameExists",
    "GameRecord",
    "MoveRecord",
    "SharedStore",
    "Store",
    "StoreError",
    "VersionConflict",
    "open_store",
]
