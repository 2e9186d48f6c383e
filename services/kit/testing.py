"""Random play and the checks every engine passes (OpenSpiel's random-simulation habit).

Used by each game's tests (``check_random_game``), by the benchmarks and by the bots
(``random_game``). Nothing here knows a particular game.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from services.kit.engine import (
    Engine,
    EngineError,
    GameOver,
    IllegalMove,
    MalformedMove,
    NotYourDecision,
    Outcome,
    replay,
)

Invariant = Callable[[Any], None]
"""Raises AssertionError (with a message) when a state breaks a game's invariant."""

LeakCheck = Callable[[Any, Any, "int | None"], None]
"""(state, view, seat) -> raises AssertionError when the view shows what seat may not see."""


@dataclass
class Playthrough:
    state: Any
    outcome: Outcome | None
    moves: list[tuple[int, Any]] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return len(self.moves)


# Arguments no move of any game may carry: negative (-1 is left out, as several games use
# it for "none", "the deck" or "stay") and far past any board, hand or deck.
OUT_OF_RANGE = (-2, -11, 10**9)


def _move_fields(move: Any) -> list[str]:
    if dataclasses.is_dataclass(move):
        return [f.name for f in dataclasses.fields(move)]
    return list(getattr(move, "_fields", ()))


def _with(move: Any, name: str, value: Any) -> Any:
    if dataclasses.is_dataclass(move) and not isinstance(move, type):  # a move, not its class
        return dataclasses.replace(move, **{name: value})
    return move._replace(**{name: value})


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def out_of_range_variants(move: Any) -> list[Any]:
    """``move`` with one integer argument at a time (its kind too) set out of range, and
    each element of a tuple of integers. Booleans stay as they are.
    """
    variants = []
    for name in _move_fields(move):
        value = getattr(move, name)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            variants += [_with(move, name, bad) for bad in OUT_OF_RANGE]
        elif isinstance(value, tuple) and value and all(_plain_int(v) for v in value):
            for i in range(len(value)):
                for bad in OUT_OF_RANGE:
                    variants.append(_with(move, name, (*value[:i], bad, *value[i + 1 :])))
    return variants


def check_out_of_range_refused(
    engine: Engine, state: Any, seat: int, moves: list[Any], before: Any = None
) -> int:
    """Each of ``moves`` (legal now for ``seat``) with an argument out of range or negative
    is refused with :class:`MalformedMove`, and the state is unchanged (equal to
    ``before``, a copy taken now when not given). One move of each kind is tried. Returns
    how many variants were tried.
    """
    tried = 0
    kinds: set[Any] = set()
    # One copy serves every variant: a refusal that changed the state fails at once.
    before = copy.deepcopy(state) if before is None else before
    for move in moves:
        kind = (type(move).__name__, getattr(move, "kind", None))
        if kind in kinds:
            continue
        kinds.add(kind)
        for bad in out_of_range_variants(move):
            if bad in moves:  # a sentinel some game gives a meaning: not out of range
                continue
            try:
                engine.apply(state, seat, bad)
            except MalformedMove:
                pass
            except Exception as exc:
                raise AssertionError(
                    f"{bad!r} (out of range) raised {type(exc).__name__}: {exc}; "
                    "expected MalformedMove"
                ) from exc
            else:
                raise AssertionError(f"{bad!r} (out of range) was accepted")
            assert state == before, f"refusing {bad!r} changed the state"
            tried += 1
    return tried


# What a move that is not listed may be refused with: any other error, or acceptance, breaks
# the contract that apply accepts exactly the listed moves.
REFUSALS = (MalformedMove, IllegalMove, NotYourDecision)


def check_listed_accepted(engine: Engine, state: Any, seat: int, moves: list[Any]) -> None:
    """Each of ``moves`` (listed now for ``seat``) is accepted by ``apply``, each tried on
    its own copy of ``state`` (which is left as it was).
    """
    for move in moves:
        trial = copy.deepcopy(state)
        try:
            engine.apply(trial, seat, move)
        except Exception as exc:
            raise AssertionError(
                f"{move} is listed for seat {seat} but apply refused it: "
                f"{type(exc).__name__}: {exc}"
            ) from exc


