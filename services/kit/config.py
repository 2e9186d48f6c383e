"""Configuration from environment variables, with defaults and a ``--help`` that lists them.

Each process declares its settings once; ``load`` reads and checks them and fails fast
with a message naming the variable when a value is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any


class ConfigError(Exception):
    pass


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("expected true or false")


def _positive_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError("must not be negative")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError("must be a port number 0-65535")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must not be negative")
    return value


PARSERS: dict[str, Callable[[str], Any]] = {
    "str": str,
    "bool": _bool,
    "int": _positive_int,
    "float": _positive_float,
    "port": _port,
}


@dataclass(frozen=True)
class Setting:
    key: str  # attribute name in the loaded config
    env: str  # environment variable
    default: str
    kind: str  # one of PARSERS
    help: str


class Config:
    """The loaded values, as attributes."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Config({self.__dict__!r})"

    if TYPE_CHECKING:
        # Settings are declared as data, so their attributes are known only at run time.
        def __getattr__(self, key: str) -> Any: ...


def load(settings: Sequence[Setting], environ: Mapping[str, str] | None = None) -> Config:
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for setting in settings:
        raw = environ.get(setting.env, setting.default)
        try:
            values[setting.key] = PARSERS[setting.kind](raw)
        except ValueError as exc:
            raise ConfigError(f"{setting.env}={raw!r}: {exc}") from None
    return Config(values)


def help_text(program: str, summary: str, settings: Sequence[Setting]) -> str:
    width = max(len(s.env) for s in settings)
    lines = [f"usage: {program}", "", summary, "", "Configuration (environment variables):"]
    for s in settings:
        default = s.default if s.default != "" else '""'
        lines.append(f"  {s.env.ljust(width)}  {s.help} (default: {default})")
    return "\n".join(lines)
