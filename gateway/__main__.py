"""``python -m gateway``: route clients to the game services (``--help`` for configuration)."""

from gateway.server import main

if __name__ == "__main__":
    main()
