"""The names of Shén's rules, in the rulebook's words.

An :class:`~services.kit.engine.IllegalMove` names the rule it breaks with one of these
(its ``rule``), so a reader holding the rulebook finds the sentence at once; every
decision of the rule table (the modules of ``phases/``) is filed under one of them.
"""

PHASES = "each player takes a turn by completing three phases"
REALM_STONE = "sets their realm stone in any empty vertex"
DRAW = "Draw a card into your hand from your deck"
SHEN_COUNTER = "Place one Shén counter"
PLAY = "Play a card from your hand"
CLAIM = "Claim an Anchor Point"
SIEGE = "Attack a Realm Stone"
MOVE = "Move an Avatar"
RANGED = "Make a Ranged Attack"
ABILITY = "Use an ability of a Ready Avatar"
COMBAT = "Each player may play one card from their hand and use one ability"
LOSE = "removes cards from their Hand, Deck, or Discard Pile from the game"
RETREAT = "place that Avatar next to that player's Realm Stone"
OPPONENT = "your opponent loses a card"
