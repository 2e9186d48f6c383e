"""``python -m services.resarcana``: serve Res Arcana Duo (``--help`` for configuration)."""

from services.kit.server import main

if __name__ == "__main__":
    main("resarcana")
