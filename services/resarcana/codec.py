"""Res Arcana Duo's engine values <-> its protobuf messages, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from tabletop.resarcana.v1 import resarcana_pb2 as pb

from services.kit.engine import BadOptions, MalformedMove

from . import engine
from .engine.content import CONTENT, Amount
from .engine.essences import ANY, ESSENCES
from .engine.moves import DECK, ComponentMove

_SETUPS = {
    pb.SETUP_UNSPECIFIED: "draft",
    pb.SETUP_DRAFT: "draft",
    pb.SETUP_FIRST_GAME: "first_game",
}
_PLACES = {
    pb.PLACES_UNSPECIFIED: "auto",
    pb.PLACES_AUTO: "auto",
    pb.PLACES_AMBER: "amber",
    pb.PLACES_RANDOM: "random",
}
_PHASES = {
    "draft": pb.PHASE_DRAFT,
    "mage": pb.PHASE_MAGE,
    "item": pb.PHASE_MAGIC_ITEM,
    "collect": pb.PHASE_COLLECT,
    "actions": pb.PHASE_ACTIONS,
    "over": pb.PHASE_OVER,
}
_KINDS = {
    "artifact": pb.CARD_KIND_ARTIFACT,
    "mage": pb.CARD_KIND_MAGE,
    "item": pb.CARD_KIND_MAGIC_ITEM,
    "monument": pb.CARD_KIND_MONUMENT,
    "place": pb.CARD_KIND_PLACE_OF_POWER,
}
_TYPES = {
    "creature": pb.CARD_TYPE_CREATURE,
    "dragon": pb.CARD_TYPE_DRAGON,
    "demon": pb.CARD_TYPE_DEMON,
}
_PILES = (pb.PILE_ARTIFACTS, pb.PILE_MONUMENTS)  # the engine's pile numbers 0 and 1

# Which oneof case carries which move kind, and the field of its message naming the
# component (for the kinds that name one component by slug).
_CASES: dict[str, type[engine.Move]] = {
    "keep": engine.Keep,
    "mage": engine.ChooseMage,
    "item": engine.TakeItem,
    "gain": engine.Gain,
    "option": engine.ChooseOption,
    "take": engine.Take,
    "done": engine.Done,
    "place": engine.Place,
    "claim": engine.Claim,
    "discard": engine.Discard,
    "power": engine.UsePower,
    "pass_action": engine.Pass,
    "pay": engine.PayEssence,
    "waive": engine.Waive,
    "turn": engine.Turn,
    "straighten": engine.Straighten,
    "target": engine.Target,
    "retrieve": engine.Retrieve,
    "return_card": engine.Return,
    "pile": engine.Pile,
    "monument": engine.GainMonument,
}
_CASE_OF = {kind: case for case, kind in _CASES.items()}
# The kinds whose message has one field naming a component by slug, and which one.
_MAKE: dict[str, Callable[[int], engine.Move]] = {
    "keep": engine.Keep,
    "mage": engine.ChooseMage,
    "item": engine.TakeItem,
    "take": engine.Take,
    "place": engine.Place,
    "discard": engine.Discard,
    "turn": engine.Turn,
    "straighten": engine.Straighten,
    "target": engine.Target,
    "retrieve": engine.Retrieve,
    "return_card": engine.Return,
}
_NAMED_BY = {
    "keep": "artifact",
    "mage": "mage",
    "item": "magic_item",
    "take": "component",
    "place": "artifact",
    "discard": "artifact",
    "turn": "component",
    "straighten": "component",
    "target": "component",
    "retrieve": "artifact",
    "return_card": "card",
}


# --- options ------------------------------------------------------------------------------


def options_from_proto(message: pb.Options) -> engine.Options:
    if message.setup not in _SETUPS:
        raise BadOptions("setup must be SETUP_DRAFT or SETUP_FIRST_GAME")
    if message.places not in _PLACES:
        raise BadOptions("places must be PLACES_AUTO, PLACES_AMBER or PLACES_RANDOM")
    if message.victory_points < 0:
        raise BadOptions("victory_points must be 0 (the rulebook's) or more")
    first = message.first_player if message.HasField("first_player") else -1
    if first not in (-1, 0, 1):
        raise BadOptions("first_player must be 0 or 1 (or unset: the draw decides)")
    # Unset: the engine's default, no round limit (a house rule, opt-in).
    limit = message.round_limit if message.HasField("round_limit") else engine.Options().round_limit
    if limit < 0:
        raise BadOptions("round_limit must be 0 (none) or more")
    return engine.Options(
        setup=_SETUPS[message.setup],
        places=_PLACES[message.places],
        victory_points=message.victory_points,
        first_player=first,
        collect_in_turn_order=message.collect_in_turn_order,
        round_limit=limit,
    )


# --- moves --------------------------------------------------------------------------------


def _component(slug: str, field: str) -> int:
    cid = CONTENT.by_slug.get(slug)
    if cid is None:
        raise MalformedMove(f"{field} names no component: {slug[:24]!r}")
    return cid


def _essence(value: int, field: str) -> int:
    if not 1 <= value <= len(ESSENCES):
        raise MalformedMove(f"{field} must be an essence (ESSENCE_ELAN..ESSENCE_GOLD)")
    return value - 1


def _deck_or(message, field: str, what: str) -> int:
    """A oneof of a component id or ``deck`` (which must be true when set)."""
    choice = message.WhichOneof("target")
    if choice == "deck":
        if not message.deck:
            raise MalformedMove(f"{what}.deck must be true when set")
        return DECK
    if choice is None:
        raise MalformedMove(f"{what} names neither a component nor the deck")
    return _component(getattr(message, choice), f"{what}.{field}")


def move_from_proto(message: pb.Move) -> engine.Move:
    case = message.WhichOneof("kind")
    if case is None:
        raise MalformedMove("the move names no decision (set one field of Move.kind)")
    body = getattr(message, case)
    move: engine.Move
    if case in _NAMED_BY:
        field = _NAMED_BY[case]
        move = _MAKE[case](_component(getattr(body, field), f"{case}.{field}"))
    elif case == "gain":
        move = engine.Gain(_essence(body.essence, "gain.essence"))
    elif case == "pay":
        move = engine.PayEssence(_essence(body.essence, "pay.essence"))
    elif case == "waive":
        part = body.WhichOneof("part")
        if part == "any":
            if not body.any:
                raise MalformedMove("waive.any must be true when set")
            move = engine.Waive(ANY)
        elif part == "essence":
            move = engine.Waive(_essence(body.essence, "waive.essence"))
        else:
            raise MalformedMove("waive names neither an essence nor the any part")
    elif case == "option":
        move = engine.ChooseOption(body.option)
    elif case == "power":
        move = engine.UsePower(_component(body.component, "power.component"), body.power)
    elif case == "pile":
        if body.pile not in _PILES:
            raise MalformedMove("pile must be PILE_ARTIFACTS or PILE_MONUMENTS")
        move = engine.Pile(_PILES.index(body.pile))
    elif case == "claim":
        move = engine.Claim(_deck_or(body, "component", "claim"))
    elif case == "monument":
        move = engine.GainMonument(_deck_or(body, "monument", "monument"))
    elif case == "done":
        move = engine.Done()
    else:
        move = engine.Pass()
    if move.problem() is not None:
        raise MalformedMove(f"not a well-formed {case} move (wrong kind of component or number)")
    return move


def move_to_proto(move: engine.Move) -> pb.Move:
    case = _CASE_OF[type(move)]
    message = pb.Move()
    body = getattr(message, case)
    body.SetInParent()
    if case in _NAMED_BY:
        assert isinstance(move, ComponentMove)
        setattr(body, _NAMED_BY[case], CONTENT[move.named()].slug)
    elif isinstance(move, (engine.Gain, engine.PayEssence)):
        body.essence = move.essence + 1
    elif isinstance(move, engine.Waive):
        if move.essence == ANY:
            body.any = True
        else:
            body.essence = move.essence + 1
    elif isinstance(move, engine.ChooseOption):
        body.option = move.number
    elif isinstance(move, engine.UsePower):
        body.component = CONTENT[move.component].slug
        body.power = move.power
    elif isinstance(move, engine.Pile):
        body.pile = _PILES[move.pile]
    elif isinstance(move, (engine.Claim, engine.GainMonument)):
        cid = move.named()
        if cid == DECK:
            body.deck = True
        else:
            setattr(body, "component" if case == "claim" else "monument", CONTENT[cid].slug)
    return message


# --- views --------------------------------------------------------------------------------


def _essences(counts) -> pb.Essences:
    return pb.Essences(**dict(zip(ESSENCES, counts, strict=True)))


def _cost(amount: Amount) -> pb.Cost:
    return pb.Cost(
        essences=_essences(amount.fixed),
        any=amount.any_n,
        any_excludes=[
            pb.Essence.ValueType(e + 1) for e in range(len(ESSENCES)) if amount.excl >> e & 1
        ],
    )


def _ability_text(amount: Amount) -> str:
    parts = [f"{n} {ESSENCES[e]}" for e, n in enumerate(amount.fixed) if n]
    if amount.any_n:
        banned = "".join(f" !{ESSENCES[e]}" for e in range(len(ESSENCES)) if amount.excl >> e & 1)
        parts.append(f"{amount.any_n} any{banned}")
    return " + ".join(parts)


@cache
def _card_by_id(cid: int) -> pb.Card:
    comp = CONTENT[cid]
    card = pb.Card(
        id=comp.slug,
        name=comp.name,
        kind=_KINDS[comp.kind],
        types=[_TYPES[t] for t in comp.types],
        victory_points=comp.vp,
        victory_points_per_essence=comp.vp_per_essence,
        collect=" / ".join(_ability_text(alt) for alt in comp.collect),
        discount=f"{comp.discount} {comp.discount_on}" if comp.discount else "",
        powers=[power.text for power in comp.powers],
    )
    if comp.kind == "monument":
        card.cost.CopyFrom(_cost(CONTENT.monument_cost))
    elif comp.kind in ("artifact", "place"):
        card.cost.CopyFrom(_cost(comp.cost))
    return card


def _card(slug: str) -> pb.Card:
    return _card_by_id(CONTENT.by_slug[slug])


def _cards(slugs) -> list[pb.Card]:
    return [_card(s) for s in slugs]


def view_to_proto(view: engine.View) -> pb.View:
    message = pb.View(
        phase=_PHASES[view.phase],
        round=view.round,
        to_act=view.to_act,
        step=view.step,
        victory_points_to_win=view.victory_points,
        first_player=view.first_player,
        first_player_token_passed=view.token_passed,
        places_of_power=_cards(view.places),
        monuments=_cards(view.monuments),
        monument_deck_count=view.monument_deck,
        magic_items=_cards(view.items),
        hand=_cards(view.hand),
        draft_offer=_cards(view.draft_offer),
        draft_kept=_cards(view.draft_kept),
        draft_given=_cards(view.draft_given),
        mage_options=_cards(view.mage_options),
        looking=_cards(view.looking),
    )
    if view.seat is not None:
        message.viewer = view.seat
    if view.mage_choice:
        message.mage_choice.CopyFrom(_card(view.mage_choice))
    for seat in view.seats:
        message.players.add(
            seat=seat.seat,
            components=[
                pb.Component(card=_card(c.name), turned=c.turned, essences=_essences(c.essences))
                for c in seat.components
            ],
            pool=_essences(seat.pool),
            victory_points=seat.vp,
            passed=seat.passed,
            hand_count=seat.hand,
            deck_count=seat.deck,
            discard=_cards(seat.discard),
            draft_kept_count=seat.draft_kept,
            mage_chosen=seat.mage_chosen,
        )
    return message
