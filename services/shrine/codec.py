"""Shrine's engine values <-> its protobuf messages, and nothing else."""

from __future__ import annotations

from tabletop.shrine.v1 import shrine_pb2 as pb

from services.kit.engine import MalformedMove

from . import engine
from .engine import colours
from .engine.content import BOARD, CONTENT, FIELD_INDEX, FIELDS, POWER_INDEX, POWER_KEYS
from .engine.state import SEAT_NAMES

# Enum numbers are the engine's numbers plus one (0 is UNSPECIFIED in both enums).
_COLOUR = {name: pb.Colour.ValueType(index + 1) for index, name in enumerate(colours.NAMES)}
_STEPS = {phase.name: pb.Step.ValueType(phase.value + 1) for phase in engine.Phase}


def _power_enum(index: int) -> pb.TreasurePower.ValueType:
    """An engine power index (-1: Treasure only) as the proto enum (0: unspecified)."""
    return pb.TreasurePower.ValueType(index + 1)


def _colour_enum(index: int) -> pb.Colour.ValueType:
    return pb.Colour.ValueType(index + 1)


_SIDES = {
    "active": pb.DIAL_SIDE_ACTIVE,
    "inactive": pb.DIAL_SIDE_INACTIVE,
    "removed": pb.DIAL_SIDE_REMOVED,
}
_SEAT = {name: seat for seat, name in enumerate(SEAT_NAMES)}
_FIELD_NAMES = BOARD.field_names

# The oneof case of each kind of move, and back.
_CASE: dict[type[engine.Move], str] = {
    engine.Unlock: "unlock",
    engine.Draw: "draw",
    engine.Keep: "keep",
    engine.Pass: "pass_turn",
    engine.Debt: "debt",
    engine.Serpent: "serpent",
    engine.Refresh: "refresh",
    engine.Search: "search",
    engine.Accept: "accept",
    engine.Place: "place",
    engine.Overwrite: "overwrite",
    engine.Relocate: "relocate",
    engine.Block: "block",
    engine.Done: "done",
    engine.CompleteShape: "shape",
    engine.ShapeFields: "at",
    engine.Claim: "claim",
    engine.Reward: "reward",
    engine.Bonus: "bonus",
    engine.Skip: "skip",
}
_KIND = {case: kind for kind, case in _CASE.items()}


def options_from_proto(message: pb.Options) -> engine.Options:
    return engine.Options(radiant_shapes=bool(message.radiant_shapes))


# -- moves ------------------------------------------------------------------------------


def _field(text: str, what: str) -> int:
    index = FIELD_INDEX.get(text)
    if index is None:
        raise MalformedMove(f"{what} must be a field ({' '.join(_FIELD_NAMES)}), not {text[:8]!r}")
    return index


def _colour(value: int, what: str, basic: bool = False) -> int:
    colour = value - 1
    allowed = colours.BASIC if basic else range(len(colours.NAMES))
    if colour not in allowed:
        kinds = "a Lens colour (red, yellow or blue)" if basic else "a colour"
        raise MalformedMove(f"{what} must be {kinds}")
    return colour


def _power(value: int, what: str) -> int:
    power = value - 1
    if power not in range(len(POWER_KEYS)):
        raise MalformedMove(f"{what} must be a Treasure Power")
    return power


def move_from_proto(message: pb.Move) -> engine.Move:
    case = message.WhichOneof("kind")
    if case is None:
        raise MalformedMove("the move names no decision (set one field of Move.kind)")
    move = _decode(_KIND[case], getattr(message, case))
    problem = move.problem()
    if problem is not None:
        raise MalformedMove(problem)
    return move


