"""The components: the counts and values the rulebook fixes, the provenance marks, the
content language, and the property that keeps every round finite."""

from __future__ import annotations

import tomllib

import pytest

from services.resarcana.engine import content
from services.resarcana.engine.content import CONTENT, ContentError
from services.resarcana.engine.essences import NONE
from tests.resarcana.helpers import cid


def comp(slug: str) -> content.Component:
    return CONTENT[cid(slug)]


def test_component_counts_are_the_rulebooks() -> None:
    assert len(CONTENT.artifacts) == 16
    assert len(CONTENT.mages) == 4
    assert len(CONTENT.monuments) == 7
    assert len(CONTENT.items) == 5
    assert len(CONTENT.places) == 4  # 2 double-sided tiles
    tiles: dict[int, list[content.Component]] = {}
    for place in CONTENT.places:
        tiles.setdefault(CONTENT[place].tile, []).append(CONTENT[place])
    assert len(tiles) == 2
    assert all(len(sides) == 2 and sum(s.amber for s in sides) == 1 for sides in tiles.values())


def test_every_artifact_the_rulebook_names_is_there() -> None:
    named = {
        "Crucible",
        "Cursed Peacock Idol",
        "Squared Circle",
        "White Swan",
        "Gnosis",
        "Solomon's Key",
        "Magnum Opus",
        "Fairy Dragon",
        "Brass Bust",
        "Cultist",
        "Crown of Command",
        "Fortune Teller",
        "Golden Key",
        "Silver Key",
        "Black Cat",
        "Revivify",
    }
    assert {CONTENT[c].name for c in CONTENT.artifacts} == named


def test_start_symbol_marks_two_mages_and_six_artifacts() -> None:
    assert {CONTENT[c].name for c in CONTENT.mages if CONTENT[c].start} == {"Smith", "Enchantress"}
    assert {CONTENT[c].name for c in CONTENT.artifacts if CONTENT[c].start} == {
        "Crucible",
        "Cursed Peacock Idol",
        "Squared Circle",
        "White Swan",
        "Gnosis",
        "Solomon's Key",
    }


def test_first_game_places_and_named_components() -> None:
    amber = {CONTENT[c].name for c in CONTENT.places if CONTENT[c].amber}
    assert amber == {"Circle of the Druids", "Dwarven Forge"}
    assert {"Dark Temple", "Mystic Monastery", "Well of Memory"} <= {
        CONTENT[c].name for c in CONTENT.monuments
    }
    assert {"Research", "Calm/Elan", "Life/Death", "Artisan's Robe"} <= {
        CONTENT[c].name for c in CONTENT.items
    }


def test_values_the_rulebook_fixes() -> None:
    assert comp("crucible").cost.fixed == (1, 0, 0, 0, 1)  # 1 Gold + 1 Elan
    assert comp("crucible").powers[0].text == "turn + elan + calm + death + life -> gain 3 gold"
    assert comp("white-swan").cost.fixed == (0, 1, 2, 0, 0)  # 2 Calm + 1 Life
    assert comp("white-swan").types == ("creature",)
    assert not comp("white-swan").powers[0].cost.turn_self
    assert comp("fairy-dragon").vp == 1 and "dragon" in comp("fairy-dragon").types
    assert comp("mystic-monastery").vp == 2
    assert comp("mystic-monastery").powers[0].text == "turn -> straighten mage"
    assert comp("enchantress").collect[0].fixed == (0, 0, 1, 0, 0)
    assert comp("smith").powers[1].text == "turn + 1 gold -> place 4 any !gold here"
    assert comp("research").powers[0].text == "turn + 1 any -> draw 1"
    assert [a.fixed for a in comp("calm-elan").collect] == [(0, 0, 1, 0, 0), (1, 0, 0, 0, 0)]
    assert CONTENT.monument_cost.fixed == (0, 0, 0, 0, 4)  # all Monuments cost 4 Gold
    assert CONTENT.start_pool == (1, 1, 1, 1, 1)
    assert (CONTENT.first_game_vp, CONTENT.full_game_vp) == (7, 10)
    assert comp("artisans-robe").discount == 1 and comp("artisans-robe").discount_on == "artifact"
    assert comp("mystic-spring").powers[0].text == "turn + 1 calm -> gain 4 gold | gain 1 any"
    assert comp("dwarven-forge").vp >= 1 and comp("dwarven-forge").vp_per_essence == 1
    assert comp("elvish-heartwood").vp >= 1 and comp("elvish-heartwood").vp_per_essence == 1
    assert comp("elvish-heartwood").powers[0].cost.discard == 1
    assert comp("fortune-teller").powers[1].cost.discard == 1
    assert any(c.op == "check_victory" for c in comp("magnum-opus").powers[0].effect[0])
    assert any(c.op == "check_victory" for c in comp("circle-of-stones").powers[0].effect[0])


