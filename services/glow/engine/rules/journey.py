"""Afternoon – Continue Their Journey: every seat at once, on either side of the board.

The Province of Shadows: the company moves space by space ("go 12 die", "go 12 foot",
"go 12"), never twice through one space in a round, may camp in a village it enters,
and stops with "end". The Archipelago of Darkness: one boat moves one link ("sail 0 1")
or none ("end").
"""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import rulebook
from ..content import ARCHIPELAGO, ELEMENTS, PROVINCE, Effect
from ..dice import counted, counts, symbol
from ..effects import apply_tokens, player_name, spell_text, to_cemetery
from ..moves import FOOT, FREE, HIDDEN, USE_DIE, Camp, CancelSpell, EndJourney, Go, Lose, Sail
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


def off_board(move: object) -> str | None:
    """Why a spot or island of ``move`` is on no side of the journey board, or None.

    Its text form takes any number 0-999 (the board decides the rest), so only the board
    can tell 99 from a spot: such a move is malformed, as any argument out of range is.
    """
    if isinstance(move, Go) and move.spot >= len(PROVINCE.spots):
        last = len(PROVINCE.spots) - 1
        return f"spot {move.spot} is not on {PROVINCE.title} (spots 0-{last})"
    if isinstance(move, Sail):
        last = len(ARCHIPELAGO.islands) - 1
        for island in (move.from_island, move.to_island):
            if island > last:
                return f"island {island} is not on {ARCHIPELAGO.title} (islands 0-{last})"
    return None


def _check_done(state: State, player: Player) -> None:
    """A seat with nothing left but "end" has finished its journey."""
    if player.stage != JOURNEY:
        return
    if _province(state):
        left = player.in_village or bool(_steps(state, player))
    else:
        left = bool(_passages(state, player))
    if not left:
        player.stage = IDLE
        player.done = True


def _unused_die(state: State, player: Player, element: int) -> int:
    for die in counted(player):
        if die not in player.used and symbol(state, die) == element:
            return die
    return -1


# --- The Province of Shadows: the company goes space by space, may camp, then ends -------


def _ways(state: State, player: Player, n: int, c: list[int]) -> list[int]:
    """How the company may pay to enter spot ``n`` now (``c``: its dice's counts)."""
    ways = []
    footprints = player.footprints
    spot = PROVINCE.spots[n]
    cost = max(0, -spot.on_enter.footprints)
    if spot.need >= 0:
        if footprints >= cost and _unused_die(state, player, spot.need) >= 0:
            ways.append(USE_DIE)
        if footprints >= cost + 1:
            ways.append(FOOT)
    elif spot.avoid >= 0:
        if not c[spot.avoid]:
            if footprints >= cost:
                ways.append(FREE)
        elif footprints >= cost + 1:
            ways.append(FOOT)
    elif footprints >= cost:
        ways.append(FREE)
    return ways


def _steps(state: State, player: Player) -> list[tuple[int, int]]:
    """(spot, payment) of every space the company may enter now, sorted."""
    c = counts(state, player)
    steps = [
        (n, way)
        for n in PROVINCE.links[player.company]
        if n not in player.visited
        for way in _ways(state, player, n, c)
    ]
    steps.sort()
    return steps


def go_moves(state: State, seat: int) -> list[Go]:
    return [Go(n, pay) for n, pay in _steps(state, state.players[seat])]


def passage_cost(state: State, player: Player, a: int, b: int) -> int:
    """Footprints to sail from a to b: one per missing element, plus the link's own cost.

    The player presents the dice they choose, so having more different elements than
    the link asks never closes it (Example 4, the red player).
    """
    passage = ARCHIPELAGO.passages[(min(a, b), max(a, b))]
    c = counts(state, player)
    different = sum(1 for e in ELEMENTS if c[e])
    return max(0, passage.need_min - different) + passage.footprints


def _open(state: State, player: Player, a: int, b: int) -> bool:
    """Whether a boat on island ``a`` may sail the link to ``b`` now."""
    if b != ARCHIPELAGO.start and b in player.boats:
        return False
    return player.footprints >= passage_cost(state, player, a, b)


def _passages(state: State, player: Player) -> list[tuple[int, int]]:
    """(from, to) of every link a boat may sail now."""
    return [
        (a, b)
        for a in sorted(set(player.boats))
        for b in ARCHIPELAGO.links[a]
        if _open(state, player, a, b)
    ]


def sail_moves(state: State, seat: int) -> list[Sail]:
    return [Sail(a, b) for a, b in _passages(state, state.players[seat])]


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


def go(state: State, seat: int, move: Go) -> list[Event]:
    player = state.players[seat]
    n, pay = move.spot, move.payment
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


def _cannot_go(state: State, seat: int, move: Go) -> str:
    if move.spot in state.players[seat].visited:
        return "a company cannot go past the same space twice during the same round"
    return "that space is not next to the company, or its condition or footprint cost cannot be met"


