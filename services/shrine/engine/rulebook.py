"""The names of the rules, in the rulebook's words.

An :class:`~services.kit.engine.IllegalMove` names the rule it breaks with one of these,
so a reader holding the rulebook finds the section at once; each decision of the rule
table (rules/steps.py) is filed under one of them too.
"""

PLAYER_TURN = "Player Turn"
UNLOCK = "2. Unlock a Treasure Power"
PLACE_OR_PASS = "3. Place an Arcane Lens or Pass"
PLACE_LENS = "3A) Place an Arcane Lens"
PASS = "3B) Pass"
FEATHERED_SERPENTS = "Feathered Serpents"
MANDATORY_PLACEMENT = "Mandatory Placement"
VALID_FIELD = "Valid Field"
DESIGNATED_FIELD = "Designated Field"
ACTIVE_DIAL = "Active Dial"
FREE_ROTATION = "Free Rotation"
TREASURE_POWERS = "Treasure Powers"
DIAL_ROTATION = "Dial Rotation"
REFRESHING = "Refreshing the Offering"
INACTIVE_DIAL = "Using an Inactive Dial"
BLOCKING = "Treasure Acquisition and Field Blocking"
OVERWRITING = "Overwriting"
RELOCATING = "Relocating"
RUNNING_OUT = "Running Out of Treasure"
COMPLETING_SHAPE = "Completing a Shape Card"
REUSING_MATCHES = "Reusing Matches"
SERPENT_TOKENS = "Feathered Serpent Tokens"
ACQUIRING_SHAPES = "Acquiring New Shape Cards"
GAINING_REWARDS = "Gaining rewards"
BONUS_REWARD = "Bonus Reward"
