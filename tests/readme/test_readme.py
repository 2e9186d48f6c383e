"""The README as written: every shell block runs against a real stack, so it cannot rot.

The stack is every game service and the gateway as processes (tests/readme/stack.py), on
the documented ports when they are free (else on free ports, and the blocks' addresses
are rewritten to them). Each ```sh block runs with bash (``-e -o pipefail``) from the
project root, ``.venv/bin`` first on the PATH, and must exit 0. A block marked by an HTML
comment on the line before it is handled as the comment says:

- ``<!-- readme-test: skip: REASON -->``: it cannot run here (a cluster, a browser);
- ``<!-- readme-test: run by tests/FILE: ... -->``: that test runs its commands;
- ``<!-- readme-test: exits N: REASON -->``: it must exit N.

In a block of ``$`` prompts each command runs alone, and the lines after it are what it
prints: exactly (a list of names), or, where they hold JSON with ``...``, with every
field name shown printed by the real command. ``GAME_ID``, ``TOKEN`` (the seat to act),
``OTHER_TOKEN`` and ``MOVE`` (a legal move of TOKEN's seat, as JSON) name a new game of
The Channeling made for the block.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from client.api import bearer
from services import registry
from tests.readme.stack import running_stack

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARKER = re.compile(r"<!-- readme-test: (skip|run by|exits) ?(.*?) -->")
BLOCK_TIMEOUT = 120
PLACEHOLDERS = ("GAME_ID", "OTHER_TOKEN", "TOKEN", "MOVE")


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    text: str
    marker: tuple[str, str] | None  # (kind, rest)

    @property
    def id(self) -> str:
        first = next((ln for ln in self.text.splitlines() if ln.strip()), "")
        return f"line{self.line}-{first.lstrip('$ ')[:40]}"


def shell_blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            found = MARKER.search(lines[i - 1]) if i else None
            marker = (found.group(1), found.group(2)) if found else None
            blocks.append(Block(i + 1, "\n".join(lines[i + 1 : end]) + "\n", marker))
            i = end
        i += 1
    return blocks


BLOCKS = shell_blocks(README.read_text())


def prompted(text: str) -> list[tuple[str, list[str]]]:
    """A ``$`` block as (command, the lines it prints) pairs; continuation lines (a
    trailing backslash) belong to their command."""
    pairs: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            command = [lines[i][2:]]
            while command[-1].endswith("\\"):
                i += 1
                command.append(lines[i])
            pairs.append(("\n".join(command), []))
        elif pairs and lines[i].strip():
            pairs[-1][1].append(lines[i])
        i += 1
    return pairs


# --- what the README promises about itself ------------------------------------------------


def test_every_block_runs_or_says_why_not():
    assert len(BLOCKS) >= 10
    for block in BLOCKS:
        if block.marker is None:
            continue
        kind, rest = block.marker
        assert rest.strip(), f"README line {block.line}: a marker gives its reason"
        if kind == "run by":
            path = rest.split(":")[0].strip()
            assert (ROOT / path).is_file(), f"README line {block.line}: no {path}"
        if kind == "exits":
            assert rest.split(":")[0].strip().isdigit(), block.line
    runnable = [b for b in BLOCKS if b.marker is None or b.marker[0] == "exits"]
    assert len(runnable) >= 6, "most of the README runs here"


def test_the_markers_are_read_and_a_stray_one_is_not_missed():
    # A marker separated from its block by a blank line would silently not apply.
    text = README.read_text().splitlines()
    for i, line in enumerate(text):
        if MARKER.search(line):
            assert text[i + 1].strip() == "```sh", f"README line {i + 1}: marker not on a block"


def test_a_block_that_fails_fails_the_test(stack, tmp_path):
    """Control: the runner sees a failing command inside a block, and a wrong listing."""
    failing = Block(0, "true\nfalse\ntrue\n", None)
    assert run_block(failing, stack).returncode != 0
    listing = Block(0, "$ printf 'a\\nb\\n'\na\nc\n", None)
    with pytest.raises(AssertionError):
        check_prompted(listing, stack)


# --- running them --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("stack")) as running:
        yield running


def new_game(address: str) -> dict[str, str]:
    """A new Channeling game through the gateway: the values of the placeholders."""
    entry = registry.by_name("channeling")
    pb2 = entry.pb2()
    with grpc.insecure_channel(address) as channel:

        def call(name: str, token: str | None = None, **fields):
            method = channel.unary_unary(
                f"/{entry.service_name}/{name}",
                request_serializer=getattr(pb2, f"{name}Request").SerializeToString,
                response_deserializer=getattr(pb2, f"{name}Response").FromString,
            )
            return method(getattr(pb2, f"{name}Request")(**fields), metadata=bearer(token))

        created = call("CreateGame", players=2)
        tokens = {t.seat: t.token for t in created.seat_tokens}
        seat = created.game.to_act[0]
        listed = call("ListMoves", tokens[seat], game_id=created.game.game_id)
    move = json_format.MessageToJson(listed.moves[0], indent=None)
    return {
        "GAME_ID": created.game.game_id,
        "OTHER_TOKEN": next(t for s, t in tokens.items() if s != seat),
        "TOKEN": tokens[seat],
        "MOVE": move,
    }


def prepared(text: str, stack) -> str:
    """The block with its addresses on the stack's ports and a new game's values."""
    text = re.sub(
        r"127\.0\.0\.1:(\d+)",
        lambda m: f"127.0.0.1:{stack.ports.get(int(m.group(1)), int(m.group(1)))}",
        text,
    )
    if any(name in text for name in PLACEHOLDERS):
        values = new_game(stack.gateway_address)
        text = re.sub("|".join(PLACEHOLDERS), lambda m: values[m.group(0)], text)
    return text


def environment(stack) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}"
    env["TABLETOP_TARGET"] = stack.gateway_address  # the CLI's default, if ports moved
    env.pop("TABLETOP_TOKEN", None)
    return env


def run_block(block: Block, stack, script: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script or prepared(block.text, stack)],
        cwd=ROOT,
        env=environment(stack),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
    )


def json_names(lines: list[str]) -> set[str]:
    return set(re.findall(r'"(\w+)":', "\n".join(lines)))


def check_prompted(block: Block, stack, expected_exit: int = 0) -> None:
    text = prepared(block.text, stack)
    for command, shown in prompted(text):
        done = run_block(block, stack, script=command)
        assert done.returncode == expected_exit, (
            f"README line {block.line}: `{command}` exited {done.returncode}:\n"
            f"{done.stderr}\n{done.stdout[:2000]}"
        )
        printed = done.stdout.splitlines()
        if not shown:
            continue
        if any("..." in line or "{" in line for line in shown):
            missing = json_names(shown) - json_names(printed)
            assert not missing, f"README line {block.line}: `{command}` prints no {missing}"
        else:
            assert printed == shown, f"README line {block.line}: `{command}` printed {printed}"


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, id=b.id) for b in BLOCKS if b.marker is None or b.marker[0] == "exits"],
)
def test_the_block_runs_as_written(block, stack):
    expected = int(block.marker[1].split(":")[0]) if block.marker else 0
    started = time.monotonic()
    if any(line.startswith("$ ") for line in block.text.splitlines()):
        check_prompted(block, stack, expected)
    else:
        done = run_block(block, stack)
        assert done.returncode == expected, (
            f"README line {block.line} exited {done.returncode}:\n{done.stderr}\n"
            f"{done.stdout[-3000:]}"
        )
    print(f"README line {block.line}: {time.monotonic() - started:.1f} s")
