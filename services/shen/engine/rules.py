"""The turn: Pre-Game placement, the three phases, and every pending decision.

What the game waits for is either a *task* on ``State.tasks`` (a stack: the top, last,
is decided first) or, when no task is pending, the active player's ``State.step``:

    tasks (decisions)                                      moves
    ("lose", seat, n)          choose each card lost      lose hand X / lose deck / lose discard X
    ("yield", seat, uid, n)    the Avatar or the cards    remove avatar / lose cards
    ("retreat", seat, uid, spots)  beside the Realm Stone retreat c4
    ("foe", seat, n)           which opponent loses n     foe 2
    ("target", seat, uid, i)   a card's (uid -1) or an ability's target   target c4 / foe 2
    ("support", seat, side)    one combat card, one ability  play X / ability 0 / pass
    ("winner", seat, uid)      the winner's ability       ability 0 / pass
    tasks (automatic): ("resolve",), ("position",), ("enter",), ("combat_end",)

    steps                      moves
    PLACE_STONE                stone C4
    RECOVERY                   draw / shen C4
    INFLUENCE                  play X / pass
    COMMAND                    claim a1 / siege a1 B2 / step c4 d5 / hold c4 / end
    MOVING                     step c4 d5 / stop
    AFTER_MOVE                 ability 0 / ranged f6 / pass
"""

from __future__ import annotations

import types

from services.kit.engine import (
    Event,
    IllegalMove,
    MalformedMove,
    Outcome,
    check_seat,
)

from . import board as geometry
from . import cards, combat, pieces, scoring, shen
from .content import CARDS
from .moves import Kind, Move
from .state import HAND_SIZE, RANGED_REACH, State, Step

# Rules by the rulebook's names, for IllegalMove.rule.
R_PHASES = "each player takes a turn by completing three phases"
R_STONE = "sets their realm stone in any empty vertex"
R_DRAW = "Draw a card into your hand from your deck"
R_SHEN = "Place one Shén counter"
R_PLAY = "Play a card from your hand"
R_CLAIM = "Claim an Anchor Point"
R_SIEGE = "Attack a Realm Stone"
R_MOVE = "Move an Avatar"
R_MELEE = "Make a Melee Attack"
R_RANGED = "Make a Ranged Attack"
R_ABILITY = "Use an ability of a Ready Avatar"
R_COMBAT = "Each player may play one card from their hand and use one ability"
R_LOSE = "removes cards from their Hand, Deck, or Discard Pile from the game"
R_RETREAT = "place that Avatar next to that player's Realm Stone"
R_OPPONENT = "your opponent loses a card"

_ENGINE = types.SimpleNamespace()


def to_act(state: State) -> tuple[int, ...]:
    """The seat with a decision pending (one at a time in Shén), or () once over."""
    if state.step == Step.OVER:
        return ()
    if state.tasks:
        return (state.tasks[-1][1],)
    return (state.active,)


def outcome(state: State) -> Outcome | None:
    return scoring.outcome(state)


_ENGINE.to_act = to_act
_ENGINE.outcome = outcome


# --- what may be decided --------------------------------------------------------------


def _anchor_corners(state: State) -> set[int]:
    return {v for a in state.anchors for v in state.board.corners[a]}


def _stone_ok(state: State, v: int) -> bool:
    """ "Realm Stones cannot be placed next to another Realm Stone or a vertex of a space
    with an Anchor Point", on an empty vertex."""
    if v in state.counters or v in state.stones:
        return False
    if any(w in state.stones for w in state.board.links[v]):
        return False
    return v not in _anchor_corners(state)


def _step_targets(state: State, avatar: pieces.Avatar) -> list[int]:
    """Where the Avatar may step (or attack into) from where it stands."""
    out = []
    at, owner = state.at, avatar.owner
    if avatar.loc >= geometry.VERTEX:
        # "Avatars Walking the Spirit Path move only horizontally or vertically between
        # vertexes ... only onto vertexes where you have ... your Shén counter".
        for to in state.board.links[avatar.loc]:
            if to in state.stones:
                continue
            uid = at.get(to)
            if uid is None:
                if state.counters.get(to) == owner:
                    out.append(to)
            elif not state.teammates(owner, state.avatars[uid].owner):
                out.append(to)
        return out
    for to, passed in state.board.steps[avatar.loc]:
        # "Avatars cannot move ... diagonally between spaces on either side of one."
        if passed >= 0 and passed in state.stones:
            continue
        uid = at.get(to)
        if uid is None or not state.teammates(owner, state.avatars[uid].owner):
            out.append(to)
    return out


