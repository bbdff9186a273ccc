"""The result of an evaluation and its tables: Markdown for people, CSV for programs, one row per game."""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field

from allfives_env.core import Rules

from .games import GameResult
from .seating import Seating
from .stats import AgentStats


@dataclass
class EvaluationResult:
    """Everything one evaluation measured; ``agents`` are in line-up order, ``games`` in (match, rotation) order."""

    lineup: list[str]
    rules: Rules
    matches: int
    rotations: int
    seed: int
    games: list[GameResult]
    agents: list[AgentStats]
    seating: Seating = field(repr=False, default=None)  # type: ignore[assignment]

    def agent(self, label: str) -> AgentStats:
        """The statistics of the entry reported as ``label``."""
        for stats in self.agents:
            if stats.label == label:
                return stats
        raise KeyError(f"no entry {label!r}; entries: {', '.join(s.label for s in self.agents)}")

    def title(self) -> str:
        """One line: the line-up, the table, the number of matches and games, the seed."""
        r = self.rules
        setup = f"{r.rules}, {r.num_players} players{', partnerships' if r.partnerships else ''}, target {r.target}"
        if r.opening:
            setup += f", opening {r.opening}"
        seatings = "seat rotations" if self.seating is None or self.seating.only_rotations else "seat orders"
        return (
            f"Duplicate evaluation: {' vs '.join(self.lineup)} ({setup}); {self.matches} duplicate matches x "
            f"{self.rotations} {seatings} = {len(self.games)} games; seed {self.seed}"
        )

    def markdown(self) -> str:
        """The results table as Markdown, with a one-line title."""
        rated = any(s.rating for s in self.agents)
        head = ["Agent", "Games", "Win rate", "95% CI (Wilson)", "Margin / match", "Mean ms / decision", "Slowest ms"]
        if rated:
            head += ["Rating (mu - 3 sigma)", "mu", "sigma"]
        lines = [f"**{self.title()}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for s in self.agents:
            row = [
                s.label,
                str(s.games),
                f"{100 * s.win_rate:.1f}%",
                f"[{100 * s.ci_low:.1f}%, {100 * s.ci_high:.1f}%]",
                f"{s.margin:+.1f} ± {s.margin_half_width:.1f}" if s.games > 0 else "-",
                f"{1000 * s.seconds_per_choice:.3f}",
                f"{1000 * s.slowest:.3f}",
            ]
            if rated:
                row += [f"{s.rating.ordinal:.2f}", f"{s.rating.mu:.2f}", f"{s.rating.sigma:.2f}"]
            lines.append("| " + " | ".join(row) + " |")
        lines += [
            "",
            "Win rate: share of games won (a shared win counts as a fraction). Margin: own side's final score minus "
            "the best other side's, mean per game ± 95% half-width over duplicate matches. Timing: decisions with "
            "more than one legal action.",
        ]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """One row per entry, every statistic."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["agent", "spec", "games", "wins", "win_rate", "ci_low", "ci_high", "paired_ci_low", "paired_ci_high",
             "margin", "margin_ci_half_width", "decisions", "choice_decisions", "seconds_per_choice",
             "slowest_seconds", "seconds_per_decision", "rating_ordinal", "rating_mu", "rating_sigma"]
        )  # fmt: skip
        for s in self.agents:
            rating = [s.rating.ordinal, s.rating.mu, s.rating.sigma] if s.rating else ["", "", ""]
            writer.writerow(
                [s.label, s.spec, s.games, s.wins, s.win_rate, s.ci_low, s.ci_high, s.paired_low, s.paired_high,
                 s.margin, s.margin_half_width, s.decisions, s.choices, s.seconds_per_choice, s.slowest,
                 s.seconds_per_decision, *rating]
            )  # fmt: skip
        return buffer.getvalue()

    def games_csv(self) -> str:
        """One row per game: which entry sat where, the scores, the winners."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["match", "rotation", "match_seed", "seat_agents", "scores", "winners", "rounds", "actions"])
        for g in self.games:
            writer.writerow(
                [g.match, g.rotation, g.match_seed, " ".join(self.lineup[e] for e in g.seat_entries),
                 " ".join(str(s) for s in g.scores), " ".join(map(str, g.winners)), g.rounds, g.actions]
            )  # fmt: skip
        return buffer.getvalue()

    def write(self, out_dir: str) -> list[str]:
        """Write ``results.md``, ``results.csv`` and ``games.csv`` into ``out_dir``; return the paths."""
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for name, text in (
            ("results.md", self.markdown()),
            ("results.csv", self.csv()),
            ("games.csv", self.games_csv()),
        ):
            path = os.path.join(out_dir, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        return paths
