"""The learning curves as one image: win rate against each curve opponent over the decisions trained.

One panel per opponent, one line per algorithm: the mean over seeds at each
snapshot (seeds' snapshots line up: they are taken at the same marks of the
budget, at the decisions the first seed reached), with the band from the
lowest to the highest seed.
"""

from __future__ import annotations

from pathlib import Path

from .evaluation import CURVE_OPPONENTS


def plot_curves(curves: list[dict], path: Path) -> Path:
    """Draw ``curves`` (rows of :class:`~agents.baselines.results.Results`) into the PNG ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, axes = plt.subplots(1, len(CURVE_OPPONENTS), figsize=(5 * len(CURVE_OPPONENTS), 4), sharey=True)
    algorithms = list(dict.fromkeys(r["algorithm"] for r in curves))
    for ax, opponent in zip(axes, CURVE_OPPONENTS, strict=True):
        for algorithm in algorithms:
            rows = [r for r in curves if (r["algorithm"], r["opponent"]) == (algorithm, opponent)]
            by_point: dict[int, list[dict]] = {}
            for r in rows:
                by_point.setdefault(r["point"], []).append(r)
            points = sorted(by_point)
            x = [min(r["decisions"] for r in by_point[p]) for p in points]
            rates = [[r["win_rate"] for r in by_point[p]] for p in points]
            ax.plot(x, [sum(v) / len(v) for v in rates], marker="o", label=algorithm)
            ax.fill_between(x, [min(v) for v in rates], [max(v) for v in rates], alpha=0.2)
        ax.set_title(f"against {opponent}")
        ax.set_xlabel("decisions trained")
        ax.xaxis.set_major_formatter(FuncFormatter(_short))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate (duplicate matches, held-out seeds)")
    axes[0].set_ylim(0, 1)
    axes[0].legend(loc="lower right", fontsize="small")  # against random the lines run high
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _short(decisions: float, _position: int) -> str:
    """Axis labels that do not run into each other: 200k, 1.5M."""
    if decisions >= 1e6:
        return f"{decisions / 1e6:g}M"
    return f"{decisions / 1e3:g}k" if decisions else "0"