def _ranged_targets(state: State, avatar: pieces.Avatar) -> list[int]:
    """ "targeting any other Avatar 0-4 spaces away"; not to or from the Spirit Path."""
    if avatar.loc >= geometry.VERTEX or pieces.trait(state, avatar, "ranged") <= 0:
        return []
    b = state.board
    return sorted(
        a.loc
        for a in state.avatars.values()
        if a.loc < geometry.VERTEX
        and not state.teammates(avatar.owner, a.owner)
        and b.distance(avatar.loc, a.loc) <= RANGED_REACH
    )


def _action_abilities(state: State, avatar: pieces.Avatar) -> list[int]:
    """Abilities usable now: "if that Avatar is in a space or vertex which is surrounded
    by as many or more Shén counters than its ability's power cost", with a target."""
    have = pieces.count(state, avatar.owner, avatar.loc)
    return [
        i
        for i, ability in enumerate(pieces.abilities(avatar))
        if ability.timing == "action"
        and have >= ability.cost
        and cards.ability_targets(state, avatar.owner, avatar.loc, ability.effect)
    ]


def _after_move_moves(state: State, avatar: pieces.Avatar) -> list[Move]:
    if not avatar.ready:
        return []
    moves = [Move(Kind.ABILITY, i) for i in _action_abilities(state, avatar)]
    moves.extend(Move(Kind.RANGED, t) for t in _ranged_targets(state, avatar))
    return moves


def _sieges(state: State, avatar: pieces.Avatar) -> list[int]:
    """Realm Stones of opponents next to the Avatar (which stood there at turn start)."""
    b = state.board
    near = b.links[avatar.loc] if avatar.loc >= geometry.VERTEX else b.corners[avatar.loc]
    out = []
    for v in near:
        owner = state.stones.get(v)
        if (
            owner is not None
            and not state.teammates(avatar.owner, owner)
            and not state.players[owner].out
        ):
            out.append(v)
    return out


def _can_claim(state: State, avatar: pieces.Avatar) -> bool:
    """ "if you have a Ready Avatar on an Anchor Point at the start of your turn"."""
    loc = avatar.loc
    if loc not in state.anchors or avatar.start != loc:
        return False
    holder = state.claims.get(loc)
    return holder is None or not state.teammates(holder, avatar.owner)


def _command_moves(state: State) -> list[Move]:
    seat = state.active
    moves = [Move(Kind.END)]
    for uid in sorted(state.avatars):
        avatar = state.avatars[uid]
        if avatar.owner != seat or not avatar.ready or uid in state.acted:
            continue
        loc = avatar.loc
        if _can_claim(state, avatar):
            moves.append(Move(Kind.CLAIM, loc))
        if avatar.start == loc:
            moves.extend(Move(Kind.SIEGE, loc, v) for v in _sieges(state, avatar))
        if pieces.trait(state, avatar, "move") > 0:
            moves.extend(Move(Kind.STEP, loc, to) for to in _step_targets(state, avatar))
        if _after_move_moves(state, avatar):
            moves.append(Move(Kind.HOLD, loc))
    moves.sort()
    return moves


def _influence_moves(state: State) -> list[Move]:
    seat = state.active
    moves = []
    seen = -1
    for card in state.players[seat].hand:
        if card != seen:
            seen = card
            if cards.playable(state, seat, CARDS[card]):
                moves.append(Move(Kind.PLAY, card))
    moves.append(Move(Kind.PASS))
    return moves


def _recovery_moves(state: State) -> list[Move]:
    seat = state.active
    player = state.players[seat]
    moves = [Move(Kind.DRAW)] if player.deck or player.discard else []
    moves.extend(Move(Kind.SHEN, v) for v in shen.legal_placements(state, seat))
    moves.sort()
    return moves


def _lose_moves(state: State, seat: int) -> list[Move]:
    player = state.players[seat]
    moves = []
    for card in sorted(set(player.hand)):
        moves.append(Move(Kind.LOSE_HAND, card))
    if player.deck:
        moves.append(Move(Kind.LOSE_DECK))
    for card in sorted(set(player.discard)):
        moves.append(Move(Kind.LOSE_DISCARD, card))
    return moves


