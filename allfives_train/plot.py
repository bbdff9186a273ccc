"""The learning-curve PNG: evaluation win rates against each baseline, and the losses, over training steps."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .metrics import read_metrics  # noqa: E402


def plot_curves(metrics_csv: Path, out: Path, baselines: list[str]) -> Path:
    """Draw ``out`` from the metrics CSV; returns its path."""
    rows = read_metrics(metrics_csv)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    for b in baselines:
        pts = [
            (r["steps"], r[f"eval_win_{b}"], r[f"eval_ci_{b}"] or 0.0)
            for r in rows
            if r.get(f"eval_win_{b}") is not None
        ]
        if pts:
            x, y, ci = zip(*pts, strict=True)
            line = top.plot(x, y, marker="o", label=f"vs {b} (evaluation)")[0]
            top.fill_between(x, [a - c for a, c in zip(y, ci, strict=True)], [a + c for a, c in zip(y, ci, strict=True)], alpha=0.15,
                             color=line.get_color())  # fmt: skip
        train = [(r["steps"], r.get(f"train_win_{b}")) for r in rows if r.get(f"train_win_{b}") is not None]
        if train:
            x, y = zip(*train, strict=True)
            top.plot(x, y, linestyle=":", alpha=0.6, label=f"vs {b} (training matches)")
    top.axhline(0.5, color="grey", linewidth=0.8)
    top.set_ylabel("match win rate")
    top.set_ylim(0, 1)
    top.legend(loc="lower right", fontsize=8)
    top.set_title("Learning curves")
    for key in ("loss", "policy_loss", "value_loss"):
        pts = [(r["steps"], r[key]) for r in rows if r.get(key) is not None]
        if pts:
            x, y = zip(*pts, strict=True)
            bottom.plot(x, y, label=key)
    bottom.set_xlabel("learning decisions")
    bottom.set_ylabel("loss")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
