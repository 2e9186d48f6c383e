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
from services.resarcana.engine.actions import ChooseAction
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.effects import TakeFromComponent
from services.resarcana.engine.essences import GOLD
from services.resarcana.engine.moves import DECK, Move
from services.resarcana.engine.scoring import victory_points
from services.resarcana.engine.turn import step


def _vp_of(cid: int) -> float:
    return 1.6 if cid == DECK else CONTENT[cid].vp + (2 if CONTENT[cid].kind == "place" else 0)


def greedy_move(state: E.State, seat: int, moves: list[Move]) -> Move:
    me = state.seats[seat]
    task = step(state, seat)
    kinds = {type(m) for m in moves}
    if isinstance(task, ChooseAction):
        claims = [m for m in moves if isinstance(m, E.Claim)]
        if claims:
            return max(claims, key=lambda m: (_vp_of(m.component), -m.component))
        places = [m for m in moves if isinstance(m, E.Place)]
        if places:
            return max(places, key=lambda m: (CONTENT[m.card].vp, -m.card))
        powers = []
        for m in moves:
            if not isinstance(m, E.UsePower):
                continue
            power = CONTENT[m.component].powers[m.power - 1]
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
        discards = [m for m in moves if isinstance(m, E.Discard)]
        if discards and len(me.hand) > 1:
            return discards[0]
        return E.Pass()
    if E.Gain in kinds:
        gold = E.Gain(GOLD)
        if gold in moves:
            return gold
        pool = me.pool
        gains = [m for m in moves if isinstance(m, E.Gain)]
        return min(gains, key=lambda m: (pool[m.essence], m.essence))
    if E.PayEssence in kinds:
        pool = me.pool
        pays = [m for m in moves if isinstance(m, E.PayEssence)]
        others = [m for m in pays if m.essence != GOLD] or pays
        return max(others, key=lambda m: (pool[m.essence], -m.essence))
    if E.Waive in kinds:
        gold_waive = E.Waive(GOLD)
        return gold_waive if gold_waive in moves else moves[0]
    if E.Take in kinds:
        takes = [m for m in moves if isinstance(m, E.Take) and CONTENT[m.component].kind != "place"]
        return takes[0] if takes else E.Done()
    if E.Target in kinds:
        targets = [m for m in moves if isinstance(m, E.Target)]
        own_places = [
            m for m in targets if CONTENT[m.component].kind == "place" and m.component in me.tableau
        ]
        if isinstance(task, TakeFromComponent):
            not_mine = [m for m in targets if m.component not in me.components()]
            return (not_mine or targets)[0]
        return (own_places or targets)[0]
    if E.GainMonument in kinds:
        monuments = [m for m in moves if isinstance(m, E.GainMonument)]
        return max(monuments, key=lambda m: (_vp_of(m.monument), -m.monument))
    if E.Place in kinds:
        return next(m for m in moves if isinstance(m, E.Place))
    if E.UsePower in kinds:
        return next(m for m in moves if isinstance(m, E.UsePower))
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
