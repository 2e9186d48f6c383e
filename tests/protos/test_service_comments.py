"""What the protos say of the game services' calls is true: every game service has the
same calls, the README's contract table lists exactly those, and a count of calls stated
in a service's comment is the number it has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services import registry
from tests.support import ROOT

# Number words as a comment would spell a count of calls.
WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    " sixteen seventeen eighteen nineteen twenty"
)
NUMBERS = {word: n for n, word in enumerate(WORDS.split(" "))}
COUNT = re.compile(r"\b(\d+|[a-z]+) calls\b", re.I)


def methods(entry: registry.ServiceEntry) -> list[str]:
    pb2 = entry.pb2()
    service = pb2.DESCRIPTOR.services_by_name[entry.service_name.rsplit(".", 1)[1]]
    return [m.name for m in service.methods]


def service_comment(proto: Path, service: str) -> str:
    """The comment block right above ``service <name> {``."""
    lines = proto.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"service {service} "))
    block = []
    for line in reversed(lines[:at]):
        if not line.startswith("//"):
            break
        block.append(line[2:].strip())
    return " ".join(reversed(block))


def stated_counts(comment: str) -> list[int]:
    """Every number of calls the comment states ("these same ten calls", "6 calls")."""
    counts = []
    for word in COUNT.findall(comment):
        if word.isdigit():
            counts.append(int(word))
        elif word.lower() in NUMBERS:
            counts.append(NUMBERS[word.lower()])
    return counts


def test_every_game_service_has_the_same_calls():
    calls = {entry.name: methods(entry) for entry in registry.SERVICES}
    first = next(iter(calls.values()))
    assert all(found == first for found in calls.values()), calls


def test_the_readme_contract_lists_exactly_the_calls():
    readme = (ROOT / "README.md").read_text()
    _, lead, table = readme[readme.index("## The contract") :].split("\n\n")[:3]
    listed = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert listed == methods(registry.SERVICES[0])
    assert stated_counts(lead) == [len(listed)], lead


@pytest.mark.parametrize("entry", registry.SERVICES, ids=lambda e: e.name)
def test_a_count_of_calls_in_a_service_comment_is_the_number_it_has(entry):
    proto = ROOT / "protos" / Path(*entry.proto_package.split(".")) / f"{entry.name}.proto"
    comment = service_comment(proto, entry.service_name.rsplit(".", 1)[1])
    assert "same" in comment and "calls" in comment, comment
    assert all(n == len(methods(entry)) for n in stated_counts(comment)), comment


def test_the_count_check_sees_a_wrong_count():
    # The control: the comment every proto had, with its six calls of ten.
    old = "Every game service has these same six calls. Calls that act for a seat carry"
    assert stated_counts(old) == [6] != [len(methods(registry.SERVICES[0]))]
    assert stated_counts("has 10 calls") == [10]
