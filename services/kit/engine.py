"""The engine contract every game follows, and the small types it shares.

An engine is a plain module with no transport in it (see ARCHITECTURE.md); its apply and
legal_moves are the kit's (services/kit/kernel.py), over the game's rule table::

    GAME: GameInfo                                   static facts: name, seats, options type
    new_game(seed, players, options) -> State        deals, shuffles and rolls from the seed
    legal_moves(state, seat) -> list[Move]           every move that seat may make now, sorted
    apply(state, seat, move) -> list[Event]          validates first, then changes the state
    public_move(move) -> bool                        may other seats see the move itself
    determinize(state, seat, rng) -> State           hidden things re-dealt for that seat
    view(state, seat | None) -> View                 what that seat (None: a spectator) may see
    outcome(state) -> Outcome | None                 set once the game is over
    to_act(state) -> tuple[int, ...]                 seats with a decision pending now
    parse_move(text) -> Move                         the inverse of ``str(move)``

Optional: ``reseat_view(view, seat | None) -> View``, for an engine whose views of one
state differ in their viewer alone (the Channeling: it hides only the deck, from every
seat alike): the game manager builds one view a version and the other seats' from it. An
engine with anything hidden from some seats and not others must not define it.

``State`` is a mutable object that compares equal to an identical state (dataclass
equality; the generator is an :class:`Rng`, which compares by its internal state), so that
``replay(...) == live`` can be checked. ``Move`` is a small frozen, hashable, ordered value
whose ``str()`` is its text form. ``View`` is a frozen dataclass of what may be seen.

Errors are typed, as python-chess does: :class:`MalformedMove` (not well formed),
:class:`IllegalMove` (well formed, but a named rule forbids it now),
:class:`NotYourDecision` (this seat has nothing to decide now), :class:`GameOver`, and
:class:`BadOptions` for a game that cannot be created as asked. The service maps each to
its gRPC status. An error never changes the state.
"""

from __future__ import annotations

import dataclasses
import random
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class EngineError(Exception):
    """Base of every error an engine raises for something a client asked.

    ``reason`` is a machine-readable UPPER_SNAKE code (it becomes the ErrorInfo reason);
    the message is for people and never carries hidden information.
    """

    reason = "ENGINE_ERROR"

    def __init__(self, message: str, **metadata: str) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = {k: str(v) for k, v in metadata.items()}


class MalformedMove(EngineError):
    """The move is not well formed: unknown kind, missing field, value out of range."""

    reason = "MALFORMED_MOVE"


class IllegalMove(EngineError):
    """The move is well formed but the rules forbid it now.

    ``rule`` names the rule it breaks, in the rulebook's words (for example
    ``"Move a Druid Token"``).
    """

    reason = "ILLEGAL_MOVE"

    def __init__(self, message: str, rule: str, **metadata: str) -> None:
        super().__init__(message, rule=rule, **metadata)
        self.rule = rule


class NotYourDecision(EngineError):
    """The seat has no decision pending now (another seat's turn, or a spectator)."""

    reason = "NOT_YOUR_DECISION"


class GameOver(EngineError):
    """The game has an outcome; no more moves are accepted."""

    reason = "GAME_OVER"


