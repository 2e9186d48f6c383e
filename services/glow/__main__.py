"""``python -m services.glow``: serve Glow (``--help`` for configuration)."""

from services.kit.server import main

if __name__ == "__main__":
    main("glow")
