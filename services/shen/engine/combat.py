"""Combat: attacks on a Realm Stone, Ranged Attacks and Melee Attacks.

A combat is a run of tasks on the state's task stack (see turn.py; the decisions among
them are phases/combat.py's):

    support (attacker)   may play one combat card and use one combat ability, or pass
    support (defender)   the same
    resolve              dice from the state's Rng; winner, cards lost, removal on double
    yield                the loser may remove the Avatar instead of losing cards
    lose                 the loser chooses each card lost
    position             melee: the winner takes the space, the loser retreats
    winner               the winning Avatar may use one of its abilities
    combat_end
"""

from __future__ import annotations

from services.kit.engine import Event

from . import board as geometry
from . import pieces, shen
from .content import CARDS
from .state import Combat, State

ATTACKER, DEFENDER = 0, 1


def start(
    state: State,
    kind: str,
    attacker_uid: int,
    origin: int,
    target: int,
    defender: int,
    defender_uid: int,
    events: list[Event],
) -> None:
    attacker = state.avatars[attacker_uid]
    state.combat = Combat(
        kind, attacker.owner, defender, attacker_uid, defender_uid, origin, target
    )
    what = {
        "stone": "attacks the Realm Stone",
        "ranged": "makes a Ranged Attack on",
        "melee": "makes a Melee Attack on",
    }[kind]
    events.append(
        Event(
            "attack",
            f"{CARDS[attacker.card].name} of {pieces.seat_name(state, attacker.owner)} at "
            f"{geometry.name(origin)} {what} {geometry.name(target)}",
            attacker.owner,
            {"kind": kind, "from": geometry.name(origin), "at": geometry.name(target)},
        )
    )
    state.tasks.append(("combat_end",))
    state.tasks.append(("resolve",))
    state.tasks.append(("support", defender, DEFENDER))
    state.tasks.append(("support", attacker.owner, ATTACKER))


def side_loc(combat: Combat, side: int) -> int:
    """Whose Shén pays for a side's cards and abilities: the attacker's around the space
    it attacks from, the defender's around the defended space or vertex."""
    return combat.origin if side == ATTACKER else combat.target


def side_avatar(state: State, combat: Combat, side: int) -> pieces.Avatar | None:
    uid = combat.att_uid if side == ATTACKER else combat.def_uid
    return state.avatars.get(uid)


def _roll(state: State, dice: int) -> tuple[int, ...]:
    return tuple(state.rng.randint(1, 6) for _ in range(max(0, dice)))


def resolve(state: State, events: list[Event]) -> None:
    """Roll and decide; push what follows (yield, lose, position, winner) on the stack."""
    combat = state.combat
    assert combat is not None
    attacker = state.avatars.get(combat.att_uid)
    if attacker is None:
        events.append(Event("combat_void", "the attacking Avatar is gone: no combat", None))
        return
    defender = state.avatars.get(combat.def_uid)
    att, dfn = combat.attacker, combat.defender
    if combat.kind == "stone":
        # "The attacker automatically wins an attack on a Realm Stone (no dice are rolled)".
        power = pieces.trait(state, attacker, "melee") + combat.power[ATTACKER]
        combat.winner, combat.loss = ATTACKER, max(0, power - combat.ward[DEFENDER])
        events.append(
            Event(
                "combat_result",
                f"the Realm Stone's owner {pieces.seat_name(state, dfn)} loses"
                f" {combat.loss} card(s)",
                att,
                {"winner": "attacker", "loss": combat.loss},
            )
        )
        if combat.loss:
            state.tasks.append(("lose", dfn, combat.loss))
        return
    if defender is None:
        events.append(Event("combat_void", "the defending Avatar is gone: no combat", None))
        return
    if combat.kind == "melee":
        att_power = pieces.trait(state, attacker, "melee") + combat.power[ATTACKER]
        def_power = pieces.trait(state, defender, "defense") + combat.power[DEFENDER]
        att_dice = att_power + pieces.count(state, att, combat.origin)
        def_dice = def_power + pieces.count(state, dfn, combat.target)
    else:
        att_power = pieces.trait(state, attacker, "ranged") + combat.power[ATTACKER]
        def_power = pieces.trait(state, defender, "defense") + combat.power[DEFENDER]
        att_dice, def_dice = att_power, def_power
    rolls = (_roll(state, att_dice), _roll(state, def_dice))
    combat.rolls = rolls
    state.last_roll = rolls
    a, d = sum(rolls[0]), sum(rolls[1])
    # "The defender wins if there is a tie."
    combat.winner = ATTACKER if a > d else DEFENDER
    loser = 1 - combat.winner
    won, lost = (a, d) if combat.winner == ATTACKER else (d, a)
    if combat.kind == "ranged" and combat.winner == DEFENDER:
        # "the defender wins but no cards are lost".
        combat.loss, combat.double = 0, False
    else:
        power = att_power if combat.winner == ATTACKER else def_power
        combat.loss = max(0, power - combat.ward[loser])
        # "If the winner's combat result is twice that of the defeated" (a tie is no win).
        combat.double = won > lost and won >= 2 * lost
    events.append(
        Event(
            "combat_result",
            f"{combat.kind}: attack {a} {list(rolls[0])} against defence {d} {list(rolls[1])};"
            f" the {'attacker' if combat.winner == ATTACKER else 'defender'} wins"
            + (f", {combat.loss} card(s) lost" if combat.loss else "")
            + (", the defeated Avatar is removed (double)" if combat.double else ""),
            att,
            {
                "attack": list(rolls[0]),
                "defense": list(rolls[1]),
                "winner": "attacker" if combat.winner == ATTACKER else "defender",
                "loss": combat.loss,
                "double": combat.double,
            },
        )
    )
    loser_avatar = attacker if loser == ATTACKER else defender
    loser_seat = att if loser == ATTACKER else dfn
    winner_avatar = defender if loser == ATTACKER else attacker
    # Stack order (last pushed runs first): yield/removal, lose, position, winner ability.
    state.tasks.append(("winner", winner_avatar.owner, winner_avatar.uid))
    if combat.kind == "melee":
        state.tasks.append(("position",))
    if combat.double:
        pieces.remove_from_game(state, loser_avatar, events, why="defeated by double")
        if combat.loss:
            state.tasks.append(("lose", loser_seat, combat.loss))
    elif combat.loss:
        state.tasks.append(("yield", loser_seat, loser_avatar.uid, combat.loss))


