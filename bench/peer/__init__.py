"""The peer benchmark: boardgame.io's server beside our gateway and Channeling service,
both playing The Channeling with every player connected and updated after each move.

    python -m bench --only peer                  # 1 and 32 games, 3 rounds each (~10 min)
    python -m bench --only peer --quick          # 1 round of 2 s per side and size
    python -m bench --only peer --peer-profile   # and py-spy our side in one more round

bench/peer/README.md says what is and is not equal between the two sides.
"""

from bench.peer.report import markdown
from bench.peer.run import add_arguments, section, settings

__all__ = ["add_arguments", "markdown", "section", "settings"]