def _decode(kind: type[engine.Move], body) -> engine.Move:
    if kind is engine.Unlock:
        return engine.Unlock(_power(body.power, "power"))
    if kind is engine.Serpent:
        return engine.Serpent(_power(body.power, "power"))
    if kind is engine.Draw:
        return engine.Draw(body.deck)
    if kind is engine.Bonus:
        return engine.Bonus(body.deck)
    if kind is engine.Keep:
        return engine.Keep(body.index)
    if kind is engine.CompleteShape:
        return engine.CompleteShape(body.card)
    if kind is engine.Place:
        return engine.Place(_field(body.field, "field"))
    if kind is engine.Overwrite:
        field = _field(body.field, "field")
        return engine.Overwrite(field, _colour(body.colour, "colour", basic=True))
    if kind is engine.Relocate:
        origin = _field(body.origin, "origin")
        colour = _colour(body.colour, "colour", basic=True)
        return engine.Relocate(origin, colour, _field(body.destination, "destination"))
    if kind is engine.Block:
        field = _field(body.field, "field")
        return engine.Block(field, target=bool(body.target), no_claim=body.no_claim)
    if kind is engine.ShapeFields:
        if not 0 < len(body.fields) <= FIELDS:
            raise MalformedMove(f"a shape covers 1 to {FIELDS} fields")
        fields = [_field(name, "fields") for name in body.fields]
        if len(set(fields)) != len(fields):
            raise MalformedMove("a field is named twice")
        ignored = _field(body.ignored, "ignored") if body.ignored else -1
        return engine.ShapeFields(sum(1 << f for f in fields), ignored)
    if kind is engine.Claim:
        return engine.Claim(_colour(body.colour, "colour"))
    if kind is engine.Reward:
        if body.unlock == pb.TREASURE_POWER_UNSPECIFIED:
            return engine.Reward()  # "Treasure only"
        return engine.Reward(_power(body.unlock, "unlock"))
    return kind()  # pass, debt, refresh, search, accept, done, skip: no fields


def _name(field: int) -> str:
    return _FIELD_NAMES[field]


def move_to_proto(move: engine.Move) -> pb.Move:
    if isinstance(move, engine.Unlock):
        return pb.Move(unlock=pb.Unlock(power=_power_enum(move.power)))
    if isinstance(move, engine.Serpent):
        return pb.Move(serpent=pb.Serpent(power=_power_enum(move.power)))
    if isinstance(move, engine.Draw):
        return pb.Move(draw=pb.Draw(deck=move.deck))
    if isinstance(move, engine.Bonus):
        return pb.Move(bonus=pb.Bonus(deck=move.deck))
    if isinstance(move, engine.Keep):
        return pb.Move(keep=pb.Keep(index=move.index))
    if isinstance(move, engine.CompleteShape):
        return pb.Move(shape=pb.CompleteShape(card=move.card))
    if isinstance(move, engine.Place):
        return pb.Move(place=pb.Place(field=_name(move.field)))
    if isinstance(move, engine.Overwrite):
        return pb.Move(
            overwrite=pb.Overwrite(field=_name(move.field), colour=_colour_enum(move.colour))
        )
    if isinstance(move, engine.Relocate):
        return pb.Move(
            relocate=pb.Relocate(
                origin=_name(move.origin),
                colour=_colour_enum(move.colour),
                destination=_name(move.destination),
            )
        )
    if isinstance(move, engine.Block):
        block = pb.Block(field=_name(move.field), target=move.target, no_claim=move.no_claim)
        return pb.Move(block=block)
    if isinstance(move, engine.ShapeFields):
        return pb.Move(
            at=pb.ShapeFields(
                fields=[_name(f) for f in range(FIELDS) if move.mask >> f & 1],
                ignored=_name(move.ignored) if move.ignored >= 0 else "",
            )
        )
    if isinstance(move, engine.Claim):
        return pb.Move(claim=pb.Claim(colour=_colour_enum(move.colour)))
    if isinstance(move, engine.Reward):
        return pb.Move(reward=pb.Reward(unlock=_power_enum(move.unlock)))  # Treasure only: 0
    message = pb.Move()
    getattr(message, _CASE[type(move)]).SetInParent()  # the kinds without fields
    return message


