"""Scoring, the end-game checklist and the winner ("Scoring", "Largest Contiguous Area",
"End of the Game").

Claims made during play (Block tokens, Proof tokens) are checked here and only here,
against the Code cards, exactly as the box does at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.kit.engine import Outcome
from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, FIELDS, PLAYER
from services.shrine.engine.state import SEAT_NAMES, State


def field_value(lenses: list[int] | tuple[int, ...]) -> int:
    """1 for one Lens, 2 for two matching Lenses, 3 for a complex colour."""
    if len(lenses) == 1:
        return PLAYER.field_value_single
    if lenses[0] == lenses[1]:
        return PLAYER.field_value_double
    return PLAYER.field_value_complex


def code_colours(state: State, seat: int) -> tuple[int, ...]:
    return CONTENT.codes[state.players[seat].code].colours


def is_target(state: State, seat: int, field: int) -> bool:
    return CONTENT.codes[state.players[seat].code].targets[field] or BOARD.printed_targets[field]


def matches(state: State, seat: int) -> list[bool]:
    """Rulebook: "A match occurs when the color on the game board exactly matches the color shown on
    the corresponding field of your Code card." Blocked fields included."""
    code = code_colours(state, seat)
    return [colours.seen(state.lenses[f]) == code[f] for f in range(FIELDS)]


def field_score(state: State, seat: int, field: int) -> int:
    """What scoring ``field`` earns ``seat`` (0 without a match): 1-3, +2 on a target."""
    if colours.seen(state.lenses[field]) != code_colours(state, seat)[field]:
        return 0
    bonus = PLAYER.target_bonus if is_target(state, seat, field) else 0
    return field_value(state.lenses[field]) + bonus


def largest_area(match: list[bool]) -> int:
    """The largest group of orthogonally adjacent matches (diagonals do not connect)."""
    seen = [False] * FIELDS
    best = 0
    for start in range(FIELDS):
        if not match[start] or seen[start]:
            continue
        seen[start] = True
        stack, size = [start], 0
        while stack:
            field = stack.pop()
            size += 1
            for other in BOARD.neighbours[field]:
                if match[other] and not seen[other]:
                    seen[other] = True
                    stack.append(other)
        best = max(best, size)
    return best


def false_block_claims(state: State, seat: int) -> list[int]:
    """Blocked fields whose claim the Code card does not bear out: the colour does not
    match, or a claimed target is not one. A Block that claims nothing is no claim, so
    it is never false ("Validate Blocked Fields" checks claims)."""
    code = code_colours(state, seat)
    return [
        f
        for f in range(FIELDS)
        if state.blocked_by[f] == seat
        and not state.block_no_claim[f]
        and (
            colours.seen(state.lenses[f]) != code[f]
            or (state.block_target[f] and not is_target(state, seat, f))
        )
    ]


def false_proof_tokens(state: State, seat: int) -> list[int]:
    code = code_colours(state, seat)
    proof = state.players[seat].proof
    return [f for f in range(FIELDS) if proof[f] >= 0 and proof[f] != code[f]]


@dataclass(frozen=True)
class Tally:
    """One player's end-game checklist."""

    treasure: int  # held when the game ended
    fields: int  # 1. unblocked fields scored
    false_claims: int  # 1. blocked fields (and Proof tokens) found false
    area: int  # 2. size of the largest contiguous area
    area_bonus: int
    debts: int  # 3.
    passes: int
    serpents: int

    @property
    def total(self) -> int:
        penalty = self.false_claims * PLAYER.false_claim_penalty
        return (
            self.treasure
            + self.fields
            - penalty
            + self.area_bonus
            - self.debts
            - self.passes
            - self.serpents
        )


def tallies(state: State) -> tuple[Tally, Tally]:
    areas = [largest_area(matches(state, seat)) for seat in (0, 1)]
    out = []
    for seat in (0, 1):
        player = state.players[seat]
        fields = sum(field_score(state, seat, f) for f in range(FIELDS) if state.blocked_by[f] < 0)
        false = len(false_block_claims(state, seat)) + len(false_proof_tokens(state, seat))
        bonus = PLAYER.largest_area_bonus if areas[seat] > areas[1 - seat] else 0
        out.append(
            Tally(
                treasure=player.treasure,
                fields=fields,
                false_claims=false,
                area=areas[seat],
                area_bonus=bonus,
                debts=sum(PLAYER.debt_costs[: player.debts]),
                passes=sum(PLAYER.pass_costs[: player.passes]),
                serpents=sum(PLAYER.serpent_costs[: player.serpents_removed]),
            )
        )
    return out[0], out[1]


def _line(seat: int, t: Tally) -> str:
    return (
        f"{SEAT_NAMES[seat]}: {t.treasure} held + {t.fields} fields"
        f" - {t.false_claims}x{PLAYER.false_claim_penalty} false claims"
        f" + {t.area_bonus} area ({t.area}) - {t.debts} debt - {t.passes} pass"
        f" - {t.serpents} serpents = {t.total}"
    )


def final_outcome(state: State) -> Outcome:
    """Rulebook: "The player with the most Treasures at the end of the game is the winner." A tie
    goes to the player not holding the Starting Player token; if both have 0 or fewer
    Treasures, both lose."""
    sun, moon = tallies(state)
    scores = (sun.total, moon.total)
    details = [_line(0, sun), _line(1, moon)]
    second = 1 - state.starting
    if max(scores) <= 0:
        return Outcome(scores, (), "BOTH_OUT_OF_TREASURE", tuple(details))
    if scores[0] == scores[1]:
        details.append(f"tie: {SEAT_NAMES[second]} moved second and wins")
        return Outcome(scores, (second,), "TIE_SECOND_PLAYER", tuple(details))
    winner = 0 if scores[0] > scores[1] else 1
    reason = "OUT_OF_TREASURE" if scores[1 - winner] <= 0 else "MOST_TREASURE"
    return Outcome(scores, (winner,), reason, tuple(details))


def loss_outcome(state: State, loser: int) -> Outcome:
    """Rulebook: "If you are unable to make a valid placement on the board, even by taking on Debt,
    and cannot pass, you immediately lose the game." """
    scores = (state.players[0].treasure, state.players[1].treasure)
    details = (
        f"{SEAT_NAMES[loser]} could make no valid placement, even with Debt, and could not pass",
    )
    return Outcome(scores, (1 - loser,), "NO_VALID_PLACEMENT", details)
