"""Glow's engine values <-> its protobuf messages, and nothing else."""

from __future__ import annotations

from tabletop.glow.v1 import glow_pb2 as pb

from services.kit.engine import BadOptions, MalformedMove

from . import engine
from .engine import moves as mv
from .engine.content import (
    ADVENTURER,
    ADVENTURER_BY_KEY,
    ADVENTURERS,
    ANY_COLOUR,
    ARCHIPELAGO,
    BOARDS,
    COLOURS,
    COMPANIONS,
    DICE,
    NO_DIE,
    PROVINCE,
    SPELLS,
    SYMBOLS,
    TRACK_SPACES,
    Adventurer,
    Condition,
    Effect,
)
from .engine.state import STAGE_NAMES, STEP_NAMES

# Engine names and indexes <-> the proto enums (the enums spell the same names).
_SYMBOL_PB = {name: pb.Symbol.Value(f"SYMBOL_{name.upper()}") for name in SYMBOLS}
_SYMBOL_OF_PB: dict[int, int] = {value: SYMBOLS.index(name) for name, value in _SYMBOL_PB.items()}
_COLOUR_PB = {name: pb.Colour.Value(f"COLOUR_{name.upper()}") for name in COLOURS}
_COLOUR_OF_PB: dict[int, int] = {value: COLOURS.index(name) for name, value in _COLOUR_PB.items()}
_BOARD_PB = {name: pb.Board.Value(f"BOARD_{name.upper()}") for name in BOARDS}
_BOARD_OF_PB = {value: name for name, value in _BOARD_PB.items()}
_STEP_PB = {name: pb.Step.Value(f"STEP_{name.upper()}") for name in STEP_NAMES}
_STAGE_PB = {name: pb.Stage.Value(f"STAGE_{name.upper()}") for name in STAGE_NAMES}
_SOURCE_PB = {
    mv.TOKEN: pb.REROLL_SOURCE_TOKEN,
    mv.TRACK: pb.REROLL_SOURCE_SCORE_TRACK,
    mv.LUMIPILI: pb.REROLL_SOURCE_LUMIPILI,
}
_SOURCE_OF_PB: dict[int, int] = {value: source for source, value in _SOURCE_PB.items()}
_PAYMENT_PB = {mv.FREE: pb.PAYMENT_FREE, mv.USE_DIE: pb.PAYMENT_DIE, mv.FOOT: pb.PAYMENT_FOOTPRINT}
_PAYMENT_OF_PB: dict[int, int] = {value: payment for payment, value in _PAYMENT_PB.items()}
_ADVENTURER_BY_NAME = {a.name: a for a in ADVENTURERS}


def options_from_proto(message: pb.Options) -> engine.Options:
    if message.board == pb.BOARD_UNSPECIFIED:
        return engine.Options()
    if message.board not in _BOARD_OF_PB:
        raise BadOptions(f"unknown board {message.board}; boards are {', '.join(BOARDS)}")
    return engine.Options(board=_BOARD_OF_PB[message.board])


# --- moves ---------------------------------------------------------------------------


def _in(value: int, low: int, high: int, field: str) -> int:
    if not low <= value <= high:
        raise MalformedMove(f"{field} must be {low}-{high}, not {value}")
    return value


def _space(value: int) -> int:
    return _in(value, 0, TRACK_SPACES - 1, "space")


def _companion(value: int, field: str = "companion") -> int:
    if value not in COMPANIONS:
        raise MalformedMove(f"{field} must be a companion id 1-{max(COMPANIONS)}, not {value}")
    return value


def _spell(value: int, field: str = "spell") -> int:
    if value not in SPELLS:
        raise MalformedMove(f"{field} must be a spell token 1-{max(SPELLS)}, not {value}")
    return value


def _flag(value: bool, field: str) -> None:
    if not value:
        raise MalformedMove(f"{field} must be true when it is the field set")


def _enum(value: int, table: dict[int, int], field: str) -> int:
    if value not in table:
        raise MalformedMove(f"{field} must be set to a known value")
    return table[value]


def _source(
    message: pb.UseReroll | pb.PayReroll, kind: type[mv.UseReroll] | type[mv.PayReroll]
) -> mv.GlowMove:
    source = _enum(message.source, _SOURCE_OF_PB, "source")
    if source == mv.LUMIPILI:
        return kind(source, _companion(message.companion))
    if message.companion:
        raise MalformedMove("companion is set only for a Lumipili's reroll")
    return kind(source)


