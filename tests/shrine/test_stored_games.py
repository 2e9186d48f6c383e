"""Stored games replay exactly as they were played.

``stored/`` holds the move logs of three games as the engine recorded them (each move's
text form, its events with their audience, and the outcome), copied from the golden
playthroughs before the Block that claims nothing (``block <field> noclaim``) was added.
They are never regenerated: a new legal move must not change what an old log means, so
each log must parse, be accepted move by move, and give the very same events and outcome.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from services.kit.engine import EngineError
from services.shrine import engine
from services.shrine.engine import Block, Move

STORED = Path(__file__).parent / "stored"
LOGS = sorted(STORED.glob("*.txt"))
_HEADER = re.compile(r"seed (\d+), 2 players, options Options\(radiant_shapes=(True|False)\)")
_MOVE = re.compile(r"== v(\d+) seat (\d): (.+)")


def replay(path: Path, parse: Callable[[str], Move] = engine.parse_move) -> tuple[list, list]:
    """The log's lines (moves, events, outcome), and the same lines made by replaying its
    moves with today's engine."""
    lines = path.read_text().splitlines()
    found = _HEADER.search(lines[0])
    assert found, f"{path.name}: no seed and options in {lines[0]!r}"
    options = engine.Options(radiant_shapes=found.group(2) == "True")
    state = engine.new_game(int(found.group(1)), 2, options)
    logged = [line for line in lines if not line.startswith("#")]
    made: list[str] = []
    for line in logged:
        step = _MOVE.fullmatch(line)
        if step is None:
            continue
        version, seat, text = int(step.group(1)), int(step.group(2)), step.group(3)
        assert version == len([m for m in made if m.startswith("== v")]) + 1
        made.append(f"== v{version} seat {seat}: {text}")
        for event in engine.apply(state, seat, parse(text)):
            audience = "all" if event.to is None else ",".join(map(str, sorted(event.to)))
            made.append(f"  event[{audience}] {event.kind}: {event.text}")
    made.append(f"outcome {engine.outcome(state)!r}")
    return logged, made


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_a_stored_game_replays_exactly_as_it_was_played(path: Path) -> None:
    logged, made = replay(path)
    assert made == logged
    assert logged[-1].startswith("outcome Outcome(")


def test_the_stored_games_hold_block_claims() -> None:
    """The logs exercise the forms whose meaning must not move: ``block <field>`` and
    ``block <field> target``."""
    steps = [_MOVE.fullmatch(line) for p in LOGS for line in p.read_text().splitlines()]
    moves = [step.group(3) for step in steps if step]
    parsed = [engine.parse_move(m) for m in moves if m.startswith("block ")]
    blocks = [b for b in parsed if isinstance(b, Block)]
    assert len(blocks) == len(parsed)
    assert any(not b.target for b in blocks) and any(b.target for b in blocks)
    assert not any(b.no_claim for b in blocks)


def test_control_a_block_read_as_claiming_nothing_would_change_the_replay() -> None:
    """Were ``block <field>`` read as the Block that claims nothing, stored games would
    replay differently, and the test above would say so."""

    def misread(text: str) -> Move:
        move = engine.parse_move(text)
        if isinstance(move, Block) and not move.target:
            return Block(move.field, no_claim=True)
        return move

    changed = []
    for path in LOGS:
        try:
            logged, made = replay(path, misread)
        except EngineError:  # with less Treasure, a later move is refused or comes too late
            changed.append(True)
        else:
            changed.append(made != logged)
    assert any(changed)