# -- views ------------------------------------------------------------------------------


def _shape(card_id: int) -> pb.ShapeCard:
    card = CONTENT.shapes[card_id]
    return pb.ShapeCard(
        id=card.id,
        size=card.deck,
        pattern=card.pattern,
        treasure=card.treasure,
        unlock_treasure=card.unlock_treasure,
        bonus_decks=card.bonus,
    )


def _counts(pairs: tuple[tuple[str, int], ...]) -> list[pb.ColourCount]:
    return [pb.ColourCount(colour=_COLOUR[name], count=count) for name, count in pairs]


def _player(seen) -> pb.Player:
    message = pb.Player(
        seat=seen.seat,
        name=seen.name,
        starting_player=seen.starting_player,
        treasure=seen.treasure,
        powers=[
            pb.Power(
                power=_power_enum(POWER_INDEX[p.key]),
                name=p.name,
                prices=p.prices,
                treasure=p.treasure,
                blocked=p.blocked,
            )
            for p in seen.powers
        ],
        serpents=seen.serpents,
        block_tokens=seen.block_tokens,
        passes=seen.passes,
        debts=seen.debts,
        proof=[pb.ProofToken(field=f, colour=_COLOUR[c]) for f, c in seen.proof],
        proof_tokens_left=_counts(seen.proof_tokens_left),
        shapes_in_hand=seen.shapes_in_hand,
        completed=[_shape(c) for c in seen.completed],
        hand=[_shape(c) for c in seen.hand or ()],
    )
    if seen.code_card is not None:
        card = seen.code_card
        message.code_card.CopyFrom(
            pb.CodeCard(
                id=card.id,
                fields=[pb.CodeField(field=f, colour=_COLOUR[c]) for f, c in card.fields],
                targets=card.targets,
            )
        )
    return message


def _colour_of(name: str) -> pb.Colour.ValueType:
    return _COLOUR.get(name, pb.COLOUR_UNSPECIFIED)  # "none": empty


def view_to_proto(view: engine.View) -> pb.View:
    message = pb.View(
        bottom_seat=view.bottom_seat,
        step=_STEPS[view.step],
        step_text=view.step_text,
        turn=view.turn,
        current=view.current,
        code_set=_COLOUR[view.code_set],
        dials=[
            pb.DialState(corner=d.corner, fields=d.fields, facing=d.facing, side=_SIDES[d.side])
            for d in view.dials
        ],
        progress_track=[pb.TrackSpace(treasure=t, dial=d) for t, d in view.progress_track],
        offering=_colour_of(view.offering),
        pouch=view.pouch,
        pouch_colours=_counts(view.pouch_colours),
        set_aside=_counts(view.set_aside),
        treasury=view.treasury,
        powers_used_this_turn=view.powers_used_this_turn,
        placed_this_turn=view.placed_this_turn,
        radiant_shapes=view.radiant_shapes,
        shape_decks=[pb.ShapeDeck(size=s, cards=n) for s, n in view.shape_decks],
        drawn=view.drawn,
        drawn_cards=[_shape(c) for c in view.drawn_cards or ()],
        completing_fields=view.completing_fields,
        completing_ignored=view.completing_ignored,
        players=[_player(p) for p in view.players],
    )
    for f in view.fields:
        out = message.fields.add(
            name=f.name,
            lenses=[_COLOUR[c] for c in f.lenses],
            shows=_colour_of(f.shows),
            central=f.central,
            dial=f.dial,
            claimed_target=f.claimed_target,
            printed_target=f.printed_target,
            no_claim=f.no_claim,
        )
        if f.blocked_by:
            out.blocked_by = _SEAT[f.blocked_by]
    if view.completing >= 0:
        message.completing.CopyFrom(_shape(view.completing))
    return message
