"""The standard benchmark: a quick run end to end, its figures against the harness, the held-out seeds."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from optional import require

from agents.benchmark import BEST_RESPONSE_SEED, HELD_OUT_SEEDS, LADDER, SETTINGS, main, run_benchmark
from agents.evaluation import derive_seed, evaluate, match_seed
from allfives_env.__main__ import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["--quick", "--workers", "1", "--no-progress", "--ladder", "random", "heuristic"]


def test_quick_run_writes_its_files_and_matches_the_harness(tmp_path, capsys):
    out = tmp_path / "bench"
    assert cli_main(["benchmark", "greedy", *QUICK, "--out", str(out)]) == 0
    assert "Written:" in capsys.readouterr().out
    rows = list(csv.DictReader((out / "benchmark.csv").open()))
    assert {(r["setting"], r["opponent"]) for r in rows} == {
        (s.key, o) for s in SETTINGS for o in ("random", "heuristic")
    }
    summary = json.loads((out / "benchmark.json").read_text())
    assert summary["matches_per_pairing"] == 2
    assert set(summary["settings"]["fives3"]["ratings"]) == {"greedy", "random", "heuristic"}
    text = (out / "benchmark.md").read_text()
    assert "python -m agents.benchmark greedy --quick" in text
    for setting in SETTINGS:
        assert setting.seed in HELD_OUT_SEEDS
        direct = evaluate(setting.lineup("greedy", "heuristic"), 2, rules=setting.rules, partnerships=setting.partnerships,
                          num_players=setting.num_players, seed=setting.seed, workers=1, progress=False)  # fmt: skip
        row = next(r for r in rows if r["setting"] == setting.key and r["opponent"] == "heuristic")
        me = direct.agents[0]
        assert int(row["games"]) == me.games == 2 * direct.rotations
        assert float(row["win_rate"]) == pytest.approx(me.win_rate)
        assert float(row["wp_low"]) == pytest.approx(me.ci_low)
        assert float(row["adp"]) == pytest.approx(me.margin)
        assert f"{100 * me.win_rate:.1f}%" in text


def test_ratings_put_the_stronger_bot_first():
    result = run_benchmark(["random"], 3, ladder=["heuristic"], settings=SETTINGS[:1], workers=1)
    rating = result.ratings["pagat2"]
    assert rating["heuristic"]["mu"] > rating["random"]["mu"]
    assert result.row("pagat2", "random", "heuristic").win_rate < 0.5


def test_a_single_match_writes_strict_json(tmp_path):
    assert main(["random", "--matches", "1", "--ladder", "greedy", "--workers", "1", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "benchmark.json").read_text(), parse_constant=pytest.fail)
    assert all(row["adp_half_width"] is None for row in summary["rows"])


def test_the_ladder_is_the_fixed_one():
    assert LADDER == ("random", "greedy", "heuristic", "search", "trained")


@pytest.mark.parametrize(
    "argv",
    [[], ["nonsense", "--quick"], ["greedy", "--quick", "--ladder", "search:0"], ["greedy", "--matches", "0"]],
)
def test_bad_arguments_exit_2_with_one_line(argv, tmp_path, capsys):
    assert main([*argv, "--workers", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "benchmark.md").exists()


def _config_seeds() -> list[tuple[str, int, int]]:
    require("torch")
    from allfives_train.config import load_config

    out = []
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        cfg = load_config(path)
        out.append((path.name, cfg["run"]["seed"], cfg["eval"]["seed"]))
    cfg = load_config(None)
    out.append(("defaults", cfg["run"]["seed"], cfg["eval"]["seed"]))
    return out


def test_no_config_trains_or_evaluates_on_the_held_out_seeds():
    configs = _config_seeds()
    assert len(configs) >= 5
    for name, run_seed, eval_seed in configs:
        assert run_seed not in HELD_OUT_SEEDS, name
        assert eval_seed not in HELD_OUT_SEEDS, name
    # The deals themselves: the trainer's evaluations (from eval.seed) never meet a benchmark deal.
    benchmark = {match_seed(s.seed, k) for s in SETTINGS for k in range(2000)}
    benchmark |= {match_seed(BEST_RESPONSE_SEED, k) for k in range(2000)}
    trained = {match_seed(seed, k) for _, _, seed in configs for k in range(2000)}
    trained |= {derive_seed(seed, "quick-eval", k) for _, _, seed in configs for k in range(2000)}  # the trainer's
    assert not benchmark & trained
    assert BEST_RESPONSE_SEED in HELD_OUT_SEEDS
