"""Carrying out an action: paying its cost, then resolving its effect, one task at a time.

An action is turned into a list of tasks (``state.tasks``, first task first). A task
either needs no decision (``AUTO``: gain the shown essences, draw, ...) or waits for one
of the moves ``options`` lists (pay one essence of an "any" cost, choose a Creature to
turn, ...). A task whose decision has a single possible move is carried out without
asking (it is no decision); one with no possible move has no effect ("a power may be
used even if it has no effect").

Task shapes (tuples, so states pickle small and compare by value)::

    ("pay", src, fixed, any_n, excl, discount)   WAIVE while discount is left, then PAY
    ("turn_other", src, type)                    TURN one of your other straightened <type>
    ("discard_cost", src)                        DISCARD one card as part of a cost
    ("gain", bag) / ("place", src, bag)          AUTO: essences to your pool / onto src
    ("gain_any", src, dest, n, excl)             GAIN one essence (dest -1: your pool)
    ("rival_gains", bag)                         AUTO
    ("choice", comp, power)                      OPTION between the power's alternatives
    ("place_paid", src)                          TARGET: one of your components
    ("draw", n)                                  AUTO
    ("retrieve",) / ("discard_effect",)          RETRIEVE / DISCARD one card
    ("look", n) then ("return", pile, left, k)   PILE, then RETURN cards one by one
    ("monument",)                                MONUMENT: a face-up one or the deck's top
    ("straighten", src, kinds)                   STRAIGHTEN one of your other turned ones
    ("check_victory", src)                       AUTO
    ("item_power", src)                          POWER of a Magic Item in the display, or DONE
    ("place_artifact", extra)                    PLACE a card with extra discount, or DONE
    ("enter", card) / ("claim", comp)            AUTO: the placed/claimed component arrives
    ("take_from", n) then ("take_pick", c, n)    TARGET a component, GAIN from it
    ("discard_gain",) / ("discard_gain2",)       GAIN: 1 Gold, or 2 other essences
    ("swap_item",) then ("pass_draw",)           ITEM: the passing swap; AUTO: draw 1
"""

from __future__ import annotations

from collections.abc import Callable

from services.resarcana.engine import scoring
from services.resarcana.engine.content import CONTENT, KIND_BIT, Clause, Component
from services.resarcana.engine.essences import ANY, GOLD, NONE, TITLES, bag_text, can_pay
from services.resarcana.engine.moves import DECK, Kind, Move
from services.resarcana.engine.state import State
from services.resarcana.engine.table import (
    SEAT_NAMES,
    Log,
    draw,
    gain,
    gain_bag,
    name,
    names,
    put_on,
    refill_display,
    spend,
    take_from,
)

DONE = Move(Kind.DONE)


# ---------------------------------------------------------------- what a seat may pay


def artifact_discount(state: State, seat: int, card: int) -> int:
    """Discount abilities apply whether or not their component is turned."""
    comp = CONTENT[card]
    total = 0
    for cid in state.seats[seat].components():
        owner = CONTENT[cid]
        if owner.discount and (owner.discount_on == "artifact" or comp.is_type(owner.discount_on)):
            total += owner.discount
    return total


def can_place(state: State, seat: int, card: int, extra: int = 0) -> bool:
    cost = CONTENT[card].cost
    disc = artifact_discount(state, seat, card) + extra
    return can_pay(state.seats[seat].pool, cost.fixed, cost.any_n, cost.excl, disc)


def power_usable(state: State, seat: int, cid: int, index: int, borrowed: bool = False) -> bool:
    """Whether seat can pay the whole cost of power ``index`` of component ``cid``.

    ``borrowed``: a Magic Item's power used from the display (Solomon's Key), whose
    "turn this" the Key's own turning replaces.
    """
    me = state.seats[seat]
    power = CONTENT[cid].powers[index]
    cost = power.cost
    if not borrowed and state.turned[cid]:
        return False
    if cost.turn_mage and (me.mage < 0 or me.mage == cid or state.turned[me.mage]):
        return False
    if cost.turn_other:
        for wanted in set(cost.turn_other):
            free = sum(
                1
                for other in me.components()
                if other != cid and not state.turned[other] and CONTENT[other].is_type(wanted)
            )
            if free < cost.turn_other.count(wanted):
                return False
    if cost.discard > len(me.hand):
        return False
    amount = cost.amount
    return amount.empty or can_pay(me.pool, amount.fixed, amount.any_n, amount.excl, 0)


