"""Setup: the main play area and the player areas, all chance from the seed."""

from __future__ import annotations

from services.kit.engine import BadOptions, Rng
from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, PLAYER
from services.shrine.engine.rules import acquiring_shapes, turn
from services.shrine.engine.rules.board import draw_lens
from services.shrine.engine.state import Options, Player, State


def new_game(seed: int, players: int = 2, options: Options | None = None) -> State:
    """Set up a game of Shrine: Duel of Light for two players (Sun and Moon)::

    >>> state = new_game(7, 2, Options(radiant_shapes=True))
    >>> len(state.players[0].hand)
    4
    """
    options = Options() if options is None else options
    if not isinstance(options, Options):
        raise BadOptions("options must be shrine Options")
    if not isinstance(options.radiant_shapes, bool):
        raise BadOptions("radiant_shapes must be true or false")
    if players != 2 or isinstance(players, bool):
        raise BadOptions("Shrine: Duel of Light is a game for exactly two players")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise BadOptions("the seed must be a whole number")
    rng = Rng(seed)
    state = State(options=options, rng=rng, players=[], code_set=-1, starting=-1)
    # 7. Choose a set of Code cards: each player draws a Lens; their colours combine.
    sun_lens, moon_lens = draw_lens(state), draw_lens(state)
    state.pouch[sun_lens] += 1
    state.pouch[moon_lens] += 1
    state.code_set = colours.mix(sun_lens, moon_lens)
    # 9. A Code card randomly pulled from the selected set; the rest go back to the box.
    sun_code, moon_code = rng.sample(CONTENT.code_sets[state.code_set], 2)
    state.players = [Player(code=sun_code), Player(code=moon_code)]
    # 8A, 10: every Treasure space covered, 4 starting Treasures each; the rest is the Treasury.
    state.treasury = BOARD.coins - 2 * (PLAYER.covered + PLAYER.starting_treasure)
    # 14. Toss the Starting Player token.
    state.starting = rng.randrange(2)
    if options.radiant_shapes:
        acquiring_shapes.setup(state)
    turn.start_turn(state, state.starting)
    return state
