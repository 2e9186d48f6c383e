"""Players' events: made with each write, kept in the store's outbox, streamed and posted.

- :mod:`.events`: what an event is, derived from a game's header before and after a
  write (never from anything hidden);
- :mod:`.tracker`: the game manager's hook (:class:`PlayerEvents`): the events of each
  write go into the same store transaction as the move;
- :mod:`.feed` and :mod:`.service`: ``WatchPlayerEvents``, a player's events streamed;
- :mod:`.webhooks`: each event posted, signed, at least once, to ``TABLETOP_WEBHOOK_URL``;
- :mod:`.settings`: the settings and the background task (webhooks and retention).

docs/players.md, "Events and webhooks", says what a player and a platform see.
"""

from services.kit.outbox.events import KINDS, WEBHOOK_KINDS, Header, PlayerEvent, derive
from services.kit.outbox.service import watch_player_events
from services.kit.outbox.tracker import PlayerEvents, header_of

__all__ = [
    "KINDS",
    "WEBHOOK_KINDS",
    "Header",
    "PlayerEvent",
    "PlayerEvents",
    "derive",
    "header_of",
    "watch_player_events",
]
