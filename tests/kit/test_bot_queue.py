"""The bot queue's order: a person waiting before tables of bots, owners in turn, then
each owner's games in turn, one decision each; at most ``runners`` decisions at once.

Control: with each lane first come, first served (the queue before), one owner's ten
tables are all served before another owner's one.
"""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from services.kit import botqueue
from services.kit.botqueue import BOTS, PEOPLE, BotQueue


class Steps:
    """A step that records the games it served and how many ran at once."""

    def __init__(self, again: dict[str, int] | None = None) -> None:
        self.served: list[str] = []
        self.again = dict(again or {})  # game -> further decisions after this one
        self.running = 0
        self.most = 0
        self.gate = asyncio.Event()

    async def __call__(self, game_id: str, lane: str) -> bool:
        self.running += 1
        self.most = max(self.most, self.running)
        await self.gate.wait()
        self.served.append(game_id)
        self.running -= 1
        left = self.again.get(game_id, 0)
        self.again[game_id] = left - 1
        return left > 0


async def served(queue: BotQueue, steps: Steps) -> list[str]:
    steps.gate.set()
    await queue.settle()
    return steps.served


def fifo(monkeypatch) -> None:
    """The control: every lane served first come, first served, whoever owns the game."""

    class Fifo:
        def __init__(self) -> None:
            self.games: deque[str] = deque()

        def __len__(self) -> int:
            return len(self.games)

        def add(self, owner: str, game_id: str) -> None:
            self.games.append(game_id)

        def take(self) -> str | None:
            return self.games.popleft() if self.games else None

    monkeypatch.setattr(botqueue, "Lane", Fifo)


@pytest.mark.parametrize("control", [False, True])
async def test_owners_take_turns_then_their_games(monkeypatch, control):
    if control:
        fifo(monkeypatch)
    steps = Steps()
    queue = BotQueue(steps, 1, lambda task: None)
    for n in range(10):
        queue.add(f"a{n}", "addr:A", BOTS)
    queue.add("b0", "addr:B", BOTS)
    queue.add("c0", "addr:C", BOTS)
    order = await served(queue, steps)
    fair = ["a0", "b0", "c0", "a1", "a2"]
    if control:
        assert order[:5] != fair and order.index("b0") == 10
        return
    assert order[:5] == fair and len(order) == 12


@pytest.mark.parametrize("control", [False, True])
async def test_a_person_waiting_goes_before_tables_of_bots(monkeypatch, control):
    steps = Steps()
    queue = BotQueue(steps, 1, lambda task: None)
    for n in range(5):
        queue.add(f"bots{n}", f"addr:{n}", BOTS)
    await asyncio.sleep(0)  # the runner takes bots0 and searches
    queue.add("person", "addr:P", BOTS if control else PEOPLE)
    order = await served(queue, steps)
    # Only the decision already running is ahead of the person's.
    assert order.index("person") == (5 if control else 1)


async def test_a_game_with_more_decisions_goes_to_the_back_of_its_owners_turn():
    steps = Steps(again={"a0": 2})
    queue = BotQueue(steps, 1, lambda task: None)
    queue.add("a0", "addr:A", BOTS)
    queue.add("a1", "addr:A", BOTS)
    queue.add("b0", "addr:B", BOTS)
    queue.add("a0", "addr:A", BOTS)  # queued already: not twice
    assert await served(queue, steps) == ["a0", "b0", "a1", "a0", "a0"]


async def test_no_more_decisions_run_at_once_than_runners():
    steps = Steps()
    queue = BotQueue(steps, 2, lambda task: None)
    for n in range(20):
        queue.add(f"g{n}", f"addr:{n % 3}", BOTS if n % 2 else PEOPLE)
    await asyncio.sleep(0.01)
    assert steps.running == 2 and queue.waiting(PEOPLE) + queue.waiting(BOTS) == 18
    await served(queue, steps)
    assert steps.most == 2 and sorted(steps.served) == sorted(f"g{n}" for n in range(20))


async def test_closing_forgets_the_queue_and_stops_the_runners():
    steps = Steps()
    queue = BotQueue(steps, 1, lambda task: None)
    for n in range(5):
        queue.add(f"g{n}", "addr:A", BOTS)
    await asyncio.sleep(0.01)
    await queue.close()
    assert queue.waiting(BOTS) == 0 and "g3" not in queue and steps.served == []