class BadOptions(EngineError):
    """The game cannot be created with these players or options."""

    reason = "BAD_OPTIONS"


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended.

    ``scores`` has one entry per seat. ``winners`` lists the winning seats (several for a
    shared win, none when every player loses). ``reason`` is a short UPPER_SNAKE code
    (``"MOST_SPLENDOR"``, ``"TIE_FEWEST_CARDS"``...), ``details`` a line per seat or rule
    for people.
    """

    scores: tuple[int, ...]
    winners: tuple[int, ...]
    reason: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Event:
    """Something that happened, as players are told it.

    ``to`` is None for a public event, else the seats that may see it (a card drawn is
    told to its drawer; the others get a public event with the count only). ``data``
    holds JSON-able scalars, lists and dicts. ``text`` is one line for people.
    """

    kind: str
    text: str
    seat: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    to: frozenset[int] | None = None

    def visible_to(self, seat: int | None) -> bool:
        return self.to is None or (seat is not None and seat in self.to)


class Rng(random.Random):
    """The one seeded generator a game state holds.

    Compares equal by internal state (so replayed and live states compare equal) and
    never shows its state or seed in ``repr``, so it cannot leak through a log line.
    """

    def __eq__(self, other: object) -> bool:
        return isinstance(other, random.Random) and self.getstate() == other.getstate()

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # unhashable: equal by its mutable state

    def __repr__(self) -> str:
        return "Rng(<hidden>)"

    def __deepcopy__(self, memo: dict[int, Any]) -> Rng:
        copy = Rng()
        copy.setstate(self.getstate())
        return copy

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rng_from_state, (self.getstate(),))


def _rng_from_state(state: Any) -> Rng:
    rng = Rng()
    rng.setstate(state)
    return rng


class Options:
    """Base for a game's options dataclass: ``to_dict`` / ``from_dict`` for the store.

    Fields must be JSON-able scalars or tuples of them; ``from_dict`` ignores nothing and
    rejects unknown keys with :class:`BadOptions`, so a stored game always rebuilds the
    same way.
    """

    #: The migration of stored games: a value for each option added after games were
    #: stored without it, chosen so that those games replay exactly as they were played.
    #: A rule fixed later gets an option whose default is the fixed rule for new games and
    #: whose entry here is the old rule, e.g. ``{"evening": "roll"}``.
    STORED_BEFORE: typing.ClassVar[Mapping[str, Any]] = {}

    if typing.TYPE_CHECKING:
        # Each game's subclass is a dataclass (this base is not): the dataclasses functions
        # take it.
        __dataclass_fields__: typing.ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = _jsonable(dataclasses.asdict(self))
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """The options a stored game was created with (the store's JSON, see to_dict).

        Keys the stored row lacks take their ``STORED_BEFORE`` value (the rules the game
        was played under), else the field's default.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise BadOptions(f"unknown options: {', '.join(sorted(unknown))}")
        data = {**{k: v for k, v in cls.STORED_BEFORE.items() if k not in data}, **data}
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for key, value in data.items():
            kwargs[key] = _tupled(value) if _is_tuple_hint(hints.get(key)) else value
        return cls(**kwargs)


def _is_tuple_hint(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is tuple:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_tuple_hint(arg) for arg in typing.get_args(hint))
    return False


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _tupled(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tupled(v) for v in value)
    return value


@dataclass(frozen=True)
class GameInfo:
    """Static facts about a game, known before any state exists."""

    name: str  # the service's short name: "channeling"
    title: str  # "The Channeling"
    min_players: int
    max_players: int
    options_type: type[Options]  # the game's Options dataclass
    seat_names: Callable[[int], tuple[str, ...]]  # players -> a name per seat
    # (players, options) -> the seats that win or lose together (teams); None: each seat
    # is a side of its own. A resignation ends the game once one side is left.
    sides: Callable[[int, Any], tuple[tuple[int, ...], ...]] | None = None

    def sides_of(self, players: int, options: Any) -> tuple[tuple[int, ...], ...]:
        if self.sides is None:
            return tuple((seat,) for seat in range(players))
        return self.sides(players, options)


class Engine(Protocol):
    """What the kit, the tests and the bots need from an engine module."""

    GAME: GameInfo

    def new_game(self, seed: int, players: int, options: Any) -> Any: ...
    def legal_moves(self, state: Any, seat: int) -> list[Any]: ...
    def apply(self, state: Any, seat: int, move: Any) -> list[Event]: ...
    def view(self, state: Any, seat: int | None) -> Any: ...
    def outcome(self, state: Any) -> Outcome | None: ...
    def to_act(self, state: Any) -> tuple[int, ...]: ...
    def parse_move(self, text: str) -> Any: ...
    def public_move(self, move: Any) -> bool:
        """Whether seats other than the mover may be shown the move itself (its events
        say what they may know either way); services/kit/kernel.py's default: always."""
        ...

    def determinize(self, state: Any, seat: int | None, rng: random.Random) -> Any:
        """A new state consistent with what ``seat`` has seen, everything hidden from it
        re-dealt (services/kit/determinize.py has the contract and its check)."""
        ...


class Turns(Protocol):
    """What :func:`check_seat` reads of an engine: a part of :class:`Engine`."""

    def outcome(self, state: Any) -> Outcome | None: ...
    def to_act(self, state: Any) -> tuple[int, ...]: ...


def check_seat(engine: Turns, state: Any, seat: int | None) -> None:
    """Raise the error every engine raises for a seat that may not move now: game over,
    then a seat with nothing to decide (the kernel's first check, services/kit/kernel.py).
    """
    if engine.outcome(state) is not None:
        raise GameOver("the game is over")
    if seat is None or seat not in engine.to_act(state):
        raise NotYourDecision("it is not this seat's decision now")


def replay(
    engine: Engine,
    seed: int,
    players: int,
    options: Any,
    moves: Sequence[tuple[int, Any]],
) -> Any:
    """Rebuild a state from its seed and the accepted moves, in order."""
    state = engine.new_game(seed, players, options)
    for seat, move in moves:
        engine.apply(state, seat, move)
    return state