# ---------------------------------------------------------------- building tasks


def compile_clauses(src: int, clauses: tuple[Clause, ...]) -> list[tuple]:
    tasks: list[tuple] = []
    for clause in clauses:
        op, amount = clause.op, clause.amount
        if op == "gain":
            if any(amount.fixed):
                tasks.append(("gain", amount.fixed))
            if amount.any_n:
                tasks.append(("gain_any", src, -1, amount.any_n, amount.excl))
        elif op == "place_here":
            if any(amount.fixed):
                tasks.append(("place", src, amount.fixed))
            if amount.any_n:
                tasks.append(("gain_any", src, src, amount.any_n, amount.excl))
        elif op == "rival_gains":
            tasks.append(("rival_gains", amount.fixed))
        elif op in ("draw", "look", "take_from"):
            tasks.append((op, clause.n))
        elif op == "retrieve":
            tasks.extend([("retrieve",)] * clause.n)
        elif op == "discard":
            tasks.extend([("discard_effect",)] * clause.n)
        elif op == "straighten":
            tasks.append(("straighten", src, clause.kinds))
        elif op == "monument":
            tasks.append(("monument",))
        elif op in ("check_victory", "item_power", "place_paid"):
            tasks.append((op, src))
        elif op == "place_artifact":
            tasks.append(("place_artifact", clause.n))
        else:  # pragma: no cover - content.py only makes the ops above
            raise AssertionError(op)
    return tasks


def start_power(
    state: State, seat: int, cid: int, index: int, log: Log, borrowed: bool = False
) -> None:
    """Pay the parts of the cost that need no decision, queue the rest and the effect."""
    me = state.seats[seat]
    comp = CONTENT[cid]
    power = comp.powers[index]
    cost = power.cost
    turned = []
    if cost.turn_self and not borrowed:
        state.turned[cid] = True
        turned.append(comp.name)
    if cost.turn_mage:
        state.turned[me.mage] = True
        turned.append(f"the Mage {name(me.mage)}")
    log.say(
        "power",
        f"{SEAT_NAMES[seat]} uses power {index + 1} of {comp.name}: {power.text}"
        + (f" (turns {', '.join(turned)})" if turned else ""),
        seat,
        component=comp.slug,
        power=index + 1,
    )
    tasks: list[tuple] = [("turn_other", cid, t) for t in cost.turn_other]
    tasks += [("discard_cost", cid)] * cost.discard
    if not cost.amount.empty:
        a = cost.amount
        tasks.append(("pay", cid, a.fixed, a.any_n, a.excl, 0))
    if len(power.effect) > 1:
        tasks.append(("choice", cid, index))
    else:
        tasks += compile_clauses(cid, power.effect[0])
    state.tasks[0:0] = tasks


def pay_task(src: int, amount_fixed: tuple, any_n: int, excl: int, discount: int) -> tuple:
    return ("pay", src, tuple(amount_fixed), any_n, excl, discount)


# ---------------------------------------------------------------- options per task


def _pay_options(state: State, seat: int, task: tuple) -> list[Move]:
    _, _src, fixed, any_n, excl, disc = task
    pool = state.seats[seat].pool
    moves = []
    if disc:
        for e in range(5):
            if fixed[e]:
                less = list(fixed)
                less[e] -= 1
                if can_pay(pool, less, any_n, excl, disc - 1):
                    moves.append(Move(Kind.WAIVE, e))
        if any_n and can_pay(pool, fixed, any_n - 1, excl, disc - 1):
            moves.append(Move(Kind.WAIVE, ANY))
        return moves
    return [Move(Kind.PAY, e) for e in range(5) if pool[e] and not excl >> e & 1]


