"""Single-observer information-set MCTS (SO-ISMCTS; Cowling, Powley and Whitehouse 2012).

One tree for the bot's seat, its nodes reached by sequences of (seat, move). Each
iteration:

1. **Determinize**: sample a state the bot's seat cannot tell from the true one
   (``engine.determinize(state, seat, rng)``); the rest of the iteration runs on it.
2. **Select**: from the root, while every move legal *in this determinization* already
   has a child, step to the child with the best UCB1 score, where the parent's visit
   count is replaced by the child's **availability** (how often it was legal when its
   parent was selected from), as the paper does: a move that exists in few
   determinizations is not penalised for the iterations in which it could not be tried.
3. **Expand** one untried legal move (chosen at random), then
4. **Roll out** with uniformly random moves for at most ``rollout_depth`` decisions and
   score the state with the game's evaluation (:mod:`.evaluation`), a value per seat.
5. **Back up**: each node on the path adds the value of the seat that made the move
   leading to it, so every node's statistics are from the point of view of the seat
   acting there (team mates share values; the evaluation says so).

The acting seat of a node is ``to_act(state)[0]``, except at the root, where it is the
bot's seat. Several seats may have a decision at once (Glow's simultaneous dice): their
decisions are independent and the engine takes them in any order, so the search plays
them one after the other, lowest seat first, as OpenSpiel's turn-based view of
simultaneous games does. Within the search a later seat then "sees" an earlier one's
choice; this makes the search's model of those opponents a little too well informed,
never the bot itself (its own root decision is taken before any of them).

The final choice is the most visited root move (ties: the higher mean value, then the
first in the engine's sorted order). Budgets: ``iterations`` (reproducible: the result
depends only on the seat's information and ``rng``) and/or a ``deadline``, checked
before every iteration and at every rollout step, since one iteration of a long game
can take milliseconds.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from services.kit.bots.clock import NEVER, Deadline
from services.kit.bots.evaluation import players_of, values
from services.kit.bots.random import legal_or_raise
from services.kit.engine import Engine
from services.kit.testing import choose

# The paper's exploration constant for rewards in [0, 1].
EXPLORATION = 0.7


@dataclass
class Node:
    """The statistics of one move in the tree, seen by the seat that made it."""

    seat: int  # the seat whose move leads here (-1 at the root)
    visits: int = 0
    total: float = 0.0  # the sum of ``seat``'s values over the visits
    available: int = 0  # how often this move was legal when its parent was selected from
    children: dict[tuple[int, Any], Node] = field(default_factory=dict)

    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0

    def ucb(self, exploration: float) -> float:
        return self.mean() + exploration * math.sqrt(math.log(self.available) / self.visits)


@dataclass
class Search:
    """The result of a search: the move chosen, the root, and how many iterations ran."""

    move: Any
    root: Node
    iterations: int


def search(
    engine: Engine,
    state: Any,
    seat: int,
    rng: random.Random,
    *,
    iterations: int | None = None,
    deadline: Deadline = NEVER,
    rollout_depth: int = 20,
    exploration: float = EXPLORATION,
    players: int | None = None,
) -> Search:
    """Search from ``seat``'s information in ``state`` and return its decision.

    Stops after ``iterations`` iterations or when ``deadline`` passes, whichever comes
    first; at least one of the two must be given.

    >>> from services.channeling import engine
    >>> state = engine.new_game(seed=3)
    >>> result = search(engine, state, 0, random.Random(1), iterations=30)
    >>> result.move in engine.legal_moves(state, 0), result.iterations
    (True, 30)
    """
    if iterations is None and deadline.at is None:
        raise ValueError("an ISMCTS search needs an iteration budget, a deadline or both")
    moves = legal_or_raise(engine, state, seat)
    root = Node(-1)
    if len(moves) == 1:
        return Search(moves[0], root, 0)
    players = players if players is not None else players_of(engine, state)
    done = 0
    while (iterations is None or done < iterations) and not deadline.passed():
        # The one read of the true state per iteration: a determinization for the seat.
        world = engine.determinize(state, seat, rng)
        _iterate(engine, world, seat, root, rng, rollout_depth, exploration, players, deadline)
        done += 1
    return Search(_most_visited(root, seat, moves, rng), root, done)


def _iterate(
    engine: Engine,
    world: Any,
    seat: int,
    root: Node,
    rng: random.Random,
    rollout_depth: int,
    exploration: float,
    players: int,
    deadline: Deadline,
) -> None:
    node, path = root, []
    while engine.outcome(world) is None:
        acting = seat if node is root else engine.to_act(world)[0]
        keys = [(acting, move) for move in engine.legal_moves(world, acting)]
        untried = [key for key in keys if key not in node.children]
        if untried:
            key = untried[0] if len(untried) == 1 else rng.choice(untried)
            child = node.children[key] = Node(acting, available=1)
            engine.apply(world, *key)
            path.append(child)
            break
        children = [node.children[key] for key in keys]
        for child in children:
            child.available += 1
        best = max(range(len(keys)), key=lambda i: children[i].ucb(exploration))
        engine.apply(world, *keys[best])
        node = children[best]
        path.append(node)
    for _ in range(rollout_depth):
        if engine.outcome(world) is not None or deadline.passed():
            break
        engine.apply(world, *choose(engine, world, rng))
    result = values(engine, world, players)
    root.visits += 1
    for step in path:
        step.visits += 1
        step.total += result[step.seat]


def _most_visited(root: Node, seat: int, moves: list[Any], rng: random.Random) -> Any:
    """The root move visited most (ties: higher mean, then the engine's order)."""
    tried = [(move, root.children[(seat, move)]) for move in moves if (seat, move) in root.children]
    if not tried:  # the deadline passed before a single iteration
        return rng.choice(moves)
    return max(tried, key=lambda pair: (pair[1].visits, pair[1].mean()))[0]
