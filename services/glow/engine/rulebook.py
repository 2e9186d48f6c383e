"""The names of the rules, in the rulebook's words (its section titles).

An :class:`~services.kit.engine.IllegalMove` names the rule it breaks with one of these,
so a reader holding the rulebook finds the section at once.
"""

PLAYING_THE_GAME = "Playing the Game"
GAME_SETUP = "Game Setup"
RECRUIT = "Morning – Recruit a Companion"
TWO_PLAYER_GAMES = "2-player games"
KAAR = "Kaar and the Curse of the Black Die"
SKETALS = "The Sketals"
ROLL_AND_REROLL = "Late Morning – Roll and Reroll Dice"
RESOLVE_THE_CARDS = "Noon – Resolve the Cards"
CROMAUG = "Cromaug"
COMMON_JOURNEY_RULES = "Common rules for journeys"
PROVINCE_JOURNEY = "The Province of Shadows journey"
ARCHIPELAGO_JOURNEY = "The Archipelago of Darkness journey"
