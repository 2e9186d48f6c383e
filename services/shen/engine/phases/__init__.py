"""Shén's rule table, one module per part of the rulebook's turn.

Each module holds the decisions of its part, each decision's moves, cheap check,
explanation and effect side by side (services/kit/kernel.py's ``Decision``), in rows:
the decisions open together, keyed by move type, in the order their moves are listed.

    pregame.py             Pre-Game: each player sets their Realm Stone
    recovery.py            1) Recovery and Set-Up Phase: draw a card or place a Shén
                           counter; a turn's start (Refresh) and the next player's turn
    influence.py           2) Celestial Influence Phase: play a card or pass; where the
                           card goes (its target), and an ability's target
    claim_move_attack.py   3) Claim, Move, and Attack Phase: an Avatar claims, attacks a
                           Realm Stone, moves (step by step, into a Melee Attack), holds
                           still for an ability, or the turn ends
    following_a_move.py    Following a move: use an ability or make a Ranged Attack
    combat.py              combat's decisions: each side's card and ability, the loser's
                           choice (Avatar or cards), a retreat, the winner's ability
    losing_cards.py        a player loses cards from Hand, Deck or Discard Pile; which
                           opponent loses them

engine/turn.py picks the row open now and carries the game on between decisions.
"""
