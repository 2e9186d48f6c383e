"""``python -m services.shen``: serve Shén (``--help`` for configuration)."""

from services.kit.server import main

if __name__ == "__main__":
    main("shen")