def _decode(message: pb.Move) -> mv.GlowMove:
    kind = message.WhichOneof("kind")
    if kind == "adventurer":
        key = message.adventurer.adventurer
        if key not in ADVENTURER_BY_KEY:
            raise MalformedMove(f"unknown adventurer; they are {', '.join(ADVENTURER_BY_KEY)}")
        return mv.ChooseAdventurer(ADVENTURER_BY_KEY[key].id)
    if kind == "take":
        return mv.Take(_space(message.take.space))
    if kind == "black":
        target = message.black.WhichOneof("target")
        if target == "space":
            return mv.MoveBlackDie(_space(message.black.space))
        if target == "stay":
            _flag(message.black.stay, "stay")
            return mv.MoveBlackDie(mv.STAY)
        raise MalformedMove("MoveBlackDie names a space or stay")
    if kind == "die":
        return mv.ChooseSketalDie(_enum(message.die.colour, _COLOUR_OF_PB, "colour"))
    if kind == "bury":
        return mv.Bury(_space(message.bury.space))
    if kind == "reroll":
        return _source(message.reroll, mv.UseReroll)
    if kind == "fix":
        return mv.Fix()
    if kind == "pay":
        return _source(message.pay, mv.PayReroll)
    if kind == "pick":
        return mv.PickDie(_in(message.pick.die, 0, len(DICE) - 1, "die"))
    if kind == "roll":
        return mv.Roll()
    if kind == "face":
        return mv.ChooseFace(_enum(message.face.symbol, _SYMBOL_OF_PB, "symbol"))
    if kind == "ready":
        return mv.Ready()
    if kind == "resolve":
        card = message.resolve.WhichOneof("card")
        if card == "adventurer":
            _flag(message.resolve.adventurer, "adventurer")
            return mv.Resolve(mv.ADVENTURER_REF)
        if card == "companion":
            return mv.Resolve(_companion(message.resolve.companion))
        if card == "spell":
            return mv.Resolve(mv.SPELL_REF + _spell(message.resolve.spell))
        raise MalformedMove("Resolve names the adventurer, a companion or a spell")
    if kind == "raise_companion":
        choice = message.raise_companion.WhichOneof("choice")
        if choice == "companion":
            return mv.Raise(_companion(message.raise_companion.companion))
        if choice == "nobody":
            _flag(message.raise_companion.nobody, "nobody")
            return mv.Raise(mv.NONE)
        raise MalformedMove("Raise names a companion or nobody")
    if kind == "lose":
        return mv.Lose(_companion(message.lose.companion))
    if kind == "cancel":
        spell = message.cancel.WhichOneof("spell")
        if spell == "revealed":
            return mv.CancelSpell(_spell(message.cancel.revealed, "revealed"))
        if spell == "face_down":
            _flag(message.cancel.face_down, "face_down")
            return mv.CancelSpell(mv.HIDDEN)
        raise MalformedMove("CancelSpell names a revealed spell or the face-down one")
    if kind == "go":
        spot = _in(message.go.spot, 0, len(PROVINCE.spots) - 1, "spot")
        return mv.Go(spot, _enum(message.go.payment, _PAYMENT_OF_PB, "payment"))
    if kind == "camp":
        return mv.Camp()
    if kind == "sail":
        last = len(ARCHIPELAGO.islands) - 1
        return mv.Sail(
            _in(message.sail.from_island, 0, last, "from_island"),
            _in(message.sail.to_island, 0, last, "to_island"),
        )
    if kind == "end":
        return mv.EndJourney()
    raise MalformedMove("the move names no decision (set one field of Move.kind)")


def move_from_proto(message: pb.Move) -> mv.GlowMove:
    move = _decode(message)
    problem = move.problem()
    if problem is not None:
        raise MalformedMove(problem)
    return move


def _source_to_proto(
    move: mv.UseReroll | mv.PayReroll, message: pb.UseReroll | pb.PayReroll
) -> None:
    message.source = _SOURCE_PB[move.source]
    if move.source == mv.LUMIPILI:
        message.companion = move.card


