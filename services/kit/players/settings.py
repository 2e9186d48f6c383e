"""The game services' settings for players' tokens, and the verifier they make.

No key source (the default): the service trusts no player tokens. A JWKS URL or a PEM
public key file (one of them) turns players on, and then the issuer is required: a
token is only ever checked against the one issuer the operator named.
"""

from __future__ import annotations

from urllib.parse import urlparse

from services.kit import config
from services.kit.players.keys import JwksKeys, KeySource, StaticKey, pem_key
from services.kit.players.verifier import Verifier


def settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("jwt_jwks_url", "TABLETOP_JWT_JWKS_URL", "", "str",
          "players' tokens: the identity provider's JWKS (an http or https URL; the "
          "gateway's guests: http://GATEWAY:9400/.well-known/jwks.json; '': none)"),
        S("jwt_public_key_file", "TABLETOP_JWT_PUBLIC_KEY_FILE", "", "str",
          "players' tokens: a PEM public key (or certificate) that signs them, instead of "
          "a JWKS URL"),
        S("jwt_issuer", "TABLETOP_JWT_ISSUER", "", "str",
          "the iss players' tokens must carry (required with a JWKS URL or a key file)"),
        S("jwt_audience", "TABLETOP_JWT_AUDIENCE", "tabletop", "str",
          "the aud players' tokens must carry (one of, when it is a list)"),
        S("jwt_name_claim", "TABLETOP_JWT_NAME_CLAIM", "name,preferred_username", "str",
          "the claims holding a player's display name, the first usable one wins (else "
          "a name made from the player id)"),
        S("jwt_leeway", "TABLETOP_JWT_LEEWAY_SECONDS", "30", "float",
          "clock skew allowed on a token's exp, nbf and iat"),
        S("jwt_jwks_cache", "TABLETOP_JWT_JWKS_CACHE_SECONDS", "300", "float",
          "fetch the JWKS again after this long (in the background: the keys held answer "
          "meanwhile, and stay while the URL cannot be reached)"),
        S("jwt_jwks_refresh", "TABLETOP_JWT_JWKS_MIN_REFRESH_SECONDS", "10", "float",
          "a token naming an unknown key fetches the JWKS again, at most once in this long"),
        S("jwt_jwks_timeout", "TABLETOP_JWT_JWKS_TIMEOUT_SECONDS", "5", "float",
          "how long a JWKS fetch may wait on the network"),
    ]  # fmt: skip


def verifier_from(cfg: config.Config) -> Verifier:
    """The verifier ``cfg`` describes; raises config.ConfigError naming the variable."""
    url: str = cfg.jwt_jwks_url.strip()
    path: str = cfg.jwt_public_key_file.strip()
    names = tuple(n.strip() for n in cfg.jwt_name_claim.split(",") if n.strip())
    keys: KeySource | None = None
    if url and path:
        raise config.ConfigError(
            "TABLETOP_JWT_JWKS_URL and TABLETOP_JWT_PUBLIC_KEY_FILE: set one, not both"
        )
    if url:
        if cfg.jwt_jwks_timeout <= 0:
            raise config.ConfigError("TABLETOP_JWT_JWKS_TIMEOUT_SECONDS must be above 0")
        if urlparse(url).scheme not in ("http", "https"):
            raise config.ConfigError(f"TABLETOP_JWT_JWKS_URL={url!r}: an http or https URL")
        keys = JwksKeys(
            url,
            cache_seconds=cfg.jwt_jwks_cache,
            refresh_seconds=cfg.jwt_jwks_refresh,
            timeout=cfg.jwt_jwks_timeout,
        )
    elif path:
        keys = StaticKey(pem_key(path))
    if keys is not None and not cfg.jwt_issuer.strip():
        raise config.ConfigError(
            "TABLETOP_JWT_ISSUER is required with a JWKS URL or a public key file: the "
            "iss players' tokens carry"
        )
    if keys is not None and not cfg.jwt_audience.strip():
        raise config.ConfigError("TABLETOP_JWT_AUDIENCE='': the aud players' tokens carry")
    return Verifier(
        keys,
        issuer=cfg.jwt_issuer.strip(),
        audience=cfg.jwt_audience.strip(),
        leeway=cfg.jwt_leeway,
        name_claims=names,
    )