def check_unlisted_refused(
    engine: Engine,
    state: Any,
    seat: int,
    listed: list[Any],
    candidates: list[Any],
    before: Any = None,
) -> int:
    """Each of ``candidates`` not in ``listed`` (the moves of ``seat`` now) is refused with
    :class:`MalformedMove`, :class:`IllegalMove` (naming a rule) or
    :class:`NotYourDecision`, and the state is unchanged (equal to ``before``, a copy
    taken now when not given). Returns how many were tried.
    """
    legal = set(listed)
    before = copy.deepcopy(state) if before is None else before
    tried = 0
    for move in candidates:
        if move in legal:
            continue
        try:
            engine.apply(state, seat, move)
        except REFUSALS as exc:
            if isinstance(exc, IllegalMove):
                assert exc.rule, f"refusing {move} for seat {seat} named no rule"
        except Exception as exc:
            raise AssertionError(
                f"{move} (not listed for seat {seat}) raised {type(exc).__name__}: {exc}; "
                "expected MalformedMove, IllegalMove or NotYourDecision"
            ) from exc
        else:
            raise AssertionError(f"{move} was accepted for seat {seat} but is not listed")
        assert state == before, f"refusing {move} (not listed for seat {seat}) changed the state"
        tried += 1
    return tried


class MovePool:
    """Moves remembered from earlier decisions of one game, to offer where they are not
    legal. Holds at most ``size`` distinct moves, forgetting the oldest first.
    """

    def __init__(self, size: int = 2000) -> None:
        self.size = size
        self._moves: dict[Any, None] = {}

    def __len__(self) -> int:
        return len(self._moves)

    def remember(self, moves: list[Any]) -> None:
        for move in moves:
            self._moves.pop(move, None)
            self._moves[move] = None
        while len(self._moves) > self.size:
            del self._moves[next(iter(self._moves))]

    def sample(self, rng: random.Random, count: int, exclude: list[Any]) -> list[Any]:
        """Up to ``count`` remembered moves not in ``exclude``, at random."""
        skip = set(exclude)
        others = [move for move in self._moves if move not in skip]
        return others if len(others) <= count else rng.sample(others, count)


def choose(engine: Engine, state: Any, rng: random.Random) -> tuple[int, Any]:
    """A random seat among those to act, and a random legal move of that seat."""
    seats = engine.to_act(state)
    seat = seats[0] if len(seats) == 1 else rng.choice(seats)
    moves = engine.legal_moves(state, seat)
    if not moves:
        raise AssertionError(f"seat {seat} is to act but has no legal move")
    return seat, moves[0] if len(moves) == 1 else rng.choice(moves)


def random_game(
    engine: Engine,
    seed: int,
    players: int,
    options: Any = None,
    *,
    max_decisions: int = 200_000,
) -> Playthrough:
    """Play one seeded game to its end with uniformly random legal moves."""
    options = options if options is not None else engine.GAME.options_type()
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed * 7919 + 17)
    moves: list[tuple[int, Any]] = []
    while engine.outcome(state) is None:
        if len(moves) >= max_decisions:
            raise AssertionError(f"seed {seed}: no outcome after {max_decisions} decisions")
        seat, move = choose(engine, state, rng)
        engine.apply(state, seat, move)
        moves.append((seat, move))
    return Playthrough(state, engine.outcome(state), moves)


