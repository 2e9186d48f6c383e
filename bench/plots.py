"""How cost grows, as PNGs beside the JSON (matplotlib, the ``bench`` extra).

- ``engine_cost_by_move.png``: the median (and p90) cost of one decision against the
  move number within a game, one line per game;
- ``latency_by_concurrency.png``: SubmitMove p50 and p99 against concurrent clients,
  one panel per game: direct, through our gateway, through Envoy, and the echo ceiling;
- ``throughput_by_concurrency.png``: calls a second against concurrent clients, the
  same panels.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

TARGET_STYLE = {
    "direct": ("tab:blue", "direct"),
    "gateway": ("tab:orange", "our gateway"),
    "envoy": ("tab:green", "Envoy"),
    "echo": ("tab:gray", "echo (ceiling)"),
}


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def draw(results: dict[str, Any], directory: Path) -> list[str]:
    """Write the PNGs the results allow; return their file names."""
    import matplotlib

    matplotlib.use("Agg")
    written = []
    if results.get("engine"):
        written.append(_engine_curve(results["engine"], directory / "engine_cost_by_move.png"))
    rpc = results.get("rpc") or {}
    if rpc.get("games") or rpc.get("echo"):
        written.append(_latency(rpc, directory / "latency_by_concurrency.png"))
        written.append(_throughput(rpc, directory / "throughput_by_concurrency.png"))
    return written


def _engine_curve(rows: list[dict[str, Any]], path: Path) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for row in rows:
        curve = row.get("cost_by_move_number") or []
        if not curve:
            continue
        label = f"{row['game']} ({row['configuration']})"
        xs = [point[0] for point in curve]
        line = ax.plot(xs, [point[1] for point in curve], label=f"{label} median")[0]
        ax.plot(xs, [point[2] for point in curve], linestyle=":", color=line.get_color())
    ax.set_xlabel("move number within the game (buckets of 10 decisions)")
    ax.set_ylabel("cost of one decision (µs): median solid, p90 dotted")
    ax.set_title("Engine: decision cost against move number")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _panels(rpc: dict[str, Any]):
    import matplotlib.pyplot as plt

    games = list((rpc.get("games") or {}).keys()) or ["echo"]
    columns = min(3, len(games))
    rows = math.ceil(len(games) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows), squeeze=False)
    for extra in axes.flat[len(games) :]:
        extra.set_visible(False)
    return fig, list(zip(games, axes.flat, strict=False))


def _series(rpc: dict[str, Any], game: str) -> dict[str, list[dict[str, Any]]]:
    series = dict((rpc.get("games") or {}).get(game) or {})
    series = {k: v for k, v in series.items() if k in TARGET_STYLE and v}
    if rpc.get("echo"):
        series["echo"] = rpc["echo"]
    return series


def _levels(ax, rpc: dict[str, Any], game: str) -> None:
    """A log2 axis of concurrent clients, labelled with the levels measured."""
    levels = sorted({r["concurrency"] for rows in _series(rpc, game).values() for r in rows})
    ax.set_xscale("log", base=2)
    ax.set_xticks(levels)
    ax.set_xticklabels([str(c) for c in levels])
    ax.minorticks_off()


def _latency(rpc: dict[str, Any], path: Path) -> str:
    import matplotlib.pyplot as plt

    fig, panels = _panels(rpc)
    for game, ax in panels:
        for target, rows in _series(rpc, game).items():
            colour, label = TARGET_STYLE[target]
            xs = [r["concurrency"] for r in rows]
            ax.plot(xs, [r["p50_ms"] for r in rows], marker="o", color=colour, label=f"{label} p50")
            ax.plot(xs, [r["p99_ms"] for r in rows], marker="x", linestyle="--", color=colour)
        _levels(ax, rpc, game)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("SubmitMove latency (ms): p50 solid, p99 dashed")
        ax.set_title(game)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="x-small")
    fig.suptitle("Latency against concurrency")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _throughput(rpc: dict[str, Any], path: Path) -> str:
    import matplotlib.pyplot as plt

    fig, panels = _panels(rpc)
    for game, ax in panels:
        for target, rows in _series(rpc, game).items():
            colour, label = TARGET_STYLE[target]
            xs = [r["concurrency"] for r in rows]
            ax.plot(
                xs, [r["calls_per_second"] for r in rows], marker="o", color=colour, label=label
            )
        _levels(ax, rpc, game)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("calls a second")
        ax.set_title(game)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small")
    fig.suptitle("Throughput against concurrency")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name
