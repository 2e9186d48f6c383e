"""Computer players for any seat of every game, through the engine contract only.

Four bots, one module each, and the runtime around them:

- :mod:`.random`: a uniformly random legal move.
- :mod:`.greedy`: one ply; each legal move is applied to a few determinizations and
  scored by the game's evaluation, the best kept (ties broken by the bot's generator).
- :mod:`.ismcts`: single-observer information-set Monte Carlo tree search (Cowling,
  Powley and Whitehouse 2012) over determinizations, rollouts cut short by the game's
  evaluation (:mod:`.evaluation`), budgeted by iterations and/or milliseconds.
- :mod:`.levels`: easy, medium and hard, each a budget of one of those bots;
  ``decide`` and, for the pool, ``decide_text``.
- :mod:`.pool`: :class:`~.pool.BotPool` runs decisions in worker processes (spawned,
  never forked), so a search never blocks the service's event loop.

**A bot sees only its seat.** The true state reaches a bot because the service holds
nothing else, so the rule is about what a bot reads from it: its only reads of the true
state are what the seat sees anyway (``engine.outcome``, ``engine.legal_moves(state,
seat)`` and the number of seats) and ``engine.determinize(state, seat, rng)`` (a state
with everything hidden from the seat re-dealt); all search, scoring and rollouts run on
determinizations. With a canonical
determinize (the same generator state gives the same result for any two states the seat
cannot tell apart) a bot's decision is therefore a function of the seat's information
and its seed alone; tests/kit/test_bots.py checks exactly that for every game, with a
control showing a bot that searched the true state would be caught.

**The player count** is not part of the engine contract's state. A bot takes it from
``players_of`` (:mod:`.evaluation`): the game's fixed count when ``GAME.min_players ==
GAME.max_players``, else the length of the state's ``players`` list (Glow, Shén). A
caller that knows it (the game manager does) may pass ``players=`` instead.
"""

from services.kit.bots.evaluation import players_of, values
from services.kit.bots.levels import LEVELS, Level, decide, decide_text
from services.kit.bots.pool import BotPool

__all__ = ["LEVELS", "BotPool", "Level", "decide", "decide_text", "players_of", "values"]
