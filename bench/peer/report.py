"""The peer section in words: the table of server and client CPU per move, the ratios,
and whether the figures are provisional. ``lines(results)`` is what BENCHMARKS.md shows
(bench/report.py adds it to its figures): the run's own peer figures, else the last ones
measured (bench/results/peer-latest.json), since a run without ``--only peer`` has none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STORED = Path(__file__).resolve().parent.parent / "results" / "peer-latest.json"

LABELS = {
    "ours": "Tabletop: gateway (Envoy + Python) and service, SQLite synced",
    "bgio-memory": "boardgame.io, in memory",
    "bgio-flatfile": "boardgame.io, FlatFile",
}
PLAY = (
    ", our players on Play sessions (one per seat: its moves in, its game's updates and"
    " each move's answer out, through Envoy straight to the service)"
)
PARTS = {"service": "service", "gateway": "gateway", "envoy": "Envoy", "node": "node"}


def lines(results: dict[str, Any], stored: Path = STORED) -> list[str]:
    """The peer section's lines for BENCHMARKS.md: this run's, else the last stored."""
    peer = results.get("peer")
    if not peer and stored.is_file():
        peer = json.loads(stored.read_text())
    return markdown(peer).splitlines() if peer else []


def provisional(peer: dict[str, Any]) -> list[str]:
    """Why these figures are not a quiet machine's, if they are not."""
    reasons = []
    if peer.get("settings", {}).get("rounds", 0) < 3:
        reasons.append("fewer than 3 rounds per side (a `--quick` or reduced run)")
    cpus = peer.get("cpus") or 1
    load = peer.get("load_average") or {}
    busiest = max(
        [(load.get("start") or [0])[0], (load.get("end") or [0])[0]]
        + [r.get("load_average", 0) for r in peer.get("rounds") or []]
    )
    if busiest > 0.5 * cpus:
        reasons.append(
            f"the machine was busy (one-minute load average up to {busiest:.1f} on {cpus} cores"
            " while it ran; the sides' own processes count in it)"
        )
    return reasons