def move_to_proto(move: mv.GlowMove) -> pb.Move:
    out = pb.Move()
    if isinstance(move, mv.ChooseAdventurer):
        out.adventurer.adventurer = ADVENTURER[move.adventurer].key
    elif isinstance(move, mv.Take):
        out.take.space = move.space
    elif isinstance(move, mv.MoveBlackDie):
        if move.space == mv.STAY:
            out.black.stay = True
        else:
            out.black.space = move.space
    elif isinstance(move, mv.ChooseSketalDie):
        out.die.colour = _COLOUR_PB[COLOURS[move.colour]]
    elif isinstance(move, mv.Bury):
        out.bury.space = move.space
    elif isinstance(move, mv.UseReroll):
        _source_to_proto(move, out.reroll)
    elif isinstance(move, mv.Fix):
        out.fix.SetInParent()
    elif isinstance(move, mv.PayReroll):
        _source_to_proto(move, out.pay)
    elif isinstance(move, mv.PickDie):
        out.pick.die = move.die
    elif isinstance(move, mv.Roll):
        out.roll.SetInParent()
    elif isinstance(move, mv.ChooseFace):
        out.face.symbol = _SYMBOL_PB[SYMBOLS[move.symbol]]
    elif isinstance(move, mv.Ready):
        out.ready.SetInParent()
    elif isinstance(move, mv.Resolve):
        if move.card == mv.ADVENTURER_REF:
            out.resolve.adventurer = True
        elif move.card > mv.SPELL_REF:
            out.resolve.spell = move.card - mv.SPELL_REF
        else:
            out.resolve.companion = move.card
    elif isinstance(move, mv.Raise):
        if move.companion == mv.NONE:
            out.raise_companion.nobody = True
        else:
            out.raise_companion.companion = move.companion
    elif isinstance(move, mv.Lose):
        out.lose.companion = move.companion
    elif isinstance(move, mv.CancelSpell):
        if move.spell == mv.HIDDEN:
            out.cancel.face_down = True
        else:
            out.cancel.revealed = move.spell
    elif isinstance(move, mv.Go):
        out.go.spot = move.spot
        out.go.payment = _PAYMENT_PB[move.payment]
    elif isinstance(move, mv.Camp):
        out.camp.SetInParent()
    elif isinstance(move, mv.Sail):
        out.sail.from_island = move.from_island
        out.sail.to_island = move.to_island
    elif isinstance(move, mv.EndJourney):
        out.end.SetInParent()
    else:  # pragma: no cover - every kind is listed above
        raise ValueError(f"not a Glow move: {move!r}")
    return out


# --- views ---------------------------------------------------------------------------


def _symbol(index: int) -> pb.Symbol.ValueType:
    return _SYMBOL_PB[SYMBOLS[index]] if index >= 0 else pb.SYMBOL_UNSPECIFIED


def _condition(condition: Condition) -> pb.Condition:
    need = [_symbol(s) for s, n in condition.need for _ in range(n)]
    return pb.Condition(
        need=need,
        same=condition.same,
        avoid=[_symbol(s) for s in condition.avoid],
        text=condition.text,
    )


def _effect(effect: Effect) -> pb.Effect:
    return pb.Effect(
        bursts=effect.bursts,
        footprints=effect.footprints,
        fireflies=effect.fireflies,
        rerolls=effect.rerolls,
        skull=effect.skull,
        spell=effect.spell,
        resurrect=effect.resurrect,
    )


def _companion_pb(companion: int) -> pb.Companion:
    card = COMPANIONS[companion]
    return pb.Companion(
        id=card.id,
        name=card.name,
        pack=card.pack,
        condition=_condition(card.condition),
        effect=_effect(card.effect),
        bursts=card.bursts,
        fireflies=card.fireflies,
        rerolls=card.rerolls,
        sketal=card.die != NO_DIE,
        sketal_colour=(
            _COLOUR_PB[COLOURS[card.die]]
            if card.die not in (ANY_COLOUR, NO_DIE)
            else pb.COLOUR_UNSPECIFIED
        ),
        black_die=card.black_die,
    )


def _adventurer_pb(adventurer: Adventurer) -> pb.Adventurer:
    return pb.Adventurer(
        key=adventurer.key,
        name=adventurer.name,
        colour=_COLOUR_PB[COLOURS[adventurer.colour]],
        dice=adventurer.dice,
        condition=_condition(adventurer.card.condition),
        effect=_effect(adventurer.card.effect),
        bursts=adventurer.card.bursts,
    )


def _spell_pb(spell: int) -> pb.Spell:
    token = SPELLS[spell]
    return pb.Spell(id=spell, condition=_condition(token.condition), effect=_effect(token.effect))