def _gain_options(excl: int) -> list[Move]:
    return [Move(Kind.GAIN, e) for e in range(5) if not excl >> e & 1]


def _own_targets(state: State, seat: int) -> list[int]:
    """The components an essence can be put on: all yours but the Magic Item."""
    me = state.seats[seat]
    return ([me.mage] if me.mage >= 0 else []) + me.tableau


def options(state: State, seat: int, task: tuple) -> list[Move]:
    return OPTIONS[task[0]](state, seat, task)


def _turn_other_options(state: State, seat: int, task: tuple) -> list[Move]:
    _, src, wanted = task
    return [
        Move(Kind.TURN, c)
        for c in state.seats[seat].components()
        if c != src and not state.turned[c] and CONTENT[c].is_type(wanted)
    ]


def _hand_options(kind: Kind) -> Callable[[State, int, tuple], list[Move]]:
    def listed(state: State, seat: int, task: tuple) -> list[Move]:
        return [Move(kind, c) for c in sorted(set(state.seats[seat].hand))]

    return listed


def _choice_options(state: State, seat: int, task: tuple) -> list[Move]:
    _, cid, index = task
    return [Move(Kind.OPTION, i + 1) for i in range(len(CONTENT[cid].powers[index].effect))]


def _place_paid_options(state: State, seat: int, task: tuple) -> list[Move]:
    if not any(state.paid):
        return []
    return [Move(Kind.TARGET, c) for c in _own_targets(state, seat)]


def _retrieve_options(state: State, seat: int, task: tuple) -> list[Move]:
    return [Move(Kind.RETRIEVE, c) for c in sorted(set(state.seats[seat].discard))]


def _look_options(state: State, seat: int, task: tuple) -> list[Move]:
    me = state.seats[seat]
    moves = []
    if me.deck or me.discard:
        moves.append(Move(Kind.PILE, 0))
    if state.monument_deck:
        moves.append(Move(Kind.PILE, 1))
    return moves


def _return_options(state: State, seat: int, task: tuple) -> list[Move]:
    pile = task[1]
    cards = state.seats[seat].hand if pile == 0 else state.looking
    return [Move(Kind.RETURN, c) for c in sorted(set(cards))]


def _monument_options(state: State, seat: int, task: tuple) -> list[Move]:
    moves = [Move(Kind.MONUMENT, c) for c in state.monument_display]
    if state.monument_deck:
        moves.append(Move(Kind.MONUMENT, DECK))
    return sorted(moves)


def _straighten_options(state: State, seat: int, task: tuple) -> list[Move]:
    _, src, kinds = task
    return [
        Move(Kind.STRAIGHTEN, c)
        for c in state.seats[seat].components()
        if c != src and state.turned[c] and KIND_BIT[CONTENT[c].kind] & kinds
    ]


def _item_power_options(state: State, seat: int, task: tuple) -> list[Move]:
    moves = [
        Move(Kind.POWER, item, i + 1)
        for item in state.items
        for i in range(len(CONTENT[item].powers))
        if power_usable(state, seat, item, i, borrowed=True)
    ]
    return [*sorted(moves), DONE] if moves else []


def _place_artifact_options(state: State, seat: int, task: tuple) -> list[Move]:
    me = state.seats[seat]
    moves = [
        Move(Kind.PLACE, c) for c in sorted(set(me.hand)) if can_place(state, seat, c, task[1])
    ]
    return [*moves, DONE] if moves else []


def _take_from_options(state: State, seat: int, task: tuple) -> list[Move]:
    held = [c for s in (0, 1) for c in state.seats[s].components() if any(state.on[c])]
    return [Move(Kind.TARGET, c) for c in sorted(held)]


