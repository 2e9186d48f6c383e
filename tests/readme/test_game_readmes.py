"""Each game's README stands on its own in a clone: it names the rulebook by its title,
summarises in our own words the rules the engine implements before the readings it takes,
and every path it names is inside the repository (a clone has no rulebook file)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.registry import SERVICES

ROOT = Path(__file__).resolve().parents[2]

# Each rulebook's title as its first page prints it.
TITLES = {
    "channeling": "*The Channeling Rules*",
    "glow": "*Glow* rulebook",
    "resarcana": "*Res Arcana Duo Rulebook*",
    "shen": "*Shén, Beta Testing Rules 01/05/2026*",
    "shrine": "*Shrine: Duel of Light Rulebook*",
}
READINGS = "## Readings taken"
# How a README used to open: the rulebook as a file outside the repository.
OLD_OPENING = "`services.glow.engine` implements `../shared/rules/glow.txt` for 2 to 4 players"


def _readme(game: str) -> str:
    return (ROOT / "services" / game / "README.md").read_text()


def _paths(text: str) -> list[str]:
    """The paths the README names in `code` spans outside code blocks."""
    spans = re.sub(r"```.*?```", "", text, flags=re.S).split("`")[1::2]
    spans = [p.split("::")[0] for p in spans]  # a test's id names its file first
    return [
        p for p in spans if "/" in p and re.search(r"[a-z]", p) and not re.search(r"[ <]|://", p)
    ]


def check_summary(game: str, text: str) -> None:
    readings = text.index(READINGS)
    assert TITLES[game] in text[:readings], "the rulebook is named by its title"
    first = text.index("\n## ")
    summary = text[first : text.index("\n## ", first + 1)]
    assert first < readings, "the rules come before the readings"
    assert re.search(r"our (own )?(words|summary)", summary, re.I), (
        "the first section summarises the rules in our own words"
    )


def check_paths(game: str, text: str) -> None:
    package = ROOT / "services" / game
    assert "/work/" not in text and "shared/rules" not in text
    bases = (ROOT, package, package / "engine", package / "content", ROOT / "tests" / game)
    paths = _paths(text)
    assert paths, "the check reads the README's paths at all"
    for path in paths:
        assert not path.startswith(("..", "/", "~")), f"{path} is outside the repository"
        found = any((base / path.rstrip("/")).exists() for base in bases)
        assert found or "*" in path, f"{path} is not in the repository"


def test_every_game_has_its_title_listed() -> None:
    assert sorted(TITLES) == sorted(entry.name for entry in SERVICES)


@pytest.mark.parametrize("game", sorted(TITLES))
def test_the_readme_names_the_rulebook_and_summarises_its_rules_before_the_readings(
    game: str,
) -> None:
    check_summary(game, _readme(game))


@pytest.mark.parametrize("game", sorted(TITLES))
def test_every_path_the_readme_names_is_in_the_repository(game: str) -> None:
    check_paths(game, _readme(game))


def test_controls_a_readme_pointing_outside_or_without_its_summary_fails() -> None:
    text = _readme("glow")
    title, rest = text.split("\n", 1)
    with pytest.raises(AssertionError, match="is outside the repository"):
        check_paths("glow", f"{title}\n\n{OLD_OPENING.replace('../shared', '..')}\n{rest}")
    with pytest.raises(AssertionError):
        check_paths("glow", f"{title}\n\n{OLD_OPENING}\n{rest}")
    with pytest.raises(AssertionError, match="not in the repository"):
        check_paths("glow", f"{title}\n\nsee `engine/rules/dusk.py`\n{rest}")
    with pytest.raises(AssertionError, match="named by its title"):
        check_summary("glow", text.replace(TITLES["glow"], "`glow.txt`"))
    readings = text.index(READINGS)
    with pytest.raises(AssertionError, match="our own words"):
        check_summary(
            "glow", re.sub(r"(?i)our own summary", "A summary", text[:readings]) + text[readings:]
        )
