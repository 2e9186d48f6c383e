"""Who may create games, and how many each may have in progress.

Without application keys, anyone may call CreateGame, and each client address may have
at most ``games_per_client`` games in progress (not finished) at once. With keys
configured, CreateGame needs ``authorization: Bearer <application key>``, and each key
may have at most its own quota in progress. A place is freed when one of that owner's
games finishes (idle games will expire once tables do). The count is the store's, so it
holds across restarts and across replicas sharing a PostgreSQL store.

Keys are 256 random bits, shown once by ``python -m services.kit.admin new-key NAME``;
the service is configured with their SHA-256 only, as entries ``NAME:SHA256[:GAMES]``
(comma or newline separated; ``#`` starts a comment) in ``TABLETOP_CREATE_KEYS`` or in
the file ``TABLETOP_CREATE_KEYS_FILE`` names (a mounted Secret).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from services.kit import auth, config
from services.kit.limits import client_of, forwarded_client

_HEX = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class KeyConfigError(ValueError):
    """An application key entry is not ``NAME:SHA256[:GAMES]``."""


@dataclass(frozen=True)
class AppKey:
    name: str
    digest: str  # sha256 hex of the key
    games: int  # games in progress allowed (0: no limit)


@dataclass(frozen=True)
class Owner:
    """Whose quota a new game counts against."""

    owner: str  # stored with the game: "key:NAME" or "addr:ADDRESS"
    limit: int  # 0: no limit
    quota: str  # the limit's name in refusals: games_per_key or games_per_client


def parse_keys(text: str, default_games: int) -> dict[str, AppKey]:
    """Entries ``NAME:SHA256[:GAMES]`` by digest; raises KeyConfigError naming the bad one."""
    keys: dict[str, AppKey] = {}
    for line in text.replace(",", "\n").splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        parts = entry.split(":")
        if len(parts) not in (2, 3) or not _NAME.fullmatch(parts[0]):
            raise KeyConfigError(f"{entry[:80]!r} is not NAME:SHA256[:GAMES]")
        name, digest = parts[0], parts[1].lower()
        if not _HEX.fullmatch(digest):
            raise KeyConfigError(f"key {name!r}: the hash must be 64 hex digits (SHA-256)")
        games = default_games
        if len(parts) == 3:
            if not parts[2].isdigit():
                raise KeyConfigError(f"key {name!r}: GAMES must be a whole number")
            games = int(parts[2])
        if digest in keys:
            raise KeyConfigError(f"key {name!r} has the same hash as {keys[digest].name!r}")
        keys[digest] = AppKey(name, digest, games)
    return keys


def load_keys(inline: str, file: str, default_games: int) -> dict[str, AppKey]:
    """The keys of ``TABLETOP_CREATE_KEYS`` and of the file ``TABLETOP_CREATE_KEYS_FILE``.
    Either one set without a single entry is an error: read as "no keys", it would let
    anyone create games (a Secret mounted empty, every entry commented out)."""
    text = inline
    if file:
        try:
            text += "\n" + Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise KeyConfigError(f"cannot read {file}: {exc.strerror}") from None
    keys = parse_keys(text, default_games)
    if not keys and (file or inline.strip()):
        raise KeyConfigError(f"no key entries in {file or 'the variable'}")
    return keys


class Creators:
    """The quota a CreateGame call counts against, from its metadata and client address."""

    def __init__(
        self,
        keys: Mapping[str, AppKey] | None = None,
        games_per_client: int = 0,
        trust_forwarded_for: bool = False,
    ) -> None:
        self.keys = dict(keys or {})
        self.games_per_client = games_per_client
        self.trust_forwarded_for = trust_forwarded_for

    def owner(self, metadata: Iterable[tuple[str, str | bytes]] | None, peer: str | None) -> Owner:
        """Raises MissingToken or BadToken when keys are required and none valid is sent."""
        if not self.keys:
            client = (self.trust_forwarded_for and forwarded_client(metadata)) or client_of(peer)
            return Owner(f"addr:{client}", self.games_per_client, "games_per_client")
        token = auth.bearer(metadata)
        if token is None:
            raise auth.MissingToken(
                "creating a game needs an application key: authorization: Bearer <key>"
            )
        key = self.keys.get(auth.token_hash(token))
        if key is None:
            raise auth.BadToken("this is not an application key of this service")
        return Owner(f"key:{key.name}", key.games, "games_per_key")


def settings() -> list[config.Setting]:
    """The environment a game service reads for who may create games."""
    S = config.Setting
    return [
        S("create_keys", "TABLETOP_CREATE_KEYS", "", "str",
          "application keys that may create games, NAME:SHA256[:GAMES],... (set: CreateGame "
          "needs 'authorization: Bearer <key>'; python -m services.kit.admin new-key makes one)"),
        S("create_keys_file", "TABLETOP_CREATE_KEYS_FILE", "", "str",
          "a file of application keys, one NAME:SHA256[:GAMES] a line (a mounted Secret)"),
        S("games_per_key", "TABLETOP_GAMES_PER_KEY", "1000", "int",
          "games in progress per application key, where its entry names no GAMES (0: no limit)"),
        S("games_per_client", "TABLETOP_GAMES_PER_CLIENT", "1000", "int",
          "without application keys, games in progress per client address (0: no limit)"),
    ]  # fmt: skip


def from_config(cfg: config.Config) -> Creators:
    """The policy the settings describe; SystemExit with one line for a bad key entry."""
    try:
        keys = load_keys(cfg.create_keys, cfg.create_keys_file, cfg.games_per_key)
    except KeyConfigError as exc:
        raise SystemExit(f"configuration error: TABLETOP_CREATE_KEYS(_FILE): {exc}") from None
    return Creators(keys, cfg.games_per_client, cfg.trust_forwarded_for)