def test_every_component_says_where_its_values_come_from() -> None:
    with open(content.CONTENT_FILE, "rb") as handle:
        data = tomllib.load(handle)
    for kind in content.KINDS:
        for entry in data[kind]:
            assert entry["design"] in ("rulebook", "mixed", "project"), entry["name"]
            if entry["design"] == "mixed":
                assert entry.get("fixed"), f"{entry['name']}: say which values are fixed"


def test_every_round_is_finite() -> None:
    """A power whose cost does not turn its own component must use something up (an
    essence, a card, or turning another component), or a player could act forever."""
    for c in CONTENT.components:
        for power in c.powers:
            cost = power.cost
            if cost.turn_self:
                continue
            consumes = (not cost.amount.empty) or cost.discard or cost.turn_mage or cost.turn_other
            assert consumes, f"{c.name}: {power.text}"
            if not cost.amount.empty:
                # Paid from the pool, it must return less to the pool than it took.
                gained = sum(
                    sum(cl.amount.fixed) + cl.amount.any_n
                    for cl in power.effect[0]
                    if cl.op == "gain"
                )
                paid = sum(cost.amount.fixed) + cost.amount.any_n
                assert gained < paid, f"{c.name}: {power.text} feeds itself"


@pytest.mark.parametrize(
    "text",
    ["1 mana", "2 any !mana", "2 any gold"],
)
def test_bad_amounts_are_refused(text: str) -> None:
    with pytest.raises(ContentError):
        content.parse_amount(text)


@pytest.mark.parametrize(
    "text",
    [
        "turn -> fly away",
        "turn wizard -> gain 1 gold",
        "turn + 1 gold",
        "turn -> rival gains 1 any",
        "turn -> straighten castle",
    ],
)
def test_bad_powers_are_refused(text: str) -> None:
    with pytest.raises(ContentError):
        content.parse_power(text)


def test_the_language_parses_each_form() -> None:
    power = content.parse_power(
        "turn + turn mage + turn creature + discard 2 + 1 gold + 2 any !gold"
        " -> gain 1 elan ; place 1 any here | draw 2"
    )
    cost = power.cost
    assert cost.turn_self and cost.turn_mage and cost.turn_other == ("creature",)
    assert cost.discard == 2
    assert cost.amount.fixed == (0, 0, 0, 0, 1) and cost.amount.any_n == 2
    assert cost.amount.excl == 1 << 4
    assert [[c.op for c in alt] for alt in power.effect] == [["gain", "place_here"], ["draw"]]
    assert content.parse_amount("elan + calm").fixed == (1, 0, 1, 0, 0)
    assert content.Amount().empty and content.Amount().fixed == NONE


def test_a_replacement_content_file_loads(tmp_path) -> None:
    """The engine reads whatever list the file holds (the publisher's could replace ours)."""
    text = content.CONTENT_FILE.read_text(encoding="utf-8").replace(
        'name = "Alchemy"', 'name = "Transmutation"'
    )
    path = tmp_path / "components.toml"
    path.write_text(text, encoding="utf-8")
    loaded = content.load(path)
    assert "transmutation" in loaded.by_slug and "alchemy" not in loaded.by_slug


def test_the_rulebooks_example_powers_are_sayable() -> None:
    """The rulebook's "Example power" lines, written in the content language."""
    example = content.parse_power("turn + 1 life -> gain 1 elan + 1 death")
    assert example.cost.turn_self and example.cost.amount.fixed == (0, 1, 0, 0, 0)
    assert example.effect[0][0].amount.fixed == (1, 0, 0, 1, 0)
    cultist = content.parse_power("turn -> rival gains 1 death")
    assert cultist.effect[0][0].op == "rival_gains"
    spring = content.parse_power("turn + 1 calm -> gain 4 gold | gain 1 any")
    assert len(spring.effect) == 2
    assert content.parse_power("turn -> use item power").effect[0][0].op == "item_power"
    assert content.parse_power("turn + 1 any -> place paid on own").effect[0][0].op == "place_paid"
