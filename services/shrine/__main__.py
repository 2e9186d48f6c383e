"""``python -m services.shrine``: serve Shrine: Duel of Light (``--help`` for configuration)."""

from services.kit.server import main

if __name__ == "__main__":
    main("shrine")
