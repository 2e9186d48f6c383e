"""Games whose stored log cannot be replayed: counted, logged and quarantined.

A damaged store is the service's fault, never the caller's: the game answers DATA_LOSS
(reason GAME_CORRUPT) to every call, its rows stay as they are for an operator
(``python -m services.kit.admin quarantined`` and ``export``), and nothing in the answer
or the log quotes a stored row, since a secret move's text is hidden information.
"""

from __future__ import annotations

from prometheus_client import Counter

CORRUPT_GAMES = Counter(
    "tabletop_corrupt_games",
    "Games quarantined because their stored log could not be replayed",
    ["game"],
)


def problem(exc: BaseException) -> str:
    """What went wrong, by kind only: an error's text may quote the stored row."""
    return type(exc).__name__