def _us(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def markdown(peer: dict[str, Any]) -> str:
    s = peer.get("settings") or {}
    v = peer.get("versions") or {}
    load = peer.get("load_average") or {}
    out = ["### Peer: boardgame.io's server beside ours (Channeling, every player watching)", ""]
    reasons = provisional(peer)
    if reasons:
        out += ["> **Provisional:** " + "; ".join(reasons) + ".", ""]
    out += [
        f"Measured {peer.get('started', '?')} ({peer.get('duration_seconds', '?')} s):"
        f" {s.get('rounds')} round(s) per side and size, interleaved, {s.get('window_seconds')} s"
        f" windows after {s.get('warmup_seconds')} s of play; boardgame.io"
        f" {v.get('boardgame.io', '?')} (socket.io {v.get('socket.io', '?')}, node-persist"
        f" {v.get('node-persist', '?')}) on node {v.get('node', '?')}; our store"
        f" {s.get('store', '?')}{', SubmitMove with omit_view' if s.get('omit_view') else ''}"
        f"{PLAY if s.get('play') else ''};"
        f" load average {load.get('start')} at the start, {load.get('end')} at the end."
        " CPU from /proc (user + system, children included) over each window, divided by the"
        " moves the servers applied in it; the median round is shown.",
        "",
        "| games at once | server | server CPU µs/move | above idle | of which"
        " | client CPU µs/move | moves/s | decisions per finished game"
        " | rounds (server µs/move) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    slow = []
    for side in peer.get("sides") or []:
        parts = side.get("parts_us_per_move") or {}
        split = (
            " + ".join(f"{PARTS.get(k, k)} {_us(x)}" for k, x in parts.items())
            if len(parts) > 1
            else ""
        )
        rounds = " / ".join(_us(x) for x in side.get("rounds_server_us") or [])
        label = LABELS.get(side["target"], side["target"])
        if side["target"] == "ours" and s.get("play"):
            label += ", Play"
        if (side.get("moves_per_second") or 0) < 5 * side["games"]:
            slow.append(f"{label} at {side['games']} game{'s' if side['games'] > 1 else ''}")
        out.append(
            f"| {side['games']} | {label}"
            f" | {_us(side['server_cpu_us_per_move'])}"
            f" | {_us(side.get('server_cpu_us_per_move_above_idle'))} | {split}"
            f" | {_us(side['client_cpu_us_per_move'])} | {_us(side['moves_per_second'])}"
            f" | {side['decisions_per_game'] or ''} | {rounds} |"
        )
    idle = peer.get("idle_ms_per_second") or {}
    if idle:
        out += [
            "",
            "At rest, before any game (no client connected), CPU in ms a second: "
            + "; ".join(
                f"{LABELS.get(t, t)} {sum(parts.values()):.1f}"
                + (
                    " (" + " + ".join(f"{PARTS.get(k, k)} {x:.1f}" for k, x in parts.items()) + ")"
                    if len(parts) > 1
                    else ""
                )
                for t, parts in idle.items()
            )
            + ". *Above idle* takes that rate out of each window.",
        ]
    out += [
        "",
        "*Decisions per finished game* are those of the games that ended within the rounds:"
        " where a table finishes few games in a round the short ones are over-represented"
        " (the replay test shows both sides play the same games, about 75 decisions).",
    ]
    if slow:
        out += [
            "",
            f"Moving about once a second per game: {', '.join(slow)}. boardgame.io's FlatFile"
            " waits for node-persist's write queue (a tick a second) when a match is alone;"
            " its CPU per move there is mostly what the server burns at rest, over few moves.",
        ]
    out += [
        "",
        "| games at once | ours / boardgame.io in memory | ours / boardgame.io FlatFile |",
        "|---|---|---|",
    ]
    by_level: dict[int, dict[str, dict[str, Any]]] = {}
    for r in peer.get("ratios") or []:
        by_level.setdefault(r["games"], {})[r["against"]] = r

    def cell(r: dict[str, Any] | None) -> str:
        if not r or r.get("server_ratio") is None:
            return ""
        return f"{r['server_ratio']:.1f}x (rounds paired: {r['server_ratio_paired']:.1f}x)"

    for level, found in sorted(by_level.items()):
        out.append(
            f"| {level} | {cell(found.get('bgio-memory'))} | {cell(found.get('bgio-flatfile'))} |"
        )
    out += profile_lines(peer.get("profile") or {})
    out.append("")
    return "\n".join(out)


def profile_lines(prof: dict[str, Any]) -> list[str]:
    """Where our processes' Python time went in the profiled round (py-spy)."""
    if not prof:
        return []
    f = prof.get("figures") or {}
    parts = f.get("parts_us_per_move") or {}
    out = [
        "",
        f"Where our side's time goes at {prof.get('games')} games: py-spy in one more round"
        " (not counted above), sampling the threads that hold the GIL, 250 a second"
        f" ({f.get('moves_per_second', 0):,.0f} moves/s; CPU per move: service"
        f" {_us(parts.get('service'))}, gateway {_us(parts.get('gateway'))}, Envoy"
        f" {_us(parts.get('envoy'))} µs). Each sample counts for the innermost frame that"
        " names a kind of work (bench/peer/where.py); raw samples in"
        " bench/results/profile-peer-*.txt.",
        "",
        "| process | GIL held | where its Python time went |",
        "|---|---|---|",
    ]
    for part in ("service", "gateway"):
        found = prof.get(part) or {}
        if "where" not in found:
            out.append(f"| {part} | | {found.get('error', 'not sampled')} |")
            continue
        spread = "; ".join(f"{share:.1%} {label}" for label, share in found["where"])
        out.append(f"| {part} | {found['gil_share']:.0%} of the window | {spread} |")
    return out