def _take_pick_options(state: State, seat: int, task: tuple) -> list[Move]:
    held = state.on[task[1]]
    return [Move(Kind.GAIN, e) for e in range(5) if held[e]]


def _swap_options(state: State, seat: int, task: tuple) -> list[Move]:
    return [Move(Kind.ITEM, i) for i in sorted(state.items)]


OPTIONS: dict[str, Callable[[State, int, tuple], list[Move]]] = {
    "pay": _pay_options,
    "turn_other": _turn_other_options,
    "discard_cost": _hand_options(Kind.DISCARD),
    "gain_any": lambda state, seat, task: _gain_options(task[4]),
    "choice": _choice_options,
    "place_paid": _place_paid_options,
    "retrieve": _retrieve_options,
    "discard_effect": _hand_options(Kind.DISCARD),
    "look": _look_options,
    "return": _return_options,
    "monument": _monument_options,
    "straighten": _straighten_options,
    "item_power": _item_power_options,
    "place_artifact": _place_artifact_options,
    "take_from": _take_from_options,
    "take_pick": _take_pick_options,
    "discard_gain": lambda state, seat, task: _gain_options(0),
    "discard_gain2": lambda state, seat, task: _gain_options(1 << GOLD),
    "swap_item": _swap_options,
}


# ---------------------------------------------------------------- tasks without decisions


def normalize_pay(state: State, seat: int, log: Log) -> bool:
    """Pay what needs no decision; True when the task changed (or is done)."""
    task = state.tasks[0]
    _, src, fixed, any_n, excl, disc = task
    if disc and not any(fixed) and not any_n:
        state.tasks[0] = (*task[:5], 0)
        return True
    if disc:
        return False
    if any(fixed):
        for e in range(5):
            if fixed[e]:
                spend(state, seat, e, fixed[e])
        log.say(
            "pay",
            f"{SEAT_NAMES[seat]} pays {bag_text(fixed)} ({_what(src)})",
            seat,
            essences=list(fixed),
        )
        state.tasks[0] = ("pay", src, NONE, any_n, excl, 0)
        return True
    if not any_n:
        state.tasks.pop(0)
        return True
    return False


def _what(src: int) -> str:
    return "the Monument deck's top card" if src == DECK else name(src)


def _auto_gain(state: State, seat: int, task: tuple, log: Log) -> None:
    gain_bag(state, seat, task[1])
    log.say("gain", f"{SEAT_NAMES[seat]} takes {bag_text(task[1])}", seat, essences=list(task[1]))


def _auto_place(state: State, seat: int, task: tuple, log: Log) -> None:
    _, src, bag = task
    for e in range(5):
        if bag[e]:
            put_on(state, src, e, bag[e])
    log.say(
        "place",
        f"{SEAT_NAMES[seat]} places {bag_text(bag)} on {name(src)}",
        seat,
        component=CONTENT[src].slug,
        essences=list(bag),
    )


def _auto_rival_gains(state: State, seat: int, task: tuple, log: Log) -> None:
    rival = 1 - seat
    gain_bag(state, rival, task[1])
    log.say(
        "gain",
        f"{SEAT_NAMES[rival]} (the rival) takes {bag_text(task[1])}",
        rival,
        essences=list(task[1]),
    )


def _auto_draw(state: State, seat: int, task: tuple, log: Log) -> None:
    draw(state, seat, task[1], log)


def _auto_check_victory(state: State, seat: int, task: tuple, log: Log) -> None:
    scoring.check_victory(state, log, f"{name(task[1])}, {SEAT_NAMES[seat]}")


def _auto_enter(state: State, seat: int, task: tuple, log: Log) -> None:
    card = task[1]
    me = state.seats[seat]
    me.hand.remove(card)
    me.tableau.append(card)
    state.turned[card] = False
    log.say(
        "enter",
        f"{name(card)} enters play for {SEAT_NAMES[seat]}",
        seat,
        component=CONTENT[card].slug,
    )


