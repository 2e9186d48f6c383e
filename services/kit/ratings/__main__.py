"""``python -m services.kit.ratings rebuild --store-url URL [--game NAME] [--check]``.

Replays the store's rated games of each game (or one) and compares the standings with
the store's: ``--check`` prints the differences and exits 1 when there are any;
without it the store's standings of that game are replaced by the rebuilt ones.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from services.kit.ratings.rebuilding import rebuild_store
from services.kit.store import open_store_or_exit
from services.registry import SERVICES


async def _run(url: str, games: list[str], check: bool) -> int:
    store = open_store_or_exit(url)
    differing = 0
    try:
        for entry in SERVICES:
            if games and entry.name not in games:
                continue
            info = entry.engine().GAME
            found = await rebuild_store(store, info, check=check)
            differing += len(found)
            for d in found:
                print(f"{d.shape} {d.player}: stored {d.stored}, rebuilt {d.rebuilt}")
            verb = "differ" if check else "replaced"
            print(f"{info.name}: {len(found)} standings {verb}" if found else f"{info.name}: equal")
    finally:
        await store.close()
    return 1 if check and differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.kit.ratings")
    sub = parser.add_subparsers(dest="command", required=True)
    rebuild = sub.add_parser("rebuild", help="rebuild the standings from the rated games")
    rebuild.add_argument(
        "--store-url", default=os.environ.get("TABLETOP_STORE_URL", ""), required=False
    )
    rebuild.add_argument("--game", action="append", default=[], help="only this game")
    rebuild.add_argument("--check", action="store_true", help="compare only; exit 1 on any")
    args = parser.parse_args(argv)
    if not args.store_url:
        parser.error("--store-url (or TABLETOP_STORE_URL) is required")
    known = {e.name for e in SERVICES}
    for game in args.game:
        if game not in known:
            parser.error(f"unknown game {game!r}; the games are {', '.join(sorted(known))}")
    return asyncio.run(_run(args.store_url, args.game, args.check))


if __name__ == "__main__":
    sys.exit(main())