def check_random_game(
    engine: Engine,
    seed: int,
    players: int,
    options: Any = None,
    *,
    invariants: Invariant | None = None,
    leak_check: LeakCheck | None = None,
    deep_every: int = 7,
    accept_every: int = 4,
    unlisted: int = 4,
    max_decisions: int = 200_000,
) -> Playthrough:
    """Play one seeded random game to its end, checking the contract after every move.

    After every move: the invariants hold, someone has a decision while there is no
    outcome, and the chosen move's text form parses back to it. Every ``deep_every``-th
    decision (a deep check) also: legal moves are sorted and distinct for every seat,
    seats not to act have none, every view is built and passes ``leak_check``, an
    out-of-turn move is refused with the state unchanged, and apply accepts exactly the
    listed moves:

    - every ``accept_every``-th deep check (the first included), each listed move of each
      seat to act is applied to a copy of the state and accepted;
    - each kind of listed move with an argument out of range or negative is refused as
      malformed; up to ``unlisted`` moves remembered from earlier deep checks of the same
      game, and up to ``unlisted`` listed now for another seat, that are not listed for
      the seat are refused as malformed, illegal (naming a rule) or not its decision; the
      state is unchanged by each refusal.

    At the end: replay from the seed equals the live state, and any further move raises
    GameOver. The checks draw from their own generator, so the game played is the one
    :func:`random_game` plays from the same seed.
    """
    options = options if options is not None else engine.GAME.options_type()
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed * 7919 + 17)
    probes = random.Random(seed * 104_729 + 31)
    pool = MovePool()
    moves: list[tuple[int, Any]] = []
    seats = range(players)
    deep_done = 0

    def deep_checks() -> None:
        acting = set(engine.to_act(state))
        listed_by_seat: dict[int, list[Any]] = {}
        for seat in seats:
            listed = engine.legal_moves(state, seat)
            if seat in acting:
                assert listed, f"seat {seat} is to act but has no legal move"
            else:
                assert not listed, f"seat {seat} is not to act but has moves"
            assert listed == sorted(listed), "legal moves not in sorted order"
            assert len(set(listed)) == len(listed), "duplicate legal moves"
            for move in listed:
                assert engine.parse_move(str(move)) == move, f"text form of {move!r}"
            listed_by_seat[seat] = listed
        before = copy.deepcopy(state)  # every refusal below must leave the state equal to it
        for seat in sorted(acting):
            listed = listed_by_seat[seat]
            if deep_done % accept_every == 0:
                check_listed_accepted(engine, state, seat, listed)
            check_out_of_range_refused(engine, state, seat, listed, before)
            legal = set(listed)
            others = [m for s, ms in listed_by_seat.items() if s != seat for m in ms]
            others = [m for m in dict.fromkeys(others) if m not in legal]
            if len(others) > unlisted:
                others = probes.sample(others, unlisted)
            offered = pool.sample(probes, unlisted, listed) + others
            check_unlisted_refused(engine, state, seat, listed, offered, before)
        for listed in listed_by_seat.values():
            pool.remember(listed)
        idle = [seat for seat in seats if seat not in acting]
        if idle:
            seat = idle[0]
            other = next(iter(acting))
            probe = engine.legal_moves(state, other)[0]
            try:
                engine.apply(state, seat, probe)
            except NotYourDecision:
                pass
            except Exception as exc:
                raise AssertionError(
                    f"seat {seat} moving out of turn raised {type(exc).__name__}: {exc}; "
                    "expected NotYourDecision"
                ) from exc
            else:
                raise AssertionError(f"seat {seat} moved out of turn")
            assert state == before, "a refused move changed the state"
        for seat in [*seats, None]:
            seen = engine.view(state, seat)
            if leak_check is not None:
                leak_check(state, seen, seat)

    if invariants is not None:
        invariants(state)
    while engine.outcome(state) is None:
        if len(moves) >= max_decisions:
            raise AssertionError(f"seed {seed}: no outcome after {max_decisions} decisions")
        assert engine.to_act(state), f"seed {seed}: no outcome and nobody to act"
        if len(moves) % deep_every == 0:
            try:
                deep_checks()
            except AssertionError as exc:
                raise AssertionError(f"seed {seed}, decision {len(moves)}: {exc}") from exc
            deep_done += 1
        try:
            seat, move = choose(engine, state, rng)
            assert engine.parse_move(str(move)) == move, f"text form of {move!r}"
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}, decision {len(moves)}: {exc}") from exc
        engine.apply(state, seat, move)
        moves.append((seat, move))
        if invariants is not None:
            invariants(state)

    final = engine.outcome(state)
    assert final is not None
    assert len(final.scores) == players, f"seed {seed}: one score per seat expected"
    assert all(0 <= w < players for w in final.winners), f"seed {seed}: bad winner"
    assert engine.to_act(state) == (), f"seed {seed}: seats to act after the end"
    for seat in [*seats, None]:
        seen = engine.view(state, seat)
        if leak_check is not None:
            leak_check(state, seen, seat)
    try:
        engine.apply(state, 0, moves[-1][1] if moves else None)
    except GameOver:
        pass
    except EngineError as exc:  # pragma: no cover - the message says what went wrong
        raise AssertionError(f"seed {seed}: a move after the end raised {exc!r}") from exc
    else:
        raise AssertionError(f"seed {seed}: a move was accepted after the end")
    rebuilt = replay(engine, seed, players, options, moves)
    assert rebuilt == state, f"seed {seed}: replay differs from the live state"
    return Playthrough(state, final, moves)


def assert_refused_unchanged(
    engine: Engine, state: Any, seat: int, move: Any, error: type[EngineError]
) -> EngineError:
    """Apply a move that must be refused with ``error``; the state must not change."""
    before = copy.deepcopy(state)
    try:
        engine.apply(state, seat, move)
    except error as exc:
        assert state == before, "a refused move changed the state"
        return exc
    raise AssertionError(f"{move} was accepted; expected {error.__name__}")


