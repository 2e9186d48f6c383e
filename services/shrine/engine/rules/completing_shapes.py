"""The Radiant Shapes module: "Completing a Shape Card" at the end of a turn (``shape``,
``at``, ``claim``, ``reward``, ``bonus`` or ``skip``), with Proof tiles and Proof tokens.

Completing a Shape card is a claim, like blocking a field: the player shows the card and
the fields, places Proof tokens in the colours they claim their Code card shows there,
and takes the reward now. The claim is checked against the Code card at the end
(scoring.py). What the engine checks now is only what both players can see: the shape
fits those fields (rotated and/or mirrored), each new field shows a colour the player
still has a Proof token of, fields already proved still show their proved colour
("Reusing Matches"), at least one field is new, and at most one field is ignored by
discarding a Feathered Serpent.
"""

from __future__ import annotations

from collections.abc import Iterator

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import CONTENT, FIELDS, PLAYER, POWER_KEYS
from services.shrine.engine.moves import Bonus, Claim, CompleteShape, Reward, ShapeFields, Skip
from services.shrine.engine.rules.acquiring_shapes import take
from services.shrine.engine.rules.board import fname, gain, say, seen, serpents_left, unlock
from services.shrine.engine.rules.serpents import remove_serpent
from services.shrine.engine.state import State


def _bits(mask: int) -> list[int]:
    return [f for f in range(FIELDS) if mask >> f & 1]


_BITS = {mask: _bits(mask) for card in CONTENT.shapes.values() for mask in card.images}


def _mask_text(mask: int) -> str:
    return " ".join(fname(f) for f in _bits(mask))


def tokens_left(state: State, seat: int) -> list[int]:
    """Proof tokens of each colour not yet on the Proof tile (two of each colour)."""
    left = [PLAYER.proof_tokens_per_colour] * len(colours.NAMES)
    for colour in state.players[seat].proof:
        if colour >= 0:
            left[colour] -= 1
    return left


# -- completing a Shape card ----------------------------------------------------------------


def _scan(state: State, seat: int) -> tuple[list[int | None], int, int]:
    """What every field shows, the fields already proved, and the fields that cannot count
    as a match now (empty, or no longer showing their proved colour)."""
    proof = state.players[seat].proof
    shown: list[int | None] = [colours.seen(stack) for stack in state.lenses]
    marked = bad = 0
    for f in range(FIELDS):
        if proof[f] >= 0:
            marked |= 1 << f
            if shown[f] != proof[f]:
                bad |= 1 << f
        elif shown[f] is None:
            bad |= 1 << f
    return shown, marked, bad


Scan = tuple[list[int | None], int, int, list[int], bool]


def _survey(state: State, seat: int) -> Scan:
    shown, marked, bad = _scan(state, seat)
    return shown, marked, bad, tokens_left(state, seat), serpents_left(state, seat) > 0


def _completions(
    state: State, seat: int, card: int, survey: Scan | None = None
) -> Iterator[tuple[int, int]]:
    shown, marked, bad_fields, left, serpent = survey or _survey(state, seat)
    for mask in CONTENT.shapes[card].images:
        bad = mask & bad_fields
        new = mask & ~marked
        if not new:  # "at least one new matching field"
            continue
        fields = _BITS[mask]
        # A field that shows no colour is bad, so these show one.
        if not bad and _fits(left, [shown[f] for f in fields if new >> f & 1]):  # type: ignore[misc]
            yield mask, -1
        if not serpent or bad & (bad - 1):
            continue
        for ignored in fields:
            if bad and not bad >> ignored & 1:
                continue
            claims = [shown[f] for f in fields if new >> f & 1 and f != ignored]
            # The one bad field a Serpent allows is the ignored one: the claims show colours.
            if not _fits(left, claims):  # type: ignore[arg-type]
                continue
            if marked >> ignored & 1:
                # a field already proved: only worth ignoring when it no longer shows its colour
                if bad:
                    yield mask, ignored
            elif _claim_colours(left, claims, shown[ignored]):  # type: ignore[arg-type]  # as above
                yield mask, ignored


def completions(state: State, seat: int, card: int) -> list[tuple[int, int]]:
    """Every (fields, ignored field or -1) a player may claim for ``card`` now.

    Uses only what the player can see: the board, their own Proof tile and tokens and
    Serpents. Whether the claim is true is checked at the end of the game.
    """
    return sorted(_completions(state, seat, card), key=lambda option: (option[1], option[0]))