def _target_moves(state: State, task: tuple) -> list[Move]:
    _, seat, uid, index = task
    if uid < 0:
        card = CARDS[state.playing]
        if card.effect is not None and card.effect.target == "foe":
            return [Move(Kind.FOE, s) for s in sorted(state.opponents(seat))]
        return [Move(Kind.TARGET, loc) for loc in cards.card_sites(state, seat, card)]
    avatar = state.avatars[uid]
    effect = pieces.abilities(avatar)[index].effect
    found = cards.ability_targets(state, seat, avatar.loc, effect)
    if effect.target == "foe":
        return [Move(Kind.FOE, s) for s in sorted(found)]
    return sorted(Move(Kind.TARGET, loc) for loc in found)


def _winner_moves(state: State, avatar: pieces.Avatar) -> list[Move]:
    moves = [Move(Kind.ABILITY, i) for i in _action_abilities(state, avatar)]
    if moves:
        moves.append(Move(Kind.PASS))
    return moves


def _task_moves(state: State, task: tuple) -> list[Move]:
    kind = task[0]
    if kind == "lose":
        return _lose_moves(state, task[1])
    if kind == "yield":
        return [Move(Kind.REMOVE_AVATAR), Move(Kind.LOSE_CARDS)]
    if kind == "retreat":
        return [Move(Kind.RETREAT, loc) for loc in task[3]]
    if kind == "foe":
        return [Move(Kind.FOE, s) for s in sorted(state.opponents(task[1]))]
    if kind == "target":
        return _target_moves(state, task)
    if kind == "support":
        return combat.support_moves(state, task[1], task[2])
    if kind == "winner":
        return _winner_moves(state, state.avatars[task[2]])
    raise AssertionError(f"automatic task {kind} left on the stack")  # pragma: no cover


