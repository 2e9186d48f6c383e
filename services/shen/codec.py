"""Shén's engine values <-> its protobuf messages, and nothing else."""

from __future__ import annotations

from tabletop.shen.v1 import shen_pb2 as pb

from services.kit.engine import BadOptions, MalformedMove

from . import engine
from .engine import board
from .engine import moves as m
from .engine.content import CARDS, POOL, Card, Effect
from .engine.state import MAX_ITEMS

MAX_SEATS = engine.GAME.max_players
# An ability index counts the Avatar's own abilities, then its Items' (at most three).
_AVATAR_ABILITIES = max((len(c.abilities) for c in CARDS if c.is_avatar), default=0)
_ITEM_ABILITIES = max((len(c.abilities) for c in CARDS if c.type == "item"), default=0)
MAX_ABILITIES = _AVATAR_ABILITIES + MAX_ITEMS * _ITEM_ABILITIES
MAX_NAME = 64  # longer strings are refused without being echoed back
MAX_DECK_LIST = 4096  # a 60-card deck list is far shorter

_STEPS = {
    "place realm stone": pb.STEP_PLACE_REALM_STONE,
    "recovery and set-up phase": pb.STEP_RECOVERY_AND_SET_UP,
    "celestial influence phase": pb.STEP_CELESTIAL_INFLUENCE,
    "claim, move, and attack phase": pb.STEP_CLAIM_MOVE_AND_ATTACK,
    "moving an avatar": pb.STEP_MOVING,
    "after a move": pb.STEP_AFTER_MOVE,
    "game over": pb.STEP_OVER,
}
_PENDING = {
    "": pb.PENDING_NONE,
    "choose a card to lose": pb.PENDING_LOSE_CARDS,
    "remove the avatar or lose cards": pb.PENDING_REMOVE_AVATAR_OR_LOSE_CARDS,
    "choose a retreat next to the realm stone": pb.PENDING_RETREAT,
    "choose the opponent who loses cards": pb.PENDING_CHOOSE_FOE,
    "choose a target": pb.PENDING_TARGET,
    "combat: play a card or use an ability": pb.PENDING_COMBAT_SUPPORT,
    "the winning avatar may use an ability": pb.PENDING_WINNER_ABILITY,
}
_COMBATS = {
    "melee": pb.COMBAT_KIND_MELEE,
    "ranged": pb.COMBAT_KIND_RANGED,
    "stone": pb.COMBAT_KIND_REALM_STONE,
}
_CARD_TYPES = {
    "avatar": pb.CARD_TYPE_AVATAR,
    "item": pb.CARD_TYPE_ITEM,
    "instant": pb.CARD_TYPE_INSTANT,
    "remains": pb.CARD_TYPE_REMAINS_IN_PLAY,
}
_TIMINGS = {
    "": pb.TIMING_UNSPECIFIED,
    "main": pb.TIMING_MAIN,
    "action": pb.TIMING_ACTION,
    "combat": pb.TIMING_COMBAT,
}
_EFFECTS = {
    "draw": pb.EFFECT_KIND_DRAW,
    "recover": pb.EFFECT_KIND_RECOVER,
    "drain": pb.EFFECT_KIND_DRAIN,
    "place_shen": pb.EFFECT_KIND_PLACE_SHEN,
    "remove_shen": pb.EFFECT_KIND_REMOVE_SHEN,
    "convert_shen": pb.EFFECT_KIND_CONVERT_SHEN,
    "strike": pb.EFFECT_KIND_STRIKE,
    "banish": pb.EFFECT_KIND_BANISH,
    "power": pb.EFFECT_KIND_POWER,
    "ward": pb.EFFECT_KIND_WARD,
}


# --- options ------------------------------------------------------------------------------


def options_from_proto(message: pb.Options) -> engine.Options:
    """The engine's Options; the engine checks them against the players when it deals."""
    for name in ("size", "deck_size", "teams"):
        if getattr(message, name) < 0:
            raise BadOptions(f"{name} must be 0 (the default) or more")
    defaults = engine.Options()
    limit = message.round_limit if message.HasField("round_limit") else defaults.round_limit
    if limit < 0:
        raise BadOptions("round_limit must be 0 (none) or more")
    for name in ("anchor_points", "realms", "decks"):
        values = getattr(message, name)
        if len(values) > MAX_SEATS:
            raise BadOptions(f"{name} has at most {MAX_SEATS} entries")
    for text in (*message.anchor_points, *message.realms):
        if len(text) > MAX_NAME:
            raise BadOptions("an Anchor Point or Realm name is too long")
    if any(len(text) > MAX_DECK_LIST for text in message.decks):
        raise BadOptions(f"a deck list is at most {MAX_DECK_LIST} characters")
    return engine.Options(
        size=message.size or defaults.size,
        anchor_points=tuple(message.anchor_points),
        deck_size=message.deck_size or defaults.deck_size,
        realms=tuple(message.realms),
        decks=tuple(message.decks),
        teams=message.teams,
        round_limit=limit,
    )


# --- moves --------------------------------------------------------------------------------