def _fits(left: list[int], claims: list[int]) -> bool:
    need = [0] * len(left)
    for colour in claims:
        need[colour] += 1
    return all(need[c] <= left[c] for c in range(len(left)))


def _claim_colours(left: list[int], claims: list[int], shown: int | None) -> list[int]:
    """Colours a Serpent-ignored new field may be claimed as: a Proof token must be left,
    and it is not the colour the field shows (that would be a plain match)."""
    spare = list(left)
    for colour in claims:
        spare[colour] -= 1
    return [c for c in range(len(spare)) if spare[c] > 0 and c != shown]


def shape_moves(state: State, seat: int) -> list[CompleteShape]:
    hand = state.players[seat].hand
    if not hand:
        return []
    survey = _survey(state, seat)
    return [
        CompleteShape(card)
        for card in hand
        if next(_completions(state, seat, card, survey), None) is not None
    ]


def explain_shape(state: State, seat: int, move: CompleteShape) -> tuple[str, str]:
    if move.card not in state.players[seat].hand:
        return rulebook.COMPLETING_SHAPE, f"you do not hold Shape card {move.card}"
    return rulebook.COMPLETING_SHAPE, "no fields on the board complete that Shape card now"


def do_shape(state: State, seat: int, move: CompleteShape) -> list[Event]:
    state.shape = move.card
    card = CONTENT.shapes[move.card]
    return [
        say(
            state,
            "shape_revealed",
            f"reveals Shape card {card.id} ({card.deck} fields: {'/'.join(card.pattern)})",
            seat,
            card=card.id,
        )
    ]


def at_moves(state: State, seat: int) -> list[ShapeFields]:
    return [ShapeFields(mask, ignored) for mask, ignored in completions(state, seat, state.shape)]


def explain_at(state: State, seat: int, move: ShapeFields) -> tuple[str, str]:
    card = CONTENT.shapes[state.shape]
    if move.mask not in card.images:
        return rulebook.COMPLETING_SHAPE, "those fields do not form the shape, rotated or mirrored"
    player = state.players[seat]
    if move.ignored >= 0 and serpents_left(state, seat) <= 0:
        return rulebook.SERPENT_TOKENS, "you have no Feathered Serpent left"
    fields = _bits(move.mask)
    if all(player.proof[f] >= 0 for f in fields):
        return (
            rulebook.REUSING_MATCHES,
            "each new Shape must include at least one new matching field",
        )
    for f in fields:
        if f == move.ignored:
            continue
        if seen(state, f) is None:
            return rulebook.COMPLETING_SHAPE, f"{fname(f)} holds no Lens"
        if player.proof[f] >= 0 and player.proof[f] != seen(state, f):
            return rulebook.REUSING_MATCHES, f"{fname(f)} no longer shows its proved colour"
    return rulebook.COMPLETING_SHAPE, "you have too few Proof tokens of those colours"


def claim_moves(state: State, seat: int) -> list[Claim]:
    ignored = state.shape_ignore
    claims = [
        seen(state, f)
        for f in _bits(state.shape_mask)
        if f != ignored and state.players[seat].proof[f] < 0
    ]
    left = tokens_left(state, seat)
    return [
        Claim(c)
        # The legal "at" move chose fields that show a colour, but for the ignored one.
        for c in _claim_colours(left, claims, seen(state, ignored))  # type: ignore[arg-type]
    ]


def explain_claim(state: State, seat: int, move: Claim) -> tuple[str, str]:
    if move.colour == seen(state, state.shape_ignore):
        return rulebook.SERPENT_TOKENS, "that field already shows that colour: no Serpent needed"
    return rulebook.COMPLETING_SHAPE, f"no {colours.NAMES[move.colour]} Proof token is left"


def do_at(state: State, seat: int, move: ShapeFields) -> list[Event]:
    state.shape_mask = move.mask
    state.shape_ignore = move.ignored
    if move.ignored >= 0 and state.players[seat].proof[move.ignored] < 0:
        return []  # the claimed colour of the ignored field comes next
    return complete(state, seat, -1)