def _can_go(state: State, seat: int, move: Go) -> bool:
    player = state.players[seat]
    n = move.spot
    if n not in PROVINCE.links[player.company] or n in player.visited:
        return False
    return move.payment in _ways(state, player, n, counts(state, player))


GOING = Decision(
    rule=rulebook.PROVINCE_JOURNEY, moves=go_moves, allows=_can_go, explain=_cannot_go, do=go
)


def camp_moves(state: State, seat: int) -> list[Camp]:
    return [Camp()] if state.players[seat].in_village else []


def camp(state: State, seat: int, move: Camp) -> list[Event]:
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


def _in_village(state: State, seat: int, move: Camp) -> bool:
    return state.players[seat].in_village


CAMPING = Decision(rule=rulebook.PROVINCE_JOURNEY, moves=camp_moves, allows=_in_village, do=camp)


def end_moves(state: State, seat: int) -> list[EndJourney]:
    return [EndJourney()]


def end(state: State, seat: int, move: EndJourney) -> list[Event]:
    player = state.players[seat]
    player.stage = IDLE
    player.done = True
    return [Event("end", f"{player_name(state, seat)} ends the journey for today", seat)]


def _always(state: State, seat: int, move: EndJourney) -> bool:
    return True


ENDING_THE_PROVINCE_JOURNEY = Decision(
    rule=rulebook.PROVINCE_JOURNEY, moves=end_moves, allows=_always, do=end
)


# --- The Archipelago of Darkness: one boat sails one link, or none ------------------------


def sail(state: State, seat: int, move: Sail) -> list[Event]:
    player = state.players[seat]
    a, b = move.from_island, move.to_island
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


def _cannot_sail(state: State, seat: int, move: Sail) -> str:
    if move.to_island in state.players[seat].boats and move.to_island != 0:
        return "the player cannot place several of their boats on the same island"
    return "no such link from a boat, or not enough different symbols or footprints"


def _can_sail(state: State, seat: int, move: Sail) -> bool:
    player = state.players[seat]
    a, b = move.from_island, move.to_island
    return a in player.boats and b in ARCHIPELAGO.links[a] and _open(state, player, a, b)


SAILING = Decision(
    rule=rulebook.ARCHIPELAGO_JOURNEY,
    moves=sail_moves,
    allows=_can_sail,
    explain=_cannot_sail,
    do=sail,
)
ENDING_THE_ARCHIPELAGO_JOURNEY = Decision(
    rule=rulebook.ARCHIPELAGO_JOURNEY, moves=end_moves, allows=_always, do=end
)


# --- a skull space: a companion to the cemetery, or a spell cancelled --------------------


def lose_moves(state: State, seat: int) -> list[Lose]:
    return [Lose(c) for c in sorted(state.players[seat].companions)]


def lose(state: State, seat: int, move: Lose) -> list[Event]:
    """The companion goes to the cemetery without its effect."""
    events = to_cemetery(state, seat, move.companion, "a skull space")
    return events + _after_skull(state, seat)


def cancel_moves(state: State, seat: int) -> list[CancelSpell]:
    player = state.players[seat]
    hidden = [CancelSpell(HIDDEN)] if player.hidden_spells else []
    return hidden + [CancelSpell(s) for s in sorted(player.spells)]


def cancel(state: State, seat: int, move: CancelSpell) -> list[Event]:
    """The spell token goes back to the box without its effect."""
    player = state.players[seat]
    if move.spell == HIDDEN:
        spell = player.hidden_spells.pop(0)
        what = "a face-down spell"
    else:
        spell = move.spell
        player.spells.remove(spell)
        what = spell_text(spell)
    insort(state.spell_box, spell)
    events = [
        Event(
            "spell_cancelled",
            f"{player_name(state, seat)} cancels {what} (a skull space)",
            seat,
            {"spell": 0 if move.spell == HIDDEN else spell},
        )
    ]
    return events + _after_skull(state, seat)


def _after_skull(state: State, seat: int) -> list[Event]:
    player = state.players[seat]
    if _province(state):
        player.stage = JOURNEY
        _check_done(state, player)
    else:
        player.stage = IDLE
        player.done = True
    return []


def _nothing_to_lose(state: State, seat: int, move: Lose | CancelSpell) -> str:
    return "the player has no such companion or spell"


def _has_companion(state: State, seat: int, move: Lose) -> bool:
    return move.companion in state.players[seat].companions


def _has_spell(state: State, seat: int, move: CancelSpell) -> bool:
    player = state.players[seat]
    if move.spell == HIDDEN:
        return bool(player.hidden_spells)
    return move.spell in player.spells


LOSING = Decision(
    rule=rulebook.COMMON_JOURNEY_RULES,
    moves=lose_moves,
    allows=_has_companion,
    explain=_nothing_to_lose,
    do=lose,
)
CANCELLING = Decision(
    rule=rulebook.COMMON_JOURNEY_RULES,
    moves=cancel_moves,
    allows=_has_spell,
    explain=_nothing_to_lose,
    do=cancel,
)