def _location(text: str, field: str, want: str = "") -> int:
    """A location from its name: ``want`` "s" a space, "v" a vertex, "" either."""
    loc = board.parse(text) if len(text) <= 3 else None
    if loc is None or board.name(loc) != text:
        raise MalformedMove(
            f"{field} must name a space (c4, lower case) or a vertex (C4, capitals),"
            f" not {text[:8]!r}"
        )
    if want == "v" and not board.is_vertex(loc):
        raise MalformedMove(f"{field} must be a vertex, written in capitals (C4)")
    if want == "s" and board.is_vertex(loc):
        raise MalformedMove(f"{field} must be a space, written in lower case (c4)")
    return loc


def _card(card_id: str, field: str) -> int:
    index = POOL.by_id.get(card_id) if len(card_id) <= MAX_NAME else None
    if index is None:
        raise MalformedMove(f"{field} names no card of the pool: {card_id[:24]!r}")
    return index


def _number(value: int, high: int, field: str) -> int:
    if not 0 <= value < high:
        raise MalformedMove(f"{field} must be 0-{high - 1}, not {value}")
    return value


def move_from_proto(message: pb.Move) -> engine.Move:
    kind = message.WhichOneof("kind")
    if kind == "stone":
        return m.PlaceRealmStone(_location(message.stone.vertex, "vertex", "v"))
    if kind == "draw":
        return m.DRAW
    if kind == "shen":
        return m.PlaceShenCounter(_location(message.shen.vertex, "vertex", "v"))
    if kind == "play":
        return m.PlayCard(_card(message.play.card, "card"))
    if kind == "target":
        return m.ChooseTarget(_location(message.target.location, "location"))
    if kind == "foe":
        return m.ChooseFoe(_number(message.foe.seat, MAX_SEATS, "seat"))
    if kind == "claim":
        return m.ClaimAnchorPoint(_location(message.claim.space, "space", "s"))
    if kind == "siege":
        siege = message.siege
        return m.AttackRealmStone(
            _location(siege.avatar, "avatar"), _location(siege.stone, "stone", "v")
        )
    if kind == "step":
        origin = _location(message.step.origin, "origin")
        destination = _location(message.step.destination, "destination")
        if board.is_vertex(origin) != board.is_vertex(destination):
            raise MalformedMove("a step goes from a space to a space, or a vertex to a vertex")
        return m.MoveStep(origin, destination)
    if kind == "hold":
        return m.Hold(_location(message.hold.avatar, "avatar"))
    if kind == "stop":
        return m.STOP
    if kind == "ability":
        return m.UseAbility(_number(message.ability.index, MAX_ABILITIES, "index"))
    if kind == "ranged":
        return m.RangedAttack(_location(message.ranged.target, "target", "s"))
    if kind == "remove_avatar":
        return m.REMOVE_AVATAR
    if kind == "lose_cards":
        return m.LOSE_CARDS
    if kind == "retreat":
        return m.Retreat(_location(message.retreat.location, "location"))
    if kind == "lose_hand":
        return m.LoseFromHand(_card(message.lose_hand.card, "card"))
    if kind == "lose_deck":
        return m.LOSE_DECK
    if kind == "lose_discard":
        return m.LoseFromDiscard(_card(message.lose_discard.card, "card"))
    if kind == "pass_decision":
        return m.PASS
    if kind == "end_turn":
        return m.END
    raise MalformedMove("the move names no decision (set one field of Move.kind)")


def move_to_proto(move: engine.Move) -> pb.Move:
    name = board.name
    match move:
        case m.PlaceRealmStone(vertex):
            return pb.Move(stone=pb.PlaceRealmStone(vertex=name(vertex)))
        case m.Draw():
            return pb.Move(draw=pb.Draw())
        case m.PlaceShenCounter(vertex):
            return pb.Move(shen=pb.PlaceShenCounter(vertex=name(vertex)))
        case m.PlayCard(card):
            return pb.Move(play=pb.PlayCard(card=CARDS[card].id))
        case m.ChooseTarget(location):
            return pb.Move(target=pb.ChooseTarget(location=name(location)))
        case m.ChooseFoe(seat):
            return pb.Move(foe=pb.ChooseFoe(seat=seat))
        case m.ClaimAnchorPoint(space):
            return pb.Move(claim=pb.ClaimAnchorPoint(space=name(space)))
        case m.AttackRealmStone(avatar, stone):
            return pb.Move(siege=pb.AttackRealmStone(avatar=name(avatar), stone=name(stone)))
        case m.MoveStep(origin, destination):
            return pb.Move(step=pb.MoveStep(origin=name(origin), destination=name(destination)))
        case m.Hold(avatar):
            return pb.Move(hold=pb.Hold(avatar=name(avatar)))
        case m.StopMoving():
            return pb.Move(stop=pb.StopMoving())
        case m.UseAbility(index):
            return pb.Move(ability=pb.UseAbility(index=index))
        case m.RangedAttack(target):
            return pb.Move(ranged=pb.RangedAttack(target=name(target)))
        case m.RemoveAvatar():
            return pb.Move(remove_avatar=pb.RemoveAvatar())
        case m.LoseCards():
            return pb.Move(lose_cards=pb.LoseCards())
        case m.Retreat(location):
            return pb.Move(retreat=pb.Retreat(location=name(location)))
        case m.LoseFromHand(card):
            return pb.Move(lose_hand=pb.LoseFromHand(card=CARDS[card].id))
        case m.LoseFromDeck():
            return pb.Move(lose_deck=pb.LoseFromDeck())
        case m.LoseFromDiscard(card):
            return pb.Move(lose_discard=pb.LoseFromDiscard(card=CARDS[card].id))
        case m.Pass():
            return pb.Move(pass_decision=pb.Pass())
        case m.EndTurn():
            return pb.Move(end_turn=pb.EndTurn())
    raise ValueError(f"not a Shén move: {move!r}")