def do_claim(state: State, seat: int, move: Claim) -> list[Event]:
    return complete(state, seat, move.colour)


def complete(state: State, seat: int, claim: int) -> list[Event]:
    """Steps 1 and 2 of "Completing a Shape Card": the card is shown, Proof tokens placed."""
    player = state.players[seat]
    card = state.shape
    placed = []
    for f in _bits(state.shape_mask):
        if player.proof[f] < 0:
            colour = claim if f == state.shape_ignore else seen(state, f)
            # A completed Shape's fields show a colour, and the claim names the ignored one's.
            player.proof[f] = colour  # type: ignore[assignment]
            placed.append(f"{fname(f)} {colours.NAMES[colour]}")  # type: ignore[index]
    serpent = ""
    if state.shape_ignore >= 0:
        remove_serpent(state, seat)
        serpent = f", ignoring {fname(state.shape_ignore)} with a Feathered Serpent"
    player.hand.remove(card)
    player.completed.append(card)
    text = (
        f"completed Shape card {card} on {_mask_text(state.shape_mask)}{serpent}; "
        f"Proof tokens: {', '.join(placed)}"
    )
    return [
        say(
            state,
            "shape_completed",
            text,
            seat,
            card=card,
            fields=_mask_text(state.shape_mask).split(),
            ignored=fname(state.shape_ignore) if state.shape_ignore >= 0 else "",
            proof=placed,
        )
    ]


def reward_moves(state: State, seat: int) -> list[Reward]:
    player = state.players[seat]
    unlocks = [Reward(p) for p in range(len(POWER_KEYS)) if player.blocked(p)]
    return [Reward(), *unlocks]


def explain_reward(state: State, seat: int, move: Reward) -> tuple[str, str]:
    return rulebook.GAINING_REWARDS, f"{PLAYER.powers[move.unlock].name} is not blocked"


def do_reward(state: State, seat: int, move: Reward) -> list[Event]:
    card = CONTENT.shapes[state.shape]
    if move.unlock < 0:
        gain(state, seat, card.treasure)
        return [
            say(state, "reward", f"took the Treasure only reward: +{card.treasure} Treasure", seat)
        ]
    gain(state, seat, card.unlock_treasure)
    amount = unlock(state, seat, move.unlock)
    text = (
        f"took Treasure and Unlock: +{card.unlock_treasure} Treasure and unlocked "
        f"{PLAYER.powers[move.unlock].name} ({amount} Treasure to the Treasury)"
    )
    return [say(state, "reward", text, seat, power=POWER_KEYS[move.unlock])]


def bonus_moves(state: State, seat: int) -> list[Bonus]:
    card = CONTENT.shapes[state.shape]
    return [Bonus(size) for size in card.bonus if state.deck(size)]


def explain_bonus(state: State, seat: int, move: Bonus) -> tuple[str, str]:
    card = CONTENT.shapes[state.shape]
    if move.deck not in card.bonus:
        return rulebook.BONUS_REWARD, f"Shape card {card.id} offers no draw from that deck"
    return rulebook.BONUS_REWARD, f"the {move.deck}-field deck is empty"


def do_bonus(state: State, seat: int, move: Bonus) -> list[Event]:
    return take(state, seat, move.deck, "bonus reward")


def skip_moves(state: State, seat: int) -> list[Skip]:
    return [Skip()]


def skip(state: State, seat: int, move: Skip) -> list[Event]:
    return []


SHAPE = Decision(rulebook.COMPLETING_SHAPE, shape_moves, do_shape, explain=explain_shape)
AT = Decision(rulebook.COMPLETING_SHAPE, at_moves, do_at, explain=explain_at)
CLAIM = Decision(rulebook.COMPLETING_SHAPE, claim_moves, do_claim, explain=explain_claim)
REWARD = Decision(rulebook.GAINING_REWARDS, reward_moves, do_reward, explain=explain_reward)
BONUS = Decision(rulebook.BONUS_REWARD, bonus_moves, do_bonus, explain=explain_bonus)
# Declining a shape, or the bonus draw, is always open when offered: nothing to explain.
SKIP_SHAPE = Decision(rulebook.COMPLETING_SHAPE, skip_moves, skip)
SKIP_BONUS = Decision(rulebook.BONUS_REWARD, skip_moves, skip)