def _moves(state: State) -> list[Move]:
    """The legal moves of the seat to act."""
    if state.tasks:
        return _task_moves(state, state.tasks[-1])
    step = state.step
    if step == Step.PLACE_STONE:
        return [Move(Kind.STONE, v) for v in state.board.vertices if _stone_ok(state, v)]
    if step == Step.RECOVERY:
        return _recovery_moves(state)
    if step == Step.INFLUENCE:
        return _influence_moves(state)
    if step == Step.COMMAND:
        return _command_moves(state)
    mover = state.avatars[state.mover]
    if step == Step.MOVING:
        moves = [Move(Kind.STEP, mover.loc, to) for to in _step_targets(state, mover)]
        moves.append(Move(Kind.STOP))
        moves.sort()
        return moves
    if step == Step.AFTER_MOVE:
        moves = _after_move_moves(state, mover)
        moves.append(Move(Kind.PASS))
        return moves
    return []


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every move the seat may make now, sorted; empty when it has nothing to decide.

    >>> from .state import new_game
    >>> state = new_game(1, 2)
    >>> [str(m) for m in legal_moves(state, state.active)][:2]
    ['stone C1', 'stone D1']
    """
    if seat not in to_act(state):
        return []
    return _moves(state)


# --- validation -----------------------------------------------------------------------

_FIELDS = {
    Kind.STONE: "v",
    Kind.SHEN: "v",
    Kind.PLAY: "c",
    Kind.TARGET: "l",
    Kind.FOE: "n",
    Kind.CLAIM: "s",
    Kind.SIEGE: "lv",
    Kind.STEP: "ll",
    Kind.HOLD: "l",
    Kind.ABILITY: "n",
    Kind.RANGED: "s",
    Kind.RETREAT: "l",
    Kind.LOSE_HAND: "c",
    Kind.LOSE_DISCARD: "c",
}


def _well_formed(state: State, move: object) -> Move:
    if type(move) is not Move:
        raise MalformedMove("not a Shén move; build one with parse_move")
    try:
        kind = Kind(move.kind)
    except ValueError:
        raise MalformedMove(f"unknown move kind {move.kind!r}") from None
    wanted = _FIELDS.get(kind, "")
    on_board = state.board.on_board
    for i, value in enumerate((move.a, move.b)):
        if type(value) is not int:
            raise MalformedMove("move fields are integers")
        what = wanted[i] if i < len(wanted) else ""
        if not what:
            if value != -1:
                raise MalformedMove(f"{kind.name.lower()} takes {len(wanted)} field(s)")
        elif what in "vsl":
            if value not in on_board:
                raise MalformedMove(
                    f"location {value} is not on this {state.size}x{state.size} field"
                )
            is_vertex = value >= geometry.VERTEX
            if (what == "v" and not is_vertex) or (what == "s" and is_vertex):
                raise MalformedMove(
                    f"{kind.name.lower()} takes a {'vertex' if what == 'v' else 'space'}"
                )
        elif what == "c" and not 0 <= value < len(CARDS):
            raise MalformedMove(f"no card {value} in the pool")
        elif what == "n" and not 0 <= value < 64:
            raise MalformedMove(f"number {value} out of range")
    return move if kind is move.kind else Move(kind, move.a, move.b)


_STEP_KINDS = {
    Step.PLACE_STONE: ({Kind.STONE}, "set your Realm Stone (stone C4)"),
    Step.RECOVERY: (
        {Kind.DRAW, Kind.SHEN},
        "Recovery and Set-Up Phase: draw or place a Shén counter",
    ),
    Step.INFLUENCE: ({Kind.PLAY, Kind.PASS}, "Celestial Influence Phase: play a card or pass"),
    Step.COMMAND: (
        {Kind.CLAIM, Kind.SIEGE, Kind.STEP, Kind.HOLD, Kind.END},
        "Claim, Move, and Attack Phase: an Avatar's action, or end",
    ),
    Step.MOVING: ({Kind.STEP, Kind.STOP}, "moving an Avatar: step or stop"),
    Step.AFTER_MOVE: (
        {Kind.ABILITY, Kind.RANGED, Kind.PASS},
        "following a move: an ability, a ranged attack or pass",
    ),
}
_TASK_KINDS = {
    "lose": ({Kind.LOSE_HAND, Kind.LOSE_DECK, Kind.LOSE_DISCARD}, R_LOSE, "choose a card to lose"),
    "yield": ({Kind.REMOVE_AVATAR, Kind.LOSE_CARDS}, R_LOSE, "remove the Avatar or lose the cards"),
    "retreat": ({Kind.RETREAT}, R_RETREAT, "choose where the Avatar retreats"),
    "foe": ({Kind.FOE}, R_OPPONENT, "choose the opponent who loses cards"),
    "target": ({Kind.TARGET, Kind.FOE}, R_PLAY, "choose the target"),
    "support": (
        {Kind.PLAY, Kind.ABILITY, Kind.PASS},
        R_COMBAT,
        "play a combat card, use an ability, or pass",
    ),
    "winner": ({Kind.ABILITY, Kind.PASS}, R_ABILITY, "use the winning Avatar's ability, or pass"),
}
_KIND_RULES = {
    Kind.STONE: R_STONE,
    Kind.DRAW: R_DRAW,
    Kind.SHEN: R_SHEN,
    Kind.PLAY: R_PLAY,
    Kind.CLAIM: R_CLAIM,
    Kind.SIEGE: R_SIEGE,
    Kind.STEP: R_MOVE,
    Kind.HOLD: R_ABILITY,
    Kind.STOP: R_MOVE,
    Kind.ABILITY: R_ABILITY,
    Kind.RANGED: R_RANGED,
    Kind.PASS: R_PHASES,
    Kind.END: R_PHASES,
}


def _explain(state: State, move: Move) -> IllegalMove:
    """Why a well-formed move is illegal now, naming the rule."""
    if state.tasks:
        task = state.tasks[-1]
        kinds, rule, what = _TASK_KINDS[task[0]]
        if move.kind not in kinds:
            return IllegalMove(f"a decision is pending: {what}", rule=rule)
        if task[0] == "support" and move.kind == Kind.PLAY:
            data = CARDS[move.a]
            if data.type in ("avatar", "item"):
                return IllegalMove(
                    "Avatar or Item cards can't be played during combat", rule=R_COMBAT
                )
            return IllegalMove(f"{data.name} cannot be played in this combat now", rule=R_COMBAT)
        return IllegalMove(f"not a legal choice: {what}", rule=rule)
    kinds, what = _STEP_KINDS[state.step]
    if move.kind not in kinds:
        return IllegalMove(f"not now: {what}", rule=R_PHASES)
    rule = _KIND_RULES.get(move.kind, R_PHASES)
    name = str(move)
    if move.kind == Kind.STONE:
        v = move.a
        if v in state.stones or v in state.counters:
            why = "the vertex is not empty"
        elif any(w in state.stones for w in state.board.links[v]):
            why = "Realm Stones cannot be placed next to another Realm Stone"
        else:
            why = "Realm Stones cannot be placed on a vertex of a space with an Anchor Point"
        return IllegalMove(why, rule=rule)
    if move.kind == Kind.SHEN:
        if move.a in state.stones or move.a in state.counters:
            return IllegalMove("the vertex holds a Shén counter or a Realm Stone", rule=rule)
        return IllegalMove(
            "that counter and its associated counters would have no empty vertex next to them",
            rule=rule,
        )
    if move.kind == Kind.DRAW:
        return IllegalMove("no cards in your deck or discard pile", rule=rule)
    if move.kind == Kind.PLAY:
        data = CARDS[move.a]
        if move.a not in state.players[state.active].hand:
            return IllegalMove(f"{data.name} is not in your hand", rule=rule)
        if data.type == "instant" and data.timing == "combat":
            return IllegalMove(f"{data.name} is played during combat", rule=rule)
        return IllegalMove(
            f"no space or vertex where you have the {cards.need(state, state.active, data)} Shén"
            f" {data.name} needs",
            rule=rule,
        )
    if move.kind in (Kind.STEP, Kind.HOLD, Kind.CLAIM, Kind.SIEGE):
        uid = state.at.get(move.a)
        avatar = state.avatars.get(uid) if uid is not None else None
        if avatar is None or avatar.owner != state.active:
            return IllegalMove(f"you have no Avatar at {geometry.name(move.a)}", rule=rule)
        if state.step == Step.MOVING and uid != state.mover:
            return IllegalMove("another Avatar is moving; stop it first", rule=R_MOVE)
        if not avatar.ready or (uid in state.acted and uid != state.mover):
            return IllegalMove(f"the Avatar at {geometry.name(move.a)} is not Ready", rule=rule)
        if move.kind == Kind.STEP:
            to = move.b
            occupant = state.at.get(to)
            if occupant is not None and state.teammates(
                state.active, state.avatars[occupant].owner
            ):
                return IllegalMove("an Avatar of your side stands there", rule=R_MOVE)
            if state.step == Step.MOVING and state.steps_left <= 0:
                return IllegalMove("no movement left", rule=R_MOVE)
            return IllegalMove(f"{name}: not a step this Avatar may take", rule=R_MOVE)
        if move.kind in (Kind.CLAIM, Kind.SIEGE) and avatar.start != move.a:
            return IllegalMove(
                "the Avatar must have stood there since the start of your turn", rule=rule
            )
        if move.kind == Kind.CLAIM and move.a not in state.anchors:
            return IllegalMove(f"{geometry.name(move.a)} is not an Anchor Point", rule=rule)
        if move.kind == Kind.CLAIM:
            return IllegalMove("your side already holds this Anchor Point", rule=rule)
        return IllegalMove(f"{name} is not possible now", rule=rule)
    if move.kind == Kind.RANGED:
        return IllegalMove(
            "the target must be an opponent's Avatar in a space 0-4 spaces away, and the"
            " attacker Ready, in a space, with Ranged Attack Power",
            rule=rule,
        )
    return IllegalMove(f"{name} is not possible now", rule=rule)


def _is_legal(state: State, move: Move) -> bool:
    kind = move.kind
    if not state.tasks:
        step = state.step
        # Direct checks of the same rules, cheaper than listing every move.
        if kind == Kind.SHEN and step == Step.RECOVERY:
            return shen.can_place(state, state.active, move.a)
        if kind == Kind.STONE and step == Step.PLACE_STONE:
            return move.a >= geometry.VERTEX and _stone_ok(state, move.a)
        if kind == Kind.PLAY and step == Step.INFLUENCE:
            return move.a in state.players[state.active].hand and cards.playable(
                state, state.active, CARDS[move.a]
            )
        if kind == Kind.STEP and step in (Step.COMMAND, Step.MOVING):
            uid = state.at.get(move.a)
            if uid is None:
                return False
            avatar = state.avatars[uid]
            if step == Step.MOVING:
                if uid != state.mover or state.steps_left <= 0:
                    return False
            elif (
                avatar.owner != state.active
                or not avatar.ready
                or uid in state.acted
                or pieces.trait(state, avatar, "move") <= 0
            ):
                return False
            return move.b in _step_targets(state, avatar)
    return move in _moves(state)


# --- doing it -------------------------------------------------------------------------


def apply(state: State, seat: int, move: Move) -> list[Event]:
    """Validate the move, then make it; return what happened, as events.

    Raises GameOver, NotYourDecision, MalformedMove or IllegalMove (naming the rule) and
    leaves the state untouched when it does.
    """
    check_seat(_ENGINE, state, seat)
    move = _well_formed(state, move)
    if not _is_legal(state, move):
        raise _explain(state, move)
    events: list[Event] = []
    if state.tasks:
        _do_task(state, seat, move, events)
    else:
        _do_step(state, seat, move, events)
    _advance(state, events)
    return events


def _event(state: State, kind: str, text: str, seat: int | None, **data: object) -> Event:
    return Event(kind, text, seat, data)


def _begin_turn(state: State, seat: int, events: list[Event]) -> None:
    limit = state.options.round_limit
    if limit and state.players[seat].turns >= limit:
        scoring.round_limit(state, events)
        return
    player = state.players[seat]
    player.turns += 1
    state.turn += 1
    state.active = seat
    state.acted = []
    state.mover = -1
    # "Refresh all clan avatars".
    for avatar in state.avatars.values():
        if avatar.owner == seat:
            avatar.ready = True
            avatar.start = avatar.loc
    state.step = Step.RECOVERY
    events.append(
        _event(
            state,
            "turn",
            f"turn {state.turn}: {pieces.seat_name(state, seat)}",
            seat,
            turn=state.turn,
        )
    )


def _next_turn(state: State, events: list[Event]) -> None:
    """ "play proceeds to the next player", clockwise, skipping players who are out."""
    for i in range(1, state.n + 1):
        seat = (state.active + i) % state.n
        if not state.players[seat].out:
            _begin_turn(state, seat, events)
            return


def _place_stone(state: State, seat: int, v: int, events: list[Event]) -> None:
    state.stones[v] = seat
    state.players[seat].stone = v
    placed = [w for w in state.board.links[v] if w not in state.counters and w not in state.stones]
    for w in placed:
        state.counters[w] = seat
    events.append(
        _event(
            state,
            "stone_placed",
            f"{pieces.seat_name(state, seat)} sets their Realm Stone ({state.players[seat].realm})"
            f" on {geometry.name(v)} with {len(placed)} Shén counters around it",
            seat,
            at=geometry.name(v),
            counters=[geometry.name(w) for w in placed],
        )
    )
    state.placed += 1
    if state.placed < state.n:
        state.active = state.place_order[state.placed]
        return
    # "Each player shuffles their deck, places it face down and draws 6 cards".
    for player in state.players:
        state.rng.shuffle(player.deck)
        for _ in range(HAND_SIZE):
            pieces.draw(state, player.seat, events)
    # "Starting with the last player to place their realm stone and continuing clockwise".
    _begin_turn(state, state.place_order[-1], events)


def _finish_card(state: State, seat: int, target: int, events: list[Event]) -> None:
    """The card being played lands: manifest, equip, resolve, or stay in play."""
    card = state.playing
    data = CARDS[card]
    state.playing = -1
    player = state.players[seat]
    name = pieces.seat_name(state, seat)
    if data.is_avatar:
        pieces.manifest(state, seat, card, target)
        events.append(
            _event(
                state,
                "manifested",
                f"{name} manifests {data.name} on {geometry.name(target)}",
                seat,
                card=data.id,
                at=geometry.name(target),
            )
        )
    elif data.type == "item":
        avatar = state.avatars[state.at[target]]
        avatar.items.append(card)
        events.append(
            _event(
                state,
                "equipped",
                f"{name} equips {data.name} on {CARDS[avatar.card].name}"
                f" at {geometry.name(target)}",
                seat,
                card=data.id,
                at=geometry.name(target),
            )
        )
    elif data.type == "remains":
        player.remains.append(card)
        events.append(
            _event(state, "remains", f"{data.name} Remains in Play for {name}", seat, card=data.id)
        )
    else:
        assert data.effect is not None
        # "resolved immediately and then placed face up in your discard pile".
        cards.resolve(state, seat, data.effect, target, events)
        player.discard.append(card)


def _play_main(state: State, seat: int, card: int, events: list[Event]) -> None:
    data = CARDS[card]
    state.players[seat].hand.remove(card)
    state.playing = card
    events.append(
        _event(
            state,
            "played",
            f"{pieces.seat_name(state, seat)} plays {data.name}",
            seat,
            card=data.id,
        )
    )
    state.step = Step.COMMAND
    target_kind = data.effect.target if data.effect is not None else ""
    if data.is_avatar or data.type == "item" or target_kind in ("vertex", "avatar"):
        state.tasks.append(("target", seat, -1, -1))
    elif target_kind == "foe":
        foes = state.opponents(seat)
        if len(foes) == 1:
            _finish_card(state, seat, foes[0], events)
        else:
            state.tasks.append(("target", seat, -1, -1))
    else:
        _finish_card(state, seat, -1, events)


def _use_ability(state: State, avatar: pieces.Avatar, index: int, events: list[Event]) -> None:
    ability = pieces.abilities(avatar)[index]
    avatar.ready = False
    events.append(
        _event(
            state,
            "ability",
            f"{CARDS[avatar.card].name} of {pieces.seat_name(state, avatar.owner)}"
            f" uses {ability.name}",
            avatar.owner,
            ability=ability.name,
            at=geometry.name(avatar.loc),
        )
    )
    targets = cards.ability_targets(state, avatar.owner, avatar.loc, ability.effect)
    if targets == [-1]:
        cards.resolve(state, avatar.owner, ability.effect, -1, events)
    elif ability.effect.target == "foe" and len(targets) == 1:
        cards.resolve(state, avatar.owner, ability.effect, targets[0], events)
    else:
        state.tasks.append(("target", avatar.owner, avatar.uid, index))


def _after_move(state: State) -> None:
    mover = state.avatars.get(state.mover)
    if mover is not None and _after_move_moves(state, mover):
        state.step = Step.AFTER_MOVE
    else:
        state.mover = -1
        state.step = Step.COMMAND


def _do_step(state: State, seat: int, move: Move, events: list[Event]) -> None:
    kind = move.kind
    name = pieces.seat_name(state, seat)
    if kind == Kind.STONE:
        _place_stone(state, seat, move.a, events)
    elif kind == Kind.DRAW:
        pieces.draw(state, seat, events)
        state.step = Step.INFLUENCE
    elif kind == Kind.SHEN:
        shen.place(state, seat, move.a, events)
        state.step = Step.INFLUENCE
    elif kind == Kind.PLAY:
        _play_main(state, seat, move.a, events)
    elif kind == Kind.PASS:
        if state.step == Step.AFTER_MOVE:
            state.mover = -1
        state.step = Step.COMMAND
    elif kind == Kind.END:
        events.append(_event(state, "turn_end", f"{name} ends the turn", seat))
        _next_turn(state, events)
    elif kind == Kind.CLAIM:
        avatar = state.avatars[state.at[move.a]]
        state.acted.append(avatar.uid)
        avatar.ready = False
        state.claims[move.a] = seat
        held = sum(1 for owner in state.claims.values() if owner == seat)
        events.append(
            _event(
                state,
                "claimed",
                f"{name} claims the Anchor Point {geometry.name(move.a)} ({held} held)",
                seat,
                at=geometry.name(move.a),
                held=held,
            )
        )
        if scoring.check_anchor_win(state, seat, events):
            return
        # "For every additional Anchor Point you claim, beyond the first, your opponent
        # loses a card".
        if held > 1:
            foes = state.opponents(seat)
            if len(foes) == 1:
                state.tasks.append(("lose", foes[0], held - 1))
            elif foes:
                state.tasks.append(("foe", seat, held - 1))
    elif kind == Kind.SIEGE:
        avatar = state.avatars[state.at[move.a]]
        state.acted.append(avatar.uid)
        avatar.ready = False
        combat.start(state, "stone", avatar.uid, move.a, move.b, state.stones[move.b], -1, events)
    elif kind == Kind.HOLD:
        avatar = state.avatars[state.at[move.a]]
        state.acted.append(avatar.uid)
        state.mover, state.steps_left = avatar.uid, 0
        state.step = Step.AFTER_MOVE
    elif kind == Kind.STEP:
        avatar = state.avatars[state.at[move.a]]
        if state.step == Step.COMMAND:
            state.acted.append(avatar.uid)
            state.mover = avatar.uid
            state.steps_left = pieces.trait(state, avatar, "move")
        defender = state.at.get(move.b)
        if defender is not None:
            # "Make a Melee Attack if your Avatar moves into a space or vertex occupied by
            # an opponent's Avatar."
            avatar.ready = False
            state.mover = -1
            state.step = Step.COMMAND
            combat.start(
                state,
                "melee",
                avatar.uid,
                move.a,
                move.b,
                state.avatars[defender].owner,
                defender,
                events,
            )
            return
        pieces.move_to(state, avatar, move.b)
        state.steps_left -= 1
        events.append(
            _event(
                state,
                "moved",
                f"{CARDS[avatar.card].name} moves {geometry.name(move.a)}"
                f" to {geometry.name(move.b)}",
                seat,
                **{"from": geometry.name(move.a)},
                to=geometry.name(move.b),
            )
        )
        if state.steps_left > 0:
            state.step = Step.MOVING
        else:
            _after_move(state)
    elif kind == Kind.STOP:
        _after_move(state)
    elif kind == Kind.ABILITY:
        avatar = state.avatars[state.mover]
        state.mover = -1
        state.step = Step.COMMAND
        _use_ability(state, avatar, move.a, events)
    elif kind == Kind.RANGED:
        avatar = state.avatars[state.mover]
        avatar.ready = False
        state.mover = -1
        state.step = Step.COMMAND
        target = state.avatars[state.at[move.a]]
        combat.start(
            state, "ranged", avatar.uid, avatar.loc, move.a, target.owner, target.uid, events
        )
    else:  # pragma: no cover - _is_legal admits nothing else
        raise AssertionError(move)


def _do_task(state: State, seat: int, move: Move, events: list[Event]) -> None:
    task = state.tasks[-1]
    kind = task[0]
    if kind == "lose":
        pile = {Kind.LOSE_HAND: "hand", Kind.LOSE_DECK: "deck", Kind.LOSE_DISCARD: "discard"}
        pieces.lose(state, seat, pile[move.kind], move.a, events)
        if task[2] > 1:
            state.tasks[-1] = ("lose", seat, task[2] - 1)
        else:
            state.tasks.pop()
    elif kind == "yield":
        state.tasks.pop()
        avatar = state.avatars[task[2]]
        if move.kind == Kind.REMOVE_AVATAR:
            pieces.remove_from_game(state, avatar, events, why="given up instead of cards")
        else:
            state.tasks.append(("lose", seat, task[3]))
    elif kind == "retreat":
        state.tasks.pop()
        combat.place_retreat(state, state.avatars[task[2]], move.a, events)
    elif kind == "foe":
        state.tasks.pop()
        events.append(
            _event(
                state,
                "foe",
                f"{pieces.seat_name(state, move.a)} must lose {task[2]} card(s)",
                seat,
                foe=move.a,
                amount=task[2],
            )
        )
        state.tasks.append(("lose", move.a, task[2]))
    elif kind == "target":
        state.tasks.pop()
        if task[2] < 0:
            _finish_card(state, seat, move.a, events)
        else:
            avatar = state.avatars[task[2]]
            effect = pieces.abilities(avatar)[task[3]].effect
            cards.resolve(state, seat, effect, move.a, events)
    elif kind == "support":
        if combat.apply_support(state, seat, task[2], move, events):
            state.tasks.pop()
    elif kind == "winner":
        state.tasks.pop()
        if move.kind == Kind.ABILITY:
            _use_ability(state, state.avatars[task[2]], move.a, events)
    else:  # pragma: no cover
        raise AssertionError(task)


def _settle(state: State, events: list[Event]) -> bool:
    """Run automatic tasks and drop decisions nobody needs to make. True when the top of
    the stack is a real decision (or the stack is empty)."""
    task = state.tasks[-1]
    kind = task[0]
    if kind in ("resolve", "position", "enter", "combat_end"):
        state.tasks.pop()
        if kind == "resolve":
            combat.resolve(state, events)
        elif kind == "position":
            combat.position(state, events)
        elif kind == "enter":
            combat.enter(state, events)
        else:
            state.combat = None
        return False
    seat = task[1]
    player = state.players[seat]
    drop = False
    if kind == "lose":
        drop = player.out or task[2] <= 0 or player.cards_left() == 0
    elif kind in ("yield", "retreat"):
        drop = task[2] not in state.avatars
    elif kind == "foe":
        foes = state.opponents(seat)
        if len(foes) == 1:
            state.tasks[-1] = ("lose", foes[0], task[2])
            return False
        drop = not foes
    elif kind == "target":
        drop = not _target_moves(state, task) if task[2] < 0 or task[2] in state.avatars else True
        if drop and task[2] < 0 and state.playing >= 0:
            # Nothing left to aim at: the card is spent.
            state.players[seat].discard.append(state.playing)
            state.playing = -1
    elif kind == "support":
        drop = not combat.needs_asking(state, seat, task[2])
    elif kind == "winner":
        avatar = state.avatars.get(task[2])
        drop = player.out or avatar is None or not _action_abilities(state, avatar)
    if drop:
        state.tasks.pop()
        return False
    return True


def _advance(state: State, events: list[Event]) -> None:
    """Carry the game on until someone has a decision to make (or it is over)."""
    while True:
        if scoring.check(state, events):
            return
        if state.tasks:
            if _settle(state, events):
                return
            continue
        step = state.step
        if step == Step.PLACE_STONE:
            return
        if state.players[state.active].out:
            state.mover = -1
            _next_turn(state, events)
            continue
        player = state.players[state.active]
        if (
            step == Step.RECOVERY
            and not (player.deck or player.discard)
            and not _recovery_moves(state)
        ):
            state.step = Step.INFLUENCE
            continue
        if step in (Step.MOVING, Step.AFTER_MOVE) and state.mover not in state.avatars:
            state.mover = -1
            state.step = Step.COMMAND
            continue
        return
