"""A simple greedy player for balance measurements (not a strong player).

It claims what it can afford (most victory points first), places Artifacts, uses
powers, discards for Gold when it cannot do better, and passes last. In sub-steps it
takes Gold, pays with its most plentiful other essence and keeps essences off Places of
Power in the collect phase.
"""

from __future__ import annotations

import random
from typing import Any

import services.resarcana.engine as E
from services.kit.engine import Outcome
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import GOLD
from services.resarcana.engine.game import step
from services.resarcana.engine.moves import DECK, Kind, Move
from services.resarcana.engine.scoring import victory_points


def _vp_of(cid: int) -> float:
    return 1.6 if cid == DECK else CONTENT[cid].vp + (2 if CONTENT[cid].kind == "place" else 0)


def greedy_move(state: E.State, seat: int, moves: list[Move]) -> Move:
    me = state.seats[seat]
    task = step(state, seat)
    code = task[0]
    kinds = {m.kind for m in moves}
    if code == "action":
        claims = [m for m in moves if m.kind == Kind.CLAIM]
        if claims:
            return max(claims, key=lambda m: (_vp_of(m.a), -m.a))
        places = [m for m in moves if m.kind == Kind.PLACE]
        if places:
            return max(places, key=lambda m: (CONTENT[m.a].vp, -m.a))
        powers = []
        for m in moves:
            if m.kind != Kind.POWER:
                continue
            power = CONTENT[m.a].powers[m.b - 1]
            ops = {c.op for alt in power.effect for c in alt}
            if "check_victory" in ops:
                mine, theirs = victory_points(state, seat), victory_points(state, 1 - seat)
                if mine >= state.target_vp and mine > theirs:
                    return m
                continue
            if "rival_gains" in ops and "gain" not in ops:
                continue
            powers.append(m)
        if powers:
            return powers[0]
        discards = [m for m in moves if m.kind == Kind.DISCARD]
        if discards and len(me.hand) > 1:
            return discards[0]
        return Move(Kind.PASS)
    if Kind.GAIN in kinds:
        gold = Move(Kind.GAIN, GOLD)
        if gold in moves:
            return gold
        pool = me.pool
        return min((m for m in moves if m.kind == Kind.GAIN), key=lambda m: (pool[m.a], m.a))
    if Kind.PAY in kinds:
        pool = me.pool
        others = [m for m in moves if m.a != GOLD] or moves
        return max(others, key=lambda m: (pool[m.a], -m.a))
    if Kind.WAIVE in kinds:
        gold = Move(Kind.WAIVE, GOLD)
        return gold if gold in moves else moves[0]
    if Kind.TAKE in kinds:
        takes = [m for m in moves if m.kind == Kind.TAKE and CONTENT[m.a].kind != "place"]
        return takes[0] if takes else Move(Kind.DONE)
    if Kind.TARGET in kinds:
        mine = [m for m in moves if CONTENT[m.a].kind == "place" and m.a in me.tableau]
        if code == "take_from":
            theirs = [m for m in moves if m.a not in me.components()]
            return (theirs or moves)[0]
        return (mine or moves)[0]
    if Kind.MONUMENT in kinds:
        return max(moves, key=lambda m: (_vp_of(m.a), -m.a))
    if Kind.PLACE in kinds:
        return next(m for m in moves if m.kind == Kind.PLACE)
    if Kind.POWER in kinds:
        return next(m for m in moves if m.kind == Kind.POWER)
    return moves[0]


def play(
    seed: int, options: E.Options, bots: tuple[str, str], max_decisions: int = 20_000
) -> tuple[E.State, Outcome]:
    """Play one game; each seat "greedy" or "random"."""
    state = E.new_game(seed, 2, options)
    rng = random.Random(seed)
    for _ in range(max_decisions):
        result = E.outcome(state)
        if result is not None:
            return state, result
        seat = E.to_act(state)[0]
        moves = E.legal_moves(state, seat)
        move = greedy_move(state, seat, moves) if bots[seat] == "greedy" else rng.choice(moves)
        E.apply(state, seat, move)
    raise AssertionError(f"seed {seed}: no outcome")


def rounds_played(seeds: Any, options: E.Options, bots: tuple[str, str]) -> list[int]:
    return [play(seed, options, bots)[0].round for seed in seeds]