def _auto_claim(state: State, seat: int, task: tuple, log: Log) -> None:
    cid = task[1]
    me = state.seats[seat]
    if cid == DECK:
        cid = state.monument_deck.pop()
        log.say(
            "claim",
            f"{SEAT_NAMES[seat]} claims the Monument deck's top card: {name(cid)}",
            seat,
            component=CONTENT[cid].slug,
        )
    elif cid in state.monument_display:
        state.monument_display.remove(cid)
        log.say(
            "claim", f"{SEAT_NAMES[seat]} claims {name(cid)}", seat, component=CONTENT[cid].slug
        )
        refill_display(state, log)
    else:
        state.places.remove(cid)
        log.say(
            "claim", f"{SEAT_NAMES[seat]} claims {name(cid)}", seat, component=CONTENT[cid].slug
        )
    me.tableau.append(cid)
    state.turned[cid] = False


def _auto_pass_draw(state: State, seat: int, task: tuple, log: Log) -> None:
    draw(state, seat, 1, log, "passing")


AUTO: dict[str, Callable[[State, int, tuple, Log], None]] = {
    "gain": _auto_gain,
    "place": _auto_place,
    "rival_gains": _auto_rival_gains,
    "draw": _auto_draw,
    "check_victory": _auto_check_victory,
    "enter": _auto_enter,
    "claim": _auto_claim,
    "pass_draw": _auto_pass_draw,
}


def run_auto(state: State, seat: int, log: Log) -> None:
    task = state.tasks.pop(0)
    AUTO[task[0]](state, seat, task, log)


# ---------------------------------------------------------------- decisions