def random_game_count(quick: int, most: int | None = None) -> int:
    """How many random games a test plays: ``quick`` in ``make test``, more in ``make soak``.

    ``make soak`` sets TABLETOP_RANDOM_GAMES (for example 1000) for every configuration;
    ``most`` caps it for a test whose point is not the rules and whose games cost far
    more than play (a codec round trip of every legal move at every decision).
    """
    count = int(os.environ.get("TABLETOP_RANDOM_GAMES", quick))
    return min(count, most) if most is not None else count


def assert_golden(path: str | os.PathLike[str], text: str) -> None:
    """Compare ``text`` with a golden file; ``make golden`` rewrites it.

    ``make golden`` sets TABLETOP_UPDATE_GOLDEN=1.
    """
    if os.environ.get("TABLETOP_UPDATE_GOLDEN") == "1":
        os.makedirs(os.path.dirname(os.fspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    if not os.path.exists(path):
        raise AssertionError(f"{path} is missing: run `make golden` and review the new file")
    with open(path, encoding="utf-8") as handle:
        expected = handle.read()
    if text != expected:
        import difflib

        diff = "".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    text.splitlines(keepends=True),
                    fromfile=f"{path} (golden)",
                    tofile="now",
                )
            )[:80]
        )
        raise AssertionError(f"behaviour changed; if intended, run `make golden`:\n{diff}")


def view_diff(old: Any, new: Any, path: str = "") -> list[str]:
    """Field-level differences between two views (dataclasses, tuples, scalars)."""
    if old == new:
        return []
    if dataclasses.is_dataclass(old) and dataclasses.is_dataclass(new) and type(old) is type(new):
        lines = []
        for f in dataclasses.fields(old):
            sub = f"{path}.{f.name}" if path else f.name
            lines += view_diff(getattr(old, f.name), getattr(new, f.name), sub)
        return lines
    fields = getattr(old, "_fields", None)  # a NamedTuple: by field name
    if fields is not None and type(old) is type(new):
        lines = []
        for name in fields:
            sub = f"{path}.{name}" if path else name
            lines += view_diff(getattr(old, name), getattr(new, name), sub)
        return lines
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        lines = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            lines += view_diff(a, b, f"{path}[{i}]")
        return lines
    return [f"{path}: {old!r} -> {new!r}"]


def record_playthrough(
    engine: Engine,
    seed: int,
    players: int,
    options: Any = None,
    *,
    max_listed: int = 30,
) -> str:
    """A seeded random game written move by move: who acts, their legal moves, the move
    made, its events with their audience, and how every view changed.

    The spectator's view is written in full at the start, then as field-level changes
    after each move; each seat's view is written as its difference from the spectator's
    (what only that seat may see) whenever that difference changes. Golden files hold
    this text; any change in behaviour shows up as a diff in review.
    """
    options = options if options is not None else engine.GAME.options_type()
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed * 7919 + 17)
    names = engine.GAME.seat_names(players)
    out = [
        f"# {engine.GAME.title}: seed {seed}, {players} players, options {options!r}",
        f"# seats: {', '.join(f'{i}={n}' for i, n in enumerate(names))}",
    ]
    spectator = engine.view(state, None)
    out.append(f"view[spectator] {spectator!r}")
    private: dict[int, list[str]] = {}

    def seat_views(current: Any) -> None:
        for seat in range(players):
            lines = view_diff(current, engine.view(state, seat))
            if lines != private.get(seat):
                private[seat] = lines
                out.append(f"view[{seat}] differs from the spectator's in:")
                out.extend(f"    {line}" for line in lines)

    seat_views(spectator)
    version = 0
    while engine.outcome(state) is None:
        for seat in engine.to_act(state):
            listed = engine.legal_moves(state, seat)
            shown = " | ".join(str(m) for m in listed[:max_listed])
            more = f" | ... (+{len(listed) - max_listed})" if len(listed) > max_listed else ""
            out.append(f"legal[{seat}] {len(listed)}: {shown}{more}")
        seat, move = choose(engine, state, rng)
        events = engine.apply(state, seat, move)
        version += 1
        out.append(f"== v{version} seat {seat}: {move}")
        for event in events:
            audience = "all" if event.to is None else ",".join(map(str, sorted(event.to)))
            out.append(f"  event[{audience}] {event.kind}: {event.text}")
        now = engine.view(state, None)
        out.extend(f"  view[spectator] {line}" for line in view_diff(spectator, now))
        spectator = now
        seat_views(spectator)
    out.append(f"outcome {engine.outcome(state)!r}")
    return "\n".join(out) + "\n"