def _province_pb() -> pb.Province:
    out = pb.Province(start=PROVINCE.start)
    for spot in PROVINCE.spots:
        item = out.spots.add(
            id=spot.id,
            need=_symbol(spot.need),
            avoid=_symbol(spot.avoid),
            on_enter=_effect(spot.on_enter),
        )
        if spot.village >= 0:
            item.village = spot.village
    for (a, b), effect in sorted(PROVINCE.on_way.items()):
        link = out.links.add(a=a, b=b)
        if effect != Effect():
            link.on_way.CopyFrom(_effect(effect))
    return out


def _archipelago_pb() -> pb.Archipelago:
    out = pb.Archipelago(start=ARCHIPELAGO.start)
    for island in ARCHIPELAGO.islands:
        out.islands.add(id=island.id, value=island.value, on_arrival=_effect(island.on_arrival))
    for (a, b), passage in sorted(ARCHIPELAGO.passages.items()):
        out.passages.add(
            a=a,
            b=b,
            need_min=passage.need_min,
            need_max=passage.need_max,
            footprints=passage.footprints,
        )
    return out


# Content never changes while the service runs: its messages are built once.
_COMPANION = {c: _companion_pb(c) for c in COMPANIONS}
_ADVENTURER = {a.name: _adventurer_pb(a) for a in ADVENTURERS}
_SPELL = {s: _spell_pb(s) for s in SPELLS}
_PROVINCE = _province_pb()
_ARCHIPELAGO = _archipelago_pb()


def _die(die) -> pb.Die:
    return pb.Die(
        id=die.id, colour=_COLOUR_PB[die.colour], large=die.large, face=_SYMBOL_PB[die.symbol]
    )


def _player(player) -> pb.Player:
    resolved = player.resolved
    out = pb.Player(
        seat=player.seat,
        companions=[_COMPANION[c] for c in player.companions],
        sketal_dice=[pb.SketalDie(companion=c, die=d) for c, d in player.sketal_dice],
        dice=[_die(d) for d in player.dice],
        rolled=player.rolled,
        cancelled=player.cancelled,
        used=player.used,
        score=player.score,
        reroll_tokens=player.rerolls,
        reroll_tokens_due=player.rerolls_due,
        footprints=player.footprints,
        fireflies=player.fireflies,
        spells=[_SPELL[s] for s in player.spells],
        face_down_spell_count=player.face_down_spells,
        own_face_down_spells=[_SPELL[s] for s in player.own_face_down_spells],
        company=player.company,
        encampment=player.encampment,
        boats=player.boats,
        stage=_STAGE_PB[player.stage],
        done=player.done,
        lumipilis_used=player.lumipilis_used,
        picked=player.picked,
        paid=player.paid,
        adventurer_resolved=mv.ADVENTURER_REF in resolved,
        resolved_companions=[r for r in resolved if r != mv.ADVENTURER_REF and r < mv.SPELL_REF],
        resolved_spells=[r - mv.SPELL_REF for r in resolved if r > mv.SPELL_REF],
        visited=player.visited,
    )
    if player.adventurer:
        out.adventurer.CopyFrom(_ADVENTURER[player.adventurer])
    return out


def view_to_proto(view: engine.View) -> pb.View:
    message = pb.View(
        board=_BOARD_PB[view.board],
        step=_STEP_PB[view.step],
        day=view.day,
        deck_count=view.deck,
        box_count=view.box,
        cemetery=[_COMPANION[c] for c in view.cemetery],
        pool=[_die(d) for d in view.pool],
        dice_box=view.dice_box,
        spell_pile_count=view.spell_pile,
        spells_boxed_count=view.spells_boxed,
        reroll_pool=view.reroll_pool,
        players=[_player(p) for p in view.players],
    )
    if view.first >= 0:
        message.first_player = view.first
    for index, space in enumerate(view.meeting_track):
        out = message.meeting_track.add(
            space=index,
            element=_SYMBOL_PB[space.element],
            dice=[_die(d) for d in space.dice],
            footprints=space.footprints,
        )
        if space.companion:
            out.companion.CopyFrom(_COMPANION[space.companion])
    if view.board == "province":
        message.province.CopyFrom(_PROVINCE)
    else:
        message.archipelago.CopyFrom(_ARCHIPELAGO)
    return message
