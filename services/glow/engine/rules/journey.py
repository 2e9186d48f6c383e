"""Afternoon – Continue Their Journey: every seat at once, on either side of the board.

The Province of Shadows: the company moves space by space ("go 12 die", "go 12 foot",
"go 12"), never twice through one space in a round, may camp in a village it enters,
and stops with "end". The Archipelago of Darkness: one boat moves one link ("sail 0 1")
or none ("end").
"""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event

from ..content import ARCHIPELAGO, COMPANIONS, ELEMENTS, PROVINCE, Effect
from ..dice import counted, counts, symbol
from ..effects import apply_tokens, player_name, spell_text, to_cemetery
from ..moves import CAMP, CANCEL, END, FOOT, FREE, GO, HIDDEN, LOSE, SAIL, USE_DIE, Move
from ..state import AFTERNOON, IDLE, JOURNEY, SKULL, Player, State


def start_afternoon(state: State) -> list[Event]:
    state.step = AFTERNOON
    for player in state.players:
        player.visited = [player.company]
        player.in_village = False
        player.used = []
        player.stage = JOURNEY
        player.done = False
        _check_done(state, player)
    return []


def _province(state: State) -> bool:
    return state.options.board == "province"


def _check_done(state: State, player: Player) -> None:
    """A seat with nothing left but "end" has finished its journey."""
    if player.stage != JOURNEY:
        return
    moves = province_moves(state, player) if _province(state) else sail_moves(state, player)
    if moves == [Move(END)]:
        player.stage = IDLE
        player.done = True


def journey_moves(state: State, player: Player) -> list[Move]:
    if player.stage == SKULL:
        return skull_moves(player)
    if _province(state):
        return province_moves(state, player)
    return sail_moves(state, player)


def _unused_die(state: State, player: Player, element: int) -> int:
    for die in counted(player):
        if die not in player.used and symbol(state, die) == element:
            return die
    return -1


def province_moves(state: State, player: Player) -> list[Move]:
    moves = []
    footprints = player.footprints
    c = counts(state, player)
    for n in PROVINCE.links[player.company]:
        if n in player.visited:
            continue
        spot = PROVINCE.spots[n]
        cost = max(0, -spot.on_enter.footprints)
        if spot.need >= 0:
            if footprints >= cost and _unused_die(state, player, spot.need) >= 0:
                moves.append(Move(GO, n, USE_DIE))
            if footprints >= cost + 1:
                moves.append(Move(GO, n, FOOT))
        elif spot.avoid >= 0:
            if not c[spot.avoid]:
                if footprints >= cost:
                    moves.append(Move(GO, n, FREE))
            elif footprints >= cost + 1:
                moves.append(Move(GO, n, FOOT))
        elif footprints >= cost:
            moves.append(Move(GO, n, FREE))
    if player.in_village:
        moves.append(Move(CAMP))
    moves.append(Move(END))
    moves.sort()
    return moves


def passage_cost(state: State, player: Player, a: int, b: int) -> int:
    """Footprints to sail from a to b: one per missing element, plus the link's own cost.

    The player presents the dice they choose, so having more different elements than
    the link asks never closes it (Example 4, the red player).
    """
    passage = ARCHIPELAGO.passages[(min(a, b), max(a, b))]
    c = counts(state, player)
    different = sum(1 for e in ELEMENTS if c[e])
    return max(0, passage.need_min - different) + passage.footprints


def sail_moves(state: State, player: Player) -> list[Move]:
    moves = []
    start = ARCHIPELAGO.start
    for a in sorted(set(player.boats)):
        for b in ARCHIPELAGO.links[a]:
            if b != start and b in player.boats:
                continue
            if player.footprints >= passage_cost(state, player, a, b):
                moves.append(Move(SAIL, a, b))
    moves.append(Move(END))
    return moves


def skull_moves(player: Player) -> list[Move]:
    moves = [Move(LOSE, c) for c in sorted(player.companions)]
    moves += [Move(CANCEL, s) for s in sorted(player.spells)]
    if player.hidden_spells:
        moves.append(Move(CANCEL, HIDDEN))
    return sorted(moves)


def _effect(state: State, seat: int, effect: Effect, where: str) -> list[Event]:
    """A reserve-pool, loss or footprint-cost space; a skull asks for a choice."""
    player = state.players[seat]
    events = apply_tokens(state, seat, effect, where)
    if effect.skull:
        if player.companions or player.spells or player.hidden_spells:
            player.stage = SKULL
        else:
            events.append(
                Event("skull", f"{player_name(state, seat)}: a skull, with nothing to lose", seat)
            )
    return events


def go(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    n, pay = move.a, move.b
    spot = PROVINCE.spots[n]
    how = "freely"
    if pay == USE_DIE:
        die = _unused_die(state, player, spot.need)
        player.used.append(die)
        how = f"with die {die}"
    elif pay == FOOT:
        player.footprints -= 1
        how = "with a footprint"
    a = player.company
    player.company = n
    player.visited.append(n)
    player.in_village = spot.village >= 0
    events = [
        Event(
            "go",
            f"{player_name(state, seat)}'s company goes from {a} to {n} {how}",
            seat,
            {"from": a, "to": n, "pay": pay},
        )
    ]
    on_way = PROVINCE.on_way[(min(a, n), max(a, n))]
    events += _effect(state, seat, on_way, f"on the way to {n}")
    events += _effect(state, seat, spot.on_enter, f"entering {n}")
    if player.stage == JOURNEY:
        _check_done(state, player)
    return events


def camp(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    player.encampment = player.company
    player.stage = IDLE
    player.done = True
    return [
        Event(
            "camp",
            f"{player_name(state, seat)} places the encampment in village {player.company}",
            seat,
            {"spot": player.company},
        )
    ]


def sail(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    a, b = move.a, move.b
    cost = passage_cost(state, player, a, b)
    player.footprints -= cost
    player.boats.remove(a)
    player.boats.append(b)
    player.boats.sort()
    player.stage = IDLE
    events = [
        Event(
            "sail",
            f"{player_name(state, seat)} sails a boat from island {a} to {b}"
            + (f", paying {cost} footprints" if cost else ""),
            seat,
            {"from": a, "to": b, "footprints": cost},
        )
    ]
    events += _effect(state, seat, ARCHIPELAGO.islands[b].on_arrival, f"landing on {b}")
    if player.stage != SKULL:
        player.done = True
    return events


def end(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    player.stage = IDLE
    player.done = True
    return [Event("end", f"{player_name(state, seat)} ends the journey for today", seat)]


def skull(state: State, seat: int, move: Move) -> list[Event]:
    """A skull space: a companion to the cemetery without its effect, or a spell cancelled."""
    player = state.players[seat]
    if move.kind == LOSE:
        events = to_cemetery(state, seat, move.a, "a skull space")
    else:
        if move.a == HIDDEN:
            spell = player.hidden_spells.pop(0)
            what = "a face-down spell"
        else:
            spell = move.a
            player.spells.remove(spell)
            what = spell_text(spell)
        insort(state.spell_box, spell)
        events = [
            Event(
                "spell_cancelled",
                f"{player_name(state, seat)} cancels {what} (a skull space)",
                seat,
                {"spell": 0 if move.a == HIDDEN else spell},
            )
        ]
    if _province(state):
        player.stage = JOURNEY
        _check_done(state, player)
    else:
        player.stage = IDLE
        player.done = True
    return events


__all__ = ["COMPANIONS", "journey_moves", "start_afternoon"]
