"""The seven steps of a turn, a module each, in the rulebook's order.

    play_glyph     1 - Play a Glyph Card               a decision (PlayGlyph)
    move_druid     2 - Move a Druid Token              a decision (MoveDruid)
    leyline_path   3 - Choose a Leyline Path           a decision (ChoosePath) unless forced
    place_cubes    4 - Place Energy Cubes              follows the path
    remove_cubes   5 - Remove Energy Cubes             follows the placing
    acquire        6 - Acquire Magic Circle Cards      the replacement order a decision (FillGap)
    endgame        7 - Check for Endgame               ends the turn, and the game

Each decision's module holds its :class:`~services.kit.kernel.Decision`: the moves it
offers, its check, why a refused move is refused, its effect and what comes next.
engine/turn.py puts them in the table the kit's kernel plays from.
"""
