"""``python -m services.channeling``: serve The Channeling (``--help`` for configuration)."""

from services.kit.server import main

if __name__ == "__main__":
    main("channeling")
