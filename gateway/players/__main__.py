"""``python -m gateway.players keygen``: a new guest signing key, PEM, on stdout.

For a Kubernetes Secret every gateway replica mounts at TABLETOP_GUEST_SIGNING_KEY_FILE:

    python -m gateway.players keygen > guest-signing-key.pem
    kubectl create secret generic tabletop-guest-signing-key \\
        --from-file=guest-signing-key.pem
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gateway.players.signing import new_pem


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["keygen"]:
        print(__doc__.strip() if __doc__ else "", file=sys.stderr)
        return 2
    sys.stdout.write(new_pem().decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
