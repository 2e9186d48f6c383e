"""Winning the Game, players running out of cards, and the round limit's tie-break.

"A player wins when they claim all Anchor Points set for the scenario, or if they are the
only player left with cards in their deck, discard pile, or hand. Previously played
Avatar, Item, or Remains in Play cards do not count if they are still in play."
"""

from __future__ import annotations

from services.kit.engine import Event, Outcome

from . import pieces
from .state import State, Step

ALL_ANCHOR_POINTS = "ALL_ANCHOR_POINTS"
LAST_WITH_CARDS = "LAST_WITH_CARDS"
NO_CARDS_LEFT = "NO_CARDS_LEFT"
ROUND_LIMIT = "ROUND_LIMIT"


def cards_left(state: State, seat: int) -> int:
    """Hand, deck and discard pile; a card being played still counts until it lands."""
    playing = 1 if state.playing >= 0 and state.active == seat else 0
    return state.players[seat].cards_left() + playing


def team_of(state: State, seat: int) -> tuple[int, ...]:
    team = state.players[seat].team
    return tuple(p.seat for p in state.players if p.team == team)


def anchors_held(state: State, seat: int) -> int:
    """Anchor Points held by the seat's team (by the seat alone without teams)."""
    team = state.players[seat].team
    return sum(1 for owner in state.claims.values() if state.players[owner].team == team)


def finish(state: State, winners: tuple[int, ...], reason: str, events: list[Event]) -> None:
    state.winners = tuple(sorted(winners))
    state.end_reason = reason
    state.step = Step.OVER
    state.tasks.clear()
    names = ", ".join(pieces.seat_name(state, s) for s in state.winners) or "nobody"
    events.append(
        Event(
            "game_over",
            f"game over ({reason}): {names} win(s)",
            None,
            {"winners": list(state.winners), "reason": reason},
        )
    )


def check_anchor_win(state: State, seat: int, events: list[Event]) -> bool:
    if anchors_held(state, seat) == len(state.anchors):
        finish(state, team_of(state, seat), ALL_ANCHOR_POINTS, events)
        return True
    return False


def check(state: State, events: list[Event]) -> bool:
    """Put out every player left without cards, then end the game when one team (or
    player) alone has cards. True when the game is over."""
    if state.step == Step.OVER:
        return True
    for player in state.players:
        if not player.out and cards_left(state, player.seat) == 0:
            player.out = True
            events.append(
                Event(
                    "out",
                    f"{pieces.seat_name(state, player.seat)} has no cards left and is out",
                    player.seat,
                )
            )
            for avatar in sorted(
                (a for a in state.avatars.values() if a.owner == player.seat),
                key=lambda a: a.uid,
            ):
                pieces.remove_from_game(state, avatar, events, why="its player is out")
    alive = sorted({p.team for p in state.players if not p.out})
    if state.step == Step.PLACE_STONE or len(alive) > 1:
        return False
    if alive:
        winners = tuple(p.seat for p in state.players if p.team == alive[0])
        finish(state, winners, LAST_WITH_CARDS, events)
    else:
        finish(state, (), NO_CARDS_LEFT, events)
    return True


def round_limit(state: State, events: list[Event]) -> None:
    """The rule option's tie-break: most Anchor Points held, then most cards left (a team
    counts its players together); still equal, a shared win."""
    teams = sorted({p.team for p in state.players})

    def key(team: int) -> tuple[int, int]:
        seats = [p.seat for p in state.players if p.team == team]
        anchors = sum(1 for owner in state.claims.values() if owner in seats)
        return anchors, sum(cards_left(state, s) for s in seats)

    best = max(key(t) for t in teams if any(not p.out for p in state.players if p.team == t))
    winners = tuple(
        p.seat for p in state.players if key(p.team) == best and not _team_out(state, p.team)
    )
    finish(state, winners, ROUND_LIMIT, events)


def _team_out(state: State, team: int) -> bool:
    return all(p.out for p in state.players if p.team == team)


def outcome(state: State) -> Outcome | None:
    if state.step != Step.OVER:
        return None
    scores = tuple(cards_left(state, p.seat) for p in state.players)
    details = tuple(
        f"{pieces.seat_name(state, p.seat)} ({p.realm}): {scores[p.seat]} cards left, "
        f"{sum(1 for o in state.claims.values() if o == p.seat)} Anchor Point(s)"
        + (", out" if p.out else "")
        for p in state.players
    )
    return Outcome(scores, state.winners, state.end_reason, details)