# --- views --------------------------------------------------------------------------------


def _traits(pairs) -> pb.Traits:
    values = dict(pairs)
    return pb.Traits(
        melee=values.get("melee", 0),
        defense=values.get("defense", 0),
        ranged=values.get("ranged", 0),
        movement=values.get("move", 0),
        shen=values.get("shen", 0),
    )


def _effect(effect: Effect) -> pb.Effect:
    return pb.Effect(kind=_EFFECTS[effect.kind], amount=effect.amount, range=effect.range)


def _describe(card: Card) -> pb.Card:
    message = pb.Card(
        id=card.id,
        name=card.name,
        realm=card.realm,
        type=_CARD_TYPES[card.type],
        cost=card.cost,
        spirit=card.is_spirit,
        abilities=[
            pb.Ability(
                name=a.name, cost=a.cost, timing=_TIMINGS[a.timing], effect=_effect(a.effect)
            )
            for a in card.abilities
        ],
        timing=_TIMINGS[card.timing],
    )
    if card.is_avatar:
        message.traits.CopyFrom(
            pb.Traits(
                melee=card.melee, defense=card.defense, ranged=card.ranged, movement=card.move
            )
        )
    if card.effect is not None:
        message.effect.CopyFrom(_effect(card.effect))
    if card.type == "item":
        message.bonus.CopyFrom(_traits(card.bonus))
    if card.type == "remains":
        message.aura.CopyFrom(_traits(card.aura))
    return message


_DESCRIBED = {card.id: _describe(card) for card in CARDS}


def view_to_proto(view: engine.View) -> pb.View:
    named: set[str] = set(view.hand or ())
    message = pb.View(
        size=view.size,
        hand=view.hand or (),
        active=view.active,
        to_act=view.to_act,
        step=_STEPS[view.step],
        pending=_PENDING[view.pending],
        pending_count=view.pending_count,
        turn=view.turn,
        first_player_rolls=[pb.RollOff(totals=totals) for totals in view.first_rolls],
        playing=view.playing,
        moving=view.moving,
        steps_left=view.steps_left,
        winners=view.winners,
        end_reason=view.reason,
    )
    if view.seat is not None:
        message.viewer = view.seat
    for space, holder in view.anchor_points:
        point = message.anchor_points.add(space=space)
        if holder >= 0:
            point.holder = holder
    stones, counters = message.realm_stones, message.shen_counters
    for vertex, seat in view.stones:
        stones.add(vertex=vertex, seat=seat)
    for vertex, seat in view.counters:
        counters.add(vertex=vertex, seat=seat)
    for avatar in view.avatars:
        message.avatars.add(
            uid=avatar.uid,
            card=avatar.card,
            owner=avatar.owner,
            location=avatar.at,
            ready=avatar.ready,
            items=avatar.items,
            traits=pb.Traits(
                melee=avatar.melee,
                defense=avatar.defense,
                ranged=avatar.ranged,
                movement=avatar.move,
            ),
            spirit=avatar.at[:1].isupper(),
        )
        named.add(avatar.card)
        named.update(avatar.items)
    for player in view.players:
        message.players.add(
            seat=player.seat,
            realm=player.realm,
            team=player.team,
            realm_stone=player.stone,
            hand_count=player.hand_count,
            deck_count=player.deck_count,
            discard=player.discard,
            removed=player.removed,
            remains_in_play=player.remains,
            anchor_points=player.anchor_points,
            out=player.out,
            turns=player.turns,
        )
        named.update(player.discard, player.removed, player.remains)
    if view.playing:
        named.add(view.playing)
    if view.combat is not None:
        fight = view.combat
        combat = message.combat
        combat.kind = _COMBATS[fight.kind]
        combat.attacker, combat.defender = fight.attacker, fight.defender
        combat.origin, combat.target = fight.origin, fight.target
        combat.attacker_power, combat.defender_power = fight.power
        combat.attacker_ward, combat.defender_ward = fight.ward
        if fight.rolls[0] or fight.rolls[1]:
            combat.dice.attacker.extend(fight.rolls[0])
            combat.dice.defender.extend(fight.rolls[1])
    if view.last_roll is not None:
        message.last_roll.attacker.extend(view.last_roll[0])
        message.last_roll.defender.extend(view.last_roll[1])
    message.cards.extend(_DESCRIBED[card_id] for card_id in sorted(named))
    return message