def _valid_step(state: State, avatar: pieces.Avatar, frm: int, to: int) -> bool:
    """Could the Avatar stand on ``to`` after one step from ``frm`` (used for retreats)?"""
    if to not in state.board.on_board or to in state.at:
        return False
    if avatar.loc >= geometry.VERTEX:
        return to >= geometry.VERTEX and state.counters.get(to) == avatar.owner
    if to >= geometry.VERTEX:
        return False
    for step, passed in state.board.steps[frm]:
        if step == to:
            return passed < 0 or passed not in state.stones
    return False


def retreat_spots(state: State, avatar: pieces.Avatar) -> list[int]:
    """ "place that Avatar next to that player's Realm Stone": the free spaces touching it
    (or, for a Spirit Avatar, the free vertices next to it holding its owner's counter)."""
    stone = state.players[avatar.owner].stone
    b = state.board
    if avatar.loc >= geometry.VERTEX:
        return [
            v for v in b.links[stone] if state.counters.get(v) == avatar.owner and v not in state.at
        ]
    return [s for s in b.touching[stone] if s not in state.at]


def position(state: State, events: list[Event]) -> None:
    """After a melee: "The winner places their Avatar in the attacked space/vertex (a
    winning defender stays put), while a defeated attacking Avatar must retreat back one
    space/vertex along the direction they moved from. A defeated defending Avatar is moved
    one space/vertex away from the direction of the attack."""
    combat = state.combat
    assert combat is not None
    if combat.winner == DEFENDER:
        # The attacker never left the space it attacked from: retreating back is staying.
        attacker = state.avatars.get(combat.att_uid)
        if attacker is not None:
            events.append(
                Event(
                    "retreated",
                    f"{CARDS[attacker.card].name} falls back to {geometry.name(attacker.loc)}",
                    attacker.owner,
                    {"at": geometry.name(attacker.loc)},
                )
            )
        return
    state.tasks.append(("enter",))
    defender = state.avatars.get(combat.def_uid)
    if defender is None:
        return
    (ox, oy), (tx, ty) = geometry.xy(combat.origin), geometry.xy(combat.target)
    base = geometry.VERTEX if combat.target >= geometry.VERTEX else 0
    nx, ny = 2 * tx - ox, 2 * ty - oy
    away = base + ny * 16 + nx if 0 <= nx < 16 and 0 <= ny < 16 else -1
    if away >= 0 and _valid_step(state, defender, combat.target, away):
        place_retreat(state, defender, away, events)
        return
    spots = retreat_spots(state, defender)
    if not spots:
        pieces.remove_from_game(state, defender, events, why="no space to retreat to")
    elif len(spots) == 1:
        place_retreat(state, defender, spots[0], events)
    else:
        state.tasks.append(("retreat", defender.owner, defender.uid, tuple(spots)))


def place_retreat(state: State, avatar: pieces.Avatar, loc: int, events: list[Event]) -> None:
    events.append(
        Event(
            "retreated",
            f"{CARDS[avatar.card].name} of {pieces.seat_name(state, avatar.owner)} retreats "
            f"from {geometry.name(avatar.loc)} to {geometry.name(loc)}",
            avatar.owner,
            {"from": geometry.name(avatar.loc), "to": geometry.name(loc)},
        )
    )
    pieces.move_to(state, avatar, loc)


def enter(state: State, events: list[Event]) -> None:
    """The winning attacker takes the attacked space or vertex. A Spirit Avatar taking a
    vertex converts the Shén counter there (README: readings)."""
    combat = state.combat
    assert combat is not None
    attacker = state.avatars.get(combat.att_uid)
    if attacker is None or combat.target in state.at:
        return
    frm = attacker.loc
    pieces.move_to(state, attacker, combat.target)
    events.append(
        Event(
            "moved",
            f"{CARDS[attacker.card].name} takes {geometry.name(combat.target)}",
            attacker.owner,
            {"from": geometry.name(frm), "to": geometry.name(combat.target)},
        )
    )
    owner = state.counters.get(combat.target)
    if combat.target >= geometry.VERTEX and owner is not None and owner != attacker.owner:
        shen.convert(state, attacker.owner, combat.target, events)
