"""The duplicate-match harness: seating, seeds, statistics, files, reproducibility and the command line."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from dataclasses import fields

import pytest

from agents.base import Agent
from agents.evaluate import (
    EvaluationError,
    GameResult,
    evaluate,
    main,
    match_seed,
    record_name,
    seat_lineup,
    wilson_interval,
)
from agents.ratings import fit_ratings, side_ranks
from allfives_env.core import DRAW, PASS, State, make_rules
from allfives_env.core.record import load_record, replay

# -- local agents (the real bots live in the registry; these keep the tests self-contained) --


class RandomBot(Agent):
    name = "random"

    def act(self, view):
        return self.rng.choice(view.legal)


class EagerBot(Agent):
    """Takes the placement with the most points now; deterministic."""

    name = "eager"

    def act(self, view):
        if view.legal[0] >= DRAW:
            return view.legal[0]
        best, best_points = view.legal[0], -1
        for action in view.legal:
            after = view.layout.copy()
            after.place(action >> 2, action & 3)
            total = after.end_total
            points = total if total % 5 == 0 else 0
            if points > best_points:
                best, best_points = action, points
        return best


class SlowBot(RandomBot):
    """Sleeps on forced decisions only, so choice timing must stay small."""

    name = "slow"

    def act(self, view):
        if len(view.legal) == 1:
            time.sleep(0.002)
        return super().act(view)


class CheatBot(Agent):
    name = "cheat"

    def act(self, view):
        return PASS if PASS not in view.legal else view.legal[0]


BOTS = {"random": RandomBot, "eager": EagerBot, "slow": SlowBot, "cheat": CheatBot}


def factory(spec: str, seed: int | None = None) -> Agent:
    if spec not in BOTS:
        raise ValueError(f"unknown agent {spec!r}; allowed: {', '.join(BOTS)}")
    return BOTS[spec](seed)


def run(lineup, matches=3, **options):
    options.setdefault("workers", 1)
    options.setdefault("progress", False)
    options.setdefault("target", 60)
    return evaluate(lineup, matches, agent_factory=factory, **options)


TIMING = {"choice_seconds", "slowest", "seconds"}


def without_timing(game: GameResult) -> dict:
    return {f.name: getattr(game, f.name) for f in fields(game) if f.name not in TIMING}


# -- seating -------------------------------------------------------------------------


def test_seating_rotates_every_entry_through_every_seat():
    seating = seat_lineup(3, make_rules("pagat", 3))
    assert seating.rotations == 3
    seats = [seating.entries_at_seats(r) for r in range(3)]
    assert seats[0] == (0, 1, 2) and seats[1] == (2, 0, 1)
    for seat in range(3):
        assert sorted(s[seat] for s in seats) == [0, 1, 2]


def test_two_teams_in_partnerships_swap_sides_in_two_rotations():
    rules = make_rules("pagat", 4)
    seating = seat_lineup(2, rules)
    assert seating.rotations == 2
    assert seating.entries_at_seats(0) == (0, 1, 0, 1)
    assert seating.entries_at_seats(1) == (1, 0, 1, 0)
    four = seat_lineup(4, rules)
    assert four.rotations == 4 and four.entries_at_seats(1) == (3, 0, 1, 2)


def followers(seating) -> dict[tuple[int, int], int]:
    """How often entry b sits right after entry a (the next seat), over every seating."""
    counts: dict[tuple[int, int], int] = {}
    for r in range(seating.rotations):
        seats = seating.entries_at_seats(r)
        for seat, entry in enumerate(seats):
            pair = (entry, seats[(seat + 1) % len(seats)])
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def test_all_seatings_put_each_entry_after_each_other_as_often():
    rules = make_rules("fives", 3)
    rotations, every = seat_lineup(3, rules), seat_lineup(3, rules, seatings="all")
    assert followers(rotations) == {(0, 1): 3, (1, 2): 3, (2, 0): 3}  # the cyclic order never changes
    assert every.rotations == 6 and len({every.entries_at_seats(r) for r in range(6)}) == 6
    assert [every.entries_at_seats(r) for r in range(3)] == [rotations.entries_at_seats(r) for r in range(3)]
    assert followers(every) == {(a, b): 3 for a in range(3) for b in range(3) if a != b}
    assert seat_lineup(4, make_rules("fives", 4, False), seatings="all").rotations == 24


def test_all_seatings_in_partnerships_keep_partners_opposite():
    rules = make_rules("pagat", 4)
    four = seat_lineup(4, rules, seatings="all")
    assert four.rotations == 8
    for r in range(8):
        seats = four.entries_at_seats(r)
        assert all(seats[s] % 2 == seats[s + 2] % 2 for s in (0, 1))  # entries 0, 2 and 1, 3 are partners
    assert followers(four) == {(a, b): 4 for a in range(4) for b in range(4) if a % 2 != b % 2}
    assert seat_lineup(2, rules, seatings="all").rotations == 2  # both partners play one entry: nothing to add
    assert seat_lineup(2, make_rules("pagat", 2), seatings="all").rotations == 2


def test_an_unknown_seating_is_refused():
    with pytest.raises(ValueError, match="seatings='some' is not allowed; allowed: 'rotations', 'all'"):
        run(["eager", "random"], seatings="some")


def test_all_seatings_add_seat_orders_to_the_rotations_games():
    lineup = ["eager", "random", "random"]
    rotations = run(lineup, 2, num_players=3)
    every = run(lineup, 2, num_players=3, seatings="all")
    assert "2 duplicate matches x 6 seat orders = 12 games" in every.title()
    assert "x 3 seat rotations = 6 games" in rotations.title()
    for k in range(2):
        games = [g for g in every.games if g.match == k]
        assert [g.rotation for g in games] == list(range(6))
        assert {g.match_seed for g in games} == {match_seed(0, k)}
        assert [g.seat_entries for g in games] == [every.seating.entries_at_seats(r) for r in range(6)]
        same = [without_timing(g) for g in rotations.games if g.match == k]
        assert [without_timing(g) for g in games[:3]] == same


@pytest.mark.parametrize(
    ("size", "rules"), [(3, ("pagat", 4)), (2, ("pagat", 3)), (3, ("fives", 2)), (1, ("pagat", 2))]
)
def test_line_ups_that_do_not_fit_are_refused(size, rules):
    with pytest.raises(ValueError, match=f"line-up of {size} agents"):
        seat_lineup(size, make_rules(*rules))


# -- duplicate matches ---------------------------------------------------------------


def test_rotations_of_a_match_share_the_deals(tmp_path):
    result = run(["eager", "random"], 3, records_dir=str(tmp_path))
    assert result.rotations == 2 and len(result.games) == 6
    for k in range(3):
        games = [g for g in result.games if g.match == k]
        assert [g.rotation for g in games] == [0, 1]
        assert {g.match_seed for g in games} == {match_seed(0, k)}
        assert games[0].seat_entries == (0, 1) and games[1].seat_entries == (1, 0)
        records = [load_record((tmp_path / record_name(k, r)).read_text()) for r in (0, 1)]
        assert records[0]["rounds"][0]["hands"] == records[1]["rounds"][0]["hands"]
        assert records[0]["agents"] == ["eager", "random"] and records[1]["agents"] == ["random", "eager"]
    assert match_seed(0, 0) != match_seed(0, 1) != match_seed(1, 1)


def test_every_record_replays_to_the_reported_scores(tmp_path):
    result = run(["eager", "random", "random"], 2, num_players=3, records_dir=str(tmp_path))
    assert len(os.listdir(tmp_path)) == len(result.games) == 6
    for game in result.games:
        record = load_record((tmp_path / record_name(game.match, game.rotation)).read_text())
        summary = replay(record).summary()
        assert summary["finished"] and tuple(summary["scores"]) == game.scores
        assert record["seed"] == game.match_seed and record["evaluation"]["match"] == game.match
        # the match seed alone rebuilds the deals
        state = State(make_rules("pagat", 3, target=60), seed=record["seed"])
        assert state.deal.to_json() == {k: record["rounds"][0][k] for k in ("hands", "boneyard", "leader")}


def test_results_do_not_depend_on_the_number_of_workers():
    one = run(["eager", "random"], 4, workers=1)
    two = run(["eager", "random"], 4, workers=2)
    assert [without_timing(g) for g in one.games] == [without_timing(g) for g in two.games]
    assert [(a.wins, a.margin, a.ci_low) for a in one.agents] == [(a.wins, a.margin, a.ci_low) for a in two.agents]
    other = run(["eager", "random"], 4, seed=1)
    assert [g.scores for g in other.games] != [g.scores for g in one.games]


def test_a_pluggable_backend_gives_the_same_games_in_any_order():
    from agents.evaluation import play_in_worker

    seen = []

    def backwards(config, matches, workers, done):  # finishes the matches last to first, as a remote pool may
        for k in reversed(list(matches)):
            seen.append(k)
            done(k, play_in_worker(config, k))

    one = run(["eager", "random"], 4)
    other = run(["eager", "random"], 4, backend=backwards)
    assert seen == [3, 2, 1, 0]
    assert [without_timing(g) for g in other.games] == [without_timing(g) for g in one.games]


def test_a_backend_that_drops_a_match_is_an_error():
    from agents.evaluation import play_in_worker

    def lossy(config, matches, workers, done):
        for k in list(matches)[1:]:
            done(k, play_in_worker(config, k))

    with pytest.raises(RuntimeError, match="no games for 1 matches"):
        run(["eager", "random"], 3, backend=lossy)


def test_the_historical_module_offers_the_package_names():
    import agents.evaluate as thin
    import agents.evaluation as package

    assert set(thin.__all__) == set(package.__all__)
    for name in package.__all__:
        assert getattr(thin, name) is getattr(package, name), name


# -- statistics ----------------------------------------------------------------------


def test_win_shares_and_margins_follow_the_final_scores():
    result = run(["eager", "random"], 5)
    for g in result.games:
        assert sum(g.share) == pytest.approx(1)
        side = {entry: seat for seat, entry in enumerate(g.seat_entries)}
        for entry in (0, 1):
            own, other = g.scores[side[entry]], g.scores[1 - side[entry]]
            assert g.margin[entry] == own - other
            assert g.share[entry] == (1 / len(g.winners) if side[entry] in g.winners else 0)
    a, b = result.agents
    assert a.wins + b.wins == pytest.approx(len(result.games))
    assert a.margin == pytest.approx(-b.margin)
    assert a.ci_low <= a.win_rate <= a.ci_high
    assert (a.ci_low, a.ci_high) == wilson_interval(a.wins, a.games)


def test_partnership_teams_get_one_result_per_game():
    result = run(["eager", "random"], 2, num_players=4)
    for g in result.games:
        rules = result.rules
        sides = {e: {rules.side_of[s] for s, x in enumerate(g.seat_entries) if x == e} for e in (0, 1)}
        assert len(sides[0]) == len(sides[1]) == 1 and sides[0] != sides[1]
        assert sum(g.share) == pytest.approx(1)
    assert all(a.rating is None for a in result.agents)


def test_wilson_interval():
    z2 = 1.959963984540054**2
    low, high = wilson_interval(0, 10)
    assert low == 0 and high == pytest.approx(z2 / (10 + z2))
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(1 - high)
    wide, narrow = wilson_interval(30, 100), wilson_interval(300, 1000)
    assert narrow[0] > wide[0] and narrow[1] < wide[1]
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_timing_counts_only_decisions_with_a_choice():
    result = run(["slow", "random"], 2, target=30)
    slow = result.agent("slow")
    assert slow.decisions > slow.choices > 0
    assert slow.seconds_per_choice < slow.seconds_per_decision
    forced_seconds = slow.seconds_per_decision * slow.decisions - slow.seconds_per_choice * slow.choices
    assert forced_seconds >= 0.002 * (slow.decisions - slow.choices)
    assert 0 < slow.slowest < 0.002


def test_three_entries_get_openskill_ratings_and_repeated_specs_get_labels():
    result = run(["eager", "random", "random"], 4, num_players=3)
    assert [a.label for a in result.agents] == ["eager", "random", "random#2"]
    assert all(a.rating is not None and a.rating.sigma < 25 / 3 for a in result.agents)
    assert "Rating (mu - 3 sigma)" in result.markdown()


def test_rating_fit_orders_a_constant_winner_first():
    assert side_ranks([60, 25, 60]) == [0, 2, 0]
    games = [([[0], [1], [2]], [100, 50, 10])] * 10
    ratings = fit_ratings(games, 3)
    assert ratings[0].mu > ratings[1].mu > ratings[2].mu
    assert ratings[0].ordinal == pytest.approx(ratings[0].mu - 3 * ratings[0].sigma)


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_an_illegal_action_names_the_agent_and_the_place(workers):
    with pytest.raises(EvaluationError, match=r"agent 'cheat' \(seat \d\) chose 113.*match \d+, rotation 0"):
        run(["cheat", "random"], 6, workers=workers)


@pytest.mark.parametrize(
    ("lineup", "options", "message"),
    [
        ("greedy", {}, "must be a list of agent names"),
        (["eager", "nobody"], {}, r"lineup\[1\]='nobody': unknown agent"),
        (["eager", "random"], {"workers": 0}, "workers=0"),
        (["eager", "random"], {"rules": "chess"}, "rules='chess'"),
        (["eager", "random", "random"], {}, "does not fit 2 seats"),
    ],
)
def test_bad_arguments_raise_value_errors(lineup, options, message):
    with pytest.raises(ValueError, match=message):
        run(lineup, 1, **options)
    with pytest.raises(ValueError, match="matches=0"):
        run(["eager", "random"], 0)


# -- files and the command line --------------------------------------------------------


def test_command_line_prints_the_table_and_writes_the_files(tmp_path, capsys):
    out = tmp_path / "res"
    argv = ["eager", "random", "--matches", "3", "--target", "60", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(argv, agent_factory=factory) == 0
    printed = capsys.readouterr().out
    assert "| eager | 6 |" in printed and "| random | 6 |" in printed
    assert (out / "results.md").read_text() in printed
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert [r["agent"] for r in rows] == ["eager", "random"]
    assert float(rows[0]["wins"]) + float(rows[1]["wins"]) == 6
    assert math.isclose(float(rows[0]["margin"]), -float(rows[1]["margin"]))
    games = list(csv.DictReader(io.StringIO((out / "games.csv").read_text())))
    assert len(games) == 6 and games[1]["seat_agents"] == "random eager"
    assert len(os.listdir(out / "records")) == 6
    record = json.loads((out / "records" / record_name(2, 1)).read_text())
    assert " ".join(str(s) for s in replay(record).summary()["scores"]) == games[5]["scores"]


def test_command_line_plays_every_seat_order(capsys):
    argv = ["eager", "random", "random", "--players", "3", "--seatings", "all", "--matches", "1", "--target", "60"]
    assert main([*argv, "--workers", "1", "--no-progress"], agent_factory=factory) == 0
    printed = capsys.readouterr()
    assert "1 duplicate matches x 6 seat orders = 6 games" in printed.out and "| eager | 6 |" in printed.out
    assert "note:" not in printed.err


def test_command_line_warns_that_rotations_fix_who_follows_whom(capsys):
    argv = ["eager", "random", "slow", "--players", "3", "--matches", "1", "--target", "60", "--workers", "1"]
    assert main([*argv, "--no-progress"], agent_factory=factory) == 0
    printed = capsys.readouterr()
    assert "x 3 seat rotations = 3 games" in printed.out and "--seatings all plays every seat order" in printed.err
    assert main([*argv[:2], "random", *argv[3:], "--no-progress"], agent_factory=factory) == 0
    assert "note:" not in capsys.readouterr().err  # two of the three are the same bot: nothing to warn about


@pytest.mark.parametrize(
    "argv",
    [
        ["eager", "nobody"],
        ["eager", "random", "--matches", "0"],
        ["eager", "random", "random"],
        ["eager", "random", "--players", "3", "--partnerships"],
        ["eager", "random", "--rules", "chess"],
        ["eager", "random", "--matches", "many"],
        ["eager", "random", "--seatings", "some"],
    ],
)
def test_command_line_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        code = main([*argv, "--no-progress"], agent_factory=factory)
        raise SystemExit(code)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err


def test_the_registry_bots_play_through_the_default_factory():
    from agents import registry

    registry.make_agent("greedy")
    result = evaluate(["greedy", "random"], 2, target=60, workers=1, progress=False)
    assert sum(a.wins for a in result.agents) == pytest.approx(len(result.games)) == 4