def play(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    """Carry out ``move`` for the first task (already checked to be among its options)."""
    PLAY[task[0]](state, seat, task, move, log)


def _replace_or_pop(state: State, task: tuple | None) -> None:
    if task is None:
        state.tasks.pop(0)
    else:
        state.tasks[0] = task


def _play_pay(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _, src, fixed, any_n, excl, disc = task
    e = move.a
    if move.kind == Kind.WAIVE:
        if e == ANY:
            any_n -= 1
        else:
            less = list(fixed)
            less[e] -= 1
            fixed = tuple(less)
        what = "1 of the any-essence part" if e == ANY else f"1 {TITLES[e]}"
        log.say(
            "discount",
            f"{SEAT_NAMES[seat]}'s discount waives {what} ({_what(src)})",
            seat,
            essence="any" if e == ANY else TITLES[e].lower(),
        )
        state.tasks[0] = ("pay", src, fixed, any_n, excl, disc - 1)
        return
    spend(state, seat, e)
    log.say(
        "pay",
        f"{SEAT_NAMES[seat]} pays 1 {TITLES[e]} ({_what(src)})",
        seat,
        essence=TITLES[e].lower(),
    )
    state.tasks[0] = ("pay", src, fixed, any_n - 1, excl, disc)


def _play_turn_other(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    state.turned[move.a] = True
    log.say(
        "turn",
        f"{SEAT_NAMES[seat]} turns {name(move.a)} ({_what(task[1])})",
        seat,
        component=CONTENT[move.a].slug,
    )
    state.tasks.pop(0)


def _discard(state: State, seat: int, card: int, log: Log, why: str) -> None:
    me = state.seats[seat]
    me.hand.remove(card)
    me.discard.append(card)
    log.say(
        "discard",
        f"{SEAT_NAMES[seat]} discards {name(card)} ({why})",
        seat,
        card=CONTENT[card].slug,
    )


def _play_discard_cost(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _discard(state, seat, move.a, log, f"cost of {name(task[1])}, no essences for it")
    state.tasks.pop(0)


def _play_discard_effect(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _discard(state, seat, move.a, log, "an effect, no essences for it")
    state.tasks.pop(0)


def _play_gain_any(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _, src, dest, n, excl = task
    e = move.a
    if dest < 0:
        gain(state, seat, e)
        log.say("gain", f"{SEAT_NAMES[seat]} takes 1 {TITLES[e]}", seat, essence=TITLES[e].lower())
    else:
        put_on(state, dest, e)
        log.say(
            "place",
            f"{SEAT_NAMES[seat]} places 1 {TITLES[e]} on {name(dest)}",
            seat,
            component=CONTENT[dest].slug,
            essence=TITLES[e].lower(),
        )
    _replace_or_pop(state, ("gain_any", src, dest, n - 1, excl) if n > 1 else None)


def _play_choice(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _, cid, index = task
    alternative = CONTENT[cid].powers[index].effect[move.a - 1]
    log.say(
        "option", f"{SEAT_NAMES[seat]} chooses option {move.a} of {name(cid)}", seat, option=move.a
    )
    state.tasks[0:1] = compile_clauses(cid, alternative)


def _play_place_paid(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    paid = state.paid
    moved = list(paid)
    for e in range(5):
        if paid[e]:
            state.on[move.a][e] += paid[e]
            state.out[e] += paid[e]
    log.say(
        "place",
        f"{SEAT_NAMES[seat]} places the paid {bag_text(moved)} on {name(move.a)}",
        seat,
        component=CONTENT[move.a].slug,
        essences=moved,
    )
    state.tasks.pop(0)


def _play_retrieve(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    me = state.seats[seat]
    me.discard.remove(move.a)
    me.hand.append(move.a)
    log.say(
        "retrieve",
        f"{SEAT_NAMES[seat]} retrieves {name(move.a)} from the discard pile",
        seat,
        card=CONTENT[move.a].slug,
    )
    state.tasks.pop(0)


def _play_look(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    n = task[1]
    me = state.seats[seat]
    if move.a == 0:
        if not me.deck:
            drawn = draw(state, seat, n, log, "looking")
        else:
            drawn = draw(state, seat, min(n, len(me.deck)), log, "looking")
        k = len(drawn)
    else:
        k = min(n, len(state.monument_deck))
        for _ in range(k):
            state.looking.append(state.monument_deck.pop())
        log.tell(
            "look",
            seat,
            f"{SEAT_NAMES[seat]} looks at the Monument deck's top {k}: {names(state.looking)}",
            f"{SEAT_NAMES[seat]} looks at the Monument deck's top {k}",
            {"cards": [CONTENT[c].slug for c in state.looking]},
            count=k,
        )
    state.tasks[0] = ("return", move.a, k, 0)


def _play_return(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _, pile, left, done = task
    me = state.seats[seat]
    card = move.a
    if pile == 0:
        me.hand.remove(card)
        me.deck.insert(len(me.deck) - done, card)
        where = "their draw pile"
    else:
        state.looking.remove(card)
        state.monument_deck.insert(len(state.monument_deck) - done, card)
        where = "the Monument deck"
    position = done + 1
    log.tell(
        "return",
        seat,
        f"{SEAT_NAMES[seat]} returns {name(card)} to {where} (card {position} from the top)",
        f"{SEAT_NAMES[seat]} returns a card to {where} (card {position} from the top)",
        {"card": CONTENT[card].slug},
        position=position,
    )
    _replace_or_pop(state, ("return", pile, left - 1, done + 1) if left > 1 else None)


def _play_monument(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    state.tasks[0] = ("claim", move.a)


def _play_straighten(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    state.turned[move.a] = False
    log.say(
        "straighten",
        f"{SEAT_NAMES[seat]} straightens {name(move.a)}",
        seat,
        component=CONTENT[move.a].slug,
    )
    state.tasks.pop(0)


def _play_item_power(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    state.tasks.pop(0)
    if move.kind == Kind.DONE:
        log.say("no_effect", f"{SEAT_NAMES[seat]} uses no Magic Item power", seat)
        return
    start_power(state, seat, move.a, move.b - 1, log, borrowed=True)


def _play_place_artifact(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    state.tasks.pop(0)
    if move.kind == Kind.DONE:
        log.say("no_effect", f"{SEAT_NAMES[seat]} places no Artifact", seat)
        return
    card = move.a
    comp: Component = CONTENT[card]
    disc = artifact_discount(state, seat, card) + task[1]
    log.say(
        "place", f"{SEAT_NAMES[seat]} places {comp.name} ({task[1]} cheaper)", seat, card=comp.slug
    )
    state.tasks[0:0] = [
        pay_task(card, comp.cost.fixed, comp.cost.any_n, comp.cost.excl, disc),
        ("enter", card),
    ]


def _play_take_from(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    owner = 0 if move.a in state.seats[0].components() else 1
    log.say(
        "target",
        f"{SEAT_NAMES[seat]} takes essences from {SEAT_NAMES[owner]}'s {name(move.a)}",
        seat,
        component=CONTENT[move.a].slug,
        owner=owner,
    )
    state.tasks[0] = ("take_pick", move.a, task[1])


def _play_take_pick(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    _, cid, n = task
    take_from(state, seat, cid, move.a)
    log.say(
        "gain",
        f"{SEAT_NAMES[seat]} takes 1 {TITLES[move.a]} from {name(cid)}",
        seat,
        essence=TITLES[move.a].lower(),
    )
    more = n > 1 and any(state.on[cid])
    _replace_or_pop(state, ("take_pick", cid, n - 1) if more else None)


def _play_discard_gain(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    gain(state, seat, move.a)
    log.say(
        "gain", f"{SEAT_NAMES[seat]} takes 1 {TITLES[move.a]}", seat, essence=TITLES[move.a].lower()
    )
    if task[0] == "discard_gain" and move.a != GOLD:
        state.tasks[0] = ("discard_gain2",)
    else:
        state.tasks.pop(0)


def _play_swap(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    me = state.seats[seat]
    old = me.item
    state.items.remove(move.a)
    state.items.append(old)
    state.items.sort()
    state.turned[old] = False
    me.item = move.a
    state.turned[move.a] = False
    log.say(
        "swap",
        f"{SEAT_NAMES[seat]} swaps {name(old)} for {name(move.a)}",
        seat,
        returned=CONTENT[old].slug,
        item=CONTENT[move.a].slug,
    )
    state.tasks.pop(0)


PLAY: dict[str, Callable[[State, int, tuple, Move, Log], None]] = {
    "pay": _play_pay,
    "turn_other": _play_turn_other,
    "discard_cost": _play_discard_cost,
    "gain_any": _play_gain_any,
    "choice": _play_choice,
    "place_paid": _play_place_paid,
    "retrieve": _play_retrieve,
    "discard_effect": _play_discard_effect,
    "look": _play_look,
    "return": _play_return,
    "monument": _play_monument,
    "straighten": _play_straighten,
    "item_power": _play_item_power,
    "place_artifact": _play_place_artifact,
    "take_from": _play_take_from,
    "take_pick": _play_take_pick,
    "discard_gain": _play_discard_gain,
    "discard_gain2": _play_discard_gain,
    "swap_item": _play_swap,
}

# Steps that say what is being decided, for views and refusals.
STEP_TEXT = {
    "action": "choose an action",
    "pay": "pay the cost",
    "turn_other": "turn a component to pay the cost",
    "discard_cost": "discard an Artifact to pay the cost",
    "gain_any": "choose an essence",
    "choice": "choose one option",
    "place_paid": "choose a component for the paid essence",
    "retrieve": "retrieve a card",
    "discard_effect": "discard an Artifact",
    "look": "choose a pile to look at",
    "return": "return a card on top of the pile",
    "monument": "choose a Monument",
    "straighten": "choose a component to straighten",
    "item_power": "choose a Magic Item power from the display",
    "place_artifact": "choose an Artifact to place",
    "take_from": "choose a component to take essences from",
    "take_pick": "choose an essence to take",
    "discard_gain": "take 1 Gold or a first other essence",
    "discard_gain2": "take a second essence",
    "swap_item": "swap your Magic Item",
}
