"""Operator commands on a game store, and application keys.

    python -m services.kit.admin quarantined [--store URL]
        the games quarantined because their log cannot be replayed, one a line:
        game id, game type, when (UTC), why
    python -m services.kit.admin export GAME_ID [--store URL] [--out FILE]
        the game's row and move rows exactly as stored, as JSON (to stdout or FILE);
        it holds seat-token hashes and every secret move: keep it with the store's backups
    python -m services.kit.admin release GAME_ID [--store URL]
        lift a game's quarantine once its rows are repaired or restored (or the rules
        that refused them are fixed): the service replays it again on its next call,
        and quarantines it again if it still cannot be replayed
    python -m services.kit.admin new-key NAME [--games N]
        a new application key for CreateGame: the key (shown once; give it to the
        application) and the entry for TABLETOP_CREATE_KEYS (its hash only)

``--store`` defaults to TABLETOP_STORE_URL. Add ``?check=none`` to a SQLite URL to read
a file that fails its integrity check.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from services.kit import auth
from services.kit.creators import KeyConfigError, parse_keys
from services.kit.store import StoreError, open_store


def _store_url(given: str | None) -> str:
    url = given or os.environ.get("TABLETOP_STORE_URL", "")
    if not url:
        raise SystemExit("no store: pass --store URL or set TABLETOP_STORE_URL")
    return url


async def quarantined(url: str) -> list[str]:
    store = open_store(url)
    try:
        found = await store.quarantined()
    finally:
        await store.close()
    lines = []
    for q in found:
        when = datetime.datetime.fromtimestamp(q.at, datetime.UTC).isoformat(timespec="seconds")
        lines.append(f"{q.game_id}\t{q.game_type}\t{when}\t{q.reason}")
    return lines


async def release(url: str, game_id: str) -> bool:
    store = open_store(url)
    try:
        return await store.release(game_id)
    finally:
        await store.close()


async def export(url: str, game_id: str) -> dict[str, Any] | None:
    store = open_store(url)
    try:
        return await store.raw(game_id)
    finally:
        await store.close()


def new_key(name: str, games: int | None) -> tuple[str, str]:
    """(the key, its TABLETOP_CREATE_KEYS entry)."""
    key = auth.new_token()
    entry = f"{name}:{auth.token_hash(key)}"
    if games is not None:
        entry += f":{games}"
    parse_keys(entry, 0)  # the entry the service will read: a bad name fails here
    return key, entry


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.kit.admin", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("quarantined", help="list quarantined games")
    listing.add_argument("--store")
    exporting = commands.add_parser("export", help="write a game's stored rows as JSON")
    exporting.add_argument("game_id")
    exporting.add_argument("--store")
    exporting.add_argument("--out", type=Path)
    releasing = commands.add_parser("release", help="lift a game's quarantine")
    releasing.add_argument("game_id")
    releasing.add_argument("--store")
    making = commands.add_parser("new-key", help="make an application key for CreateGame")
    making.add_argument("name")
    making.add_argument("--games", type=int, help="games in progress it may hold")
    args = parser.parse_args(argv)

    try:
        if args.command == "quarantined":
            for line in asyncio.run(quarantined(_store_url(args.store))):
                print(line)
        elif args.command == "export":
            rows = asyncio.run(export(_store_url(args.store), args.game_id))
            if rows is None:
                print(f"no game {args.game_id!r} in this store", file=sys.stderr)
                return 1
            text = json.dumps(rows, indent=2, sort_keys=True, default=str) + "\n"
            if args.out:
                args.out.write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
        elif args.command == "release":
            if not asyncio.run(release(_store_url(args.store), args.game_id)):
                print(f"game {args.game_id!r} is not quarantined in this store", file=sys.stderr)
                return 1
            print(f"released {args.game_id}: it is replayed on its next call")
        else:
            key, entry = new_key(args.name, args.games)
            print(f"key (give it to the application; it is not kept): {key}")
            print(f"entry for TABLETOP_CREATE_KEYS: {entry}")
    except StoreError as exc:
        print(f"store error: {exc}", file=sys.stderr)
        return 1
    except KeyConfigError as exc:
        print(f"bad key: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
