"""The engine's README stands on its own in a clone: the rulebook named by its title, the
rules summarised before the readings, and every path it names inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "services" / "shen" / "README.md"
# Where a relative path in the README may start: the repository, the package, its content.
BASES = (ROOT, README.parent, README.parent / "content")


def test_the_readme_names_the_rulebook_by_its_title_and_every_path_is_in_the_repository():
    text = README.read_text()
    assert "*Shén, Beta Testing Rules 01/05/2026*" in text.split("##")[0]
    assert text.index("## The rules in brief") < text.index("## Readings taken")
    spans = re.sub(r"```.*?```", "", text, flags=re.S).split("`")[1::2]
    paths = [p for p in spans if "/" in p and " " not in p and "<" not in p]
    assert len(paths) > 5  # the check reads the README's paths at all
    for path in paths:
        assert not path.startswith(("..", "/")), f"{path} is outside the repository"
        assert any((base / path).exists() for base in BASES), f"{path} is not in the repository"
