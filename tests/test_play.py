"""Terminal play, driven by scripted input to the end of whole matches."""

from __future__ import annotations

import io
import json
import re

import pytest

from agents.base import Agent
from agents.play import main
from allfives_env.core.record import load_record, replay
from allfives_env.options import MAX_SEED


class RandomBot(Agent):
    name = "random"

    def act(self, view):
        return self.rng.choice(view.legal)


class LastBot(Agent):
    name = "last"

    def act(self, view):
        return view.legal[-1]


def factory(spec: str, seed: int | None = None) -> Agent:
    bots = {"random": RandomBot, "last": LastBot}
    if spec not in bots:
        raise ValueError(f"unknown agent {spec!r}; allowed: {', '.join(bots)}")
    return bots[spec](seed)


class Script:
    """Answers prompts from a list, then by a rule that reads the screen; EOF when told to stop."""

    def __init__(self, first: list[str], then=lambda screen: "1", limit: int = 2000):
        self.first = list(first)
        self.then = then
        self.out = io.StringIO()
        self.prompts = 0
        self.limit = limit

    def __call__(self, prompt: str) -> str:
        self.prompts += 1
        if self.prompts > self.limit:
            raise EOFError
        answer = self.first.pop(0) if self.first else self.then(self.out.getvalue())
        self.out.write(f"{prompt}{answer}\n")
        return answer


def listed_moves(screen: str) -> list[str]:
    """The action texts of the last move list on the screen."""
    block = screen[screen.rindex("Your moves:") :]
    return re.findall(r"^  \d+\) (\S+(?: [WENS])?)", block, re.M)


def final_scores(text: str) -> list[float]:
    line = re.search(r"Final scores: (.*)\. Winner", text).group(1)
    return [float(x) for x in re.findall(r"(-?\d+(?:\.\d+)?)(?=, |$)", line)]


def play(args: list[str], script: Script) -> int:
    return main(args, read=script, out=script.out, agent_factory=factory)


def test_a_whole_match_with_bad_input_ends_and_replays_to_the_scores_shown(tmp_path):
    path = tmp_path / "match.json"
    script = Script(["abc", "0", "99", "²", "1" * 4301, "draw", "9-9 E", ""])
    assert play(["--vs", "random", "--target", "30", "--seed", "5", "--save", str(path)], script) == 0
    text = script.out.getvalue()
    assert "Cannot read 'abc'" in text
    assert "There is no move 0" in text and "There is no move 99" in text
    assert "Cannot read '²'" in text and "Cannot read '1111" in text  # digits, but not a move number
    assert "'draw' is not a legal move now" in text
    assert "Cannot read '9-9 E'" in text
    assert "Type a move's number or its text" in text  # the empty line
    assert "Match over." in text and "seat 1 (random) plays" in text
    summary = replay(load_record(path.read_text())).summary()
    assert summary["finished"]
    assert summary["scores"] == final_scores(text)
    assert json.loads(path.read_text())["agents"] == ["human", "random"]


def test_moves_typed_as_text_are_played(tmp_path):
    typed = []

    def second_move_text(screen):
        moves = listed_moves(screen)
        typed.append(moves[-1])
        return moves[-1]

    path = tmp_path / "m.json"
    script = Script([], then=second_move_text)
    assert play(["--vs", "last", "--target", "30", "--seed", "2", "--seat", "1", "--save", str(path)], script) == 0
    text = script.out.getvalue()
    assert typed and "Cannot read" not in text and "not a legal move" not in text
    chosen = [line for line in text.splitlines() if line.startswith("You play ") and "only move" not in line]
    played = [re.match(r"You play (\S+(?: [WENS])?)", line).group(1) for line in chosen]
    assert played == typed
    assert replay(load_record(path.read_text())).summary()["scores"] == final_scores(text)


def test_partnership_match_with_bots_named_per_seat(tmp_path):
    path = tmp_path / "p.json"
    script = Script(["5"])
    args = ["--players", "4", "--seat", "1", "--vs", "random,last,random", "--target", "30", "--seed", "1"]
    assert play([*args, "--save", str(path)], script) == 0
    text = script.out.getvalue()
    assert "seat 3 (partner, random)" in text and "seat 2 (last)" in text
    assert "your side (seats 1+3)" in text and "opponents (seats 0+2)" in text
    record = json.loads(path.read_text())
    assert record["agents"] == ["random", "human", "last", "random"] and record["partnerships"]
    assert replay(record).summary()["scores"] == final_scores(text)


def test_bots_draws_passes_and_round_results_are_shown():
    # fives at two players has a big boneyard: draws are frequent
    script = Script([])
    assert play(["--rules", "fives", "--vs", "random", "--target", "60", "--seed", "4"], script) == 0
    text = script.out.getvalue()
    assert "seat 1 (random) draws" in text
    assert re.search(r"^You draw: \d-\d", text, re.M)
    assert re.search(r"^--- Round 1 over: .*Pips left: you \d+, seat 1 \(random\) \d+", text, re.M)
    assert "(your only move, played for you)" in text


class Stopper(Script):
    """Stops the match at the second move prompt: types 'q', or ends the input (Ctrl-D), or interrupts (Ctrl-C).

    The input that ended may be read again, as a terminal's can after Ctrl-D (``after`` answers the save
    prompt), or stay ended, as a pipe's does (``after=None``).
    """

    def __init__(self, how: str, after: str | None):
        super().__init__([])
        self.how, self.after, self.stopped = how, after, False

    def __call__(self, prompt: str) -> str:
        if self.stopped:
            if self.after is None:
                self.out.write(prompt + "\n")  # input() shows its prompt, then finds the input ended
                raise EOFError
            self.out.write(f"{prompt}{self.after}\n")
            return self.after
        if prompt.startswith("Your move") and self.prompts >= 1:
            self.stopped = True
            self.out.write(prompt + "\n")
            if self.how == "q":
                return "q"
            raise EOFError if self.how == "ctrl-d" else KeyboardInterrupt
        return super().__call__(prompt)


STOPS = ["q", "ctrl-d", "ctrl-c"]


@pytest.mark.parametrize("how", STOPS)
def test_q_ctrl_d_and_ctrl_c_stop_alike_offering_to_save(tmp_path, how):
    """Each asks where to save the unfinished match, saves where told, and exits 1 (stopped before the end)."""
    path = tmp_path / "typed.json"
    script = Stopper(how, after=str(path))
    assert play(["--vs", "random", "--seed", "3"], script) == 1
    text = script.out.getvalue()
    assert "Stopped in round 1" in text and "Save the unfinished match?" in text and "Record written to" in text
    summary = replay(load_record(path.read_text())).summary()
    assert not summary["finished"] and summary["events"][0]["seat"] in (0, 1)


@pytest.mark.parametrize("how", STOPS)
def test_input_that_stays_ended_takes_the_save_prompts_default(tmp_path, how):
    path = tmp_path / "default.json"
    script = Stopper(how, after=None)
    assert play(["--vs", "random", "--seed", "3", "--save", str(path)], script) == 1
    assert "Save the unfinished match? File name [Enter: " in script.out.getvalue()
    assert not replay(load_record(path.read_text())).summary()["finished"]
    unsaved = Stopper(how, after=None)
    assert play(["--vs", "random", "--seed", "3"], unsaved) == 1
    assert "Record written" not in unsaved.out.getvalue() and not list(tmp_path.glob("allfives-*.json"))


def test_a_fresh_seed_spans_the_whole_range_and_is_shown_only_when_the_match_stops(tmp_path):
    """A match's deals follow from its seed: a fresh one is drawn from 128 bits and printed only once the match
    stops, so the screen never tells the person the bots' hands; a chosen one is the person's to know."""
    seeds = []
    for k in range(6):
        path = tmp_path / f"fresh{k}.json"
        script = Script(["q", ""])
        assert play(["--vs", "random", "--save", str(path)], script) == 1
        seed = json.loads(path.read_text())["seed"]
        text = script.out.getvalue()
        assert str(seed) not in text[: text.index("Stopped")] and f"seed {seed}" in text[text.index("Stopped") :]
        seeds.append(seed)
    assert all(0 <= s <= MAX_SEED for s in seeds) and max(seeds) >= 2**64
    script = Script(["q", "n"])
    assert play(["--vs", "random", "--seed", str(MAX_SEED)], script) == 1
    assert f"seed {MAX_SEED}" in script.out.getvalue().splitlines()[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seat", "2"], "--seat 2 is not a seat"),
        (["--players", "4", "--vs", "random,last"], "names 2 bots; give one name, or 3"),
        (["--vs", "nobody"], "unknown agent 'nobody'"),
        (["--players", "3", "--partnerships"], "partnerships=True needs num_players=4"),
    ],
)
def test_bad_options_exit_2(args, message, capsys):
    assert play(args, Script([])) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("answer", ["n", "No", "-"])
def test_a_no_at_the_save_prompt_saves_nothing(tmp_path, monkeypatch, answer):
    monkeypatch.chdir(tmp_path)
    script = Script(["1", "q", answer])
    assert play(["--vs", "random", "--seed", "3"], script) == 1
    assert list(tmp_path.iterdir()) == []
    assert "Record written" not in script.out.getvalue()


def test_each_listed_move_shows_the_end_total_and_points_it_makes():
    """The move list tells what a placement makes, as placing the tile on a copy of the layout does."""
    import random

    from agents.play import TerminalMatch
    from allfives_env.core import DRAW, State, make_rules

    chooser = random.Random(0)
    shown = 0
    for seed in range(3):
        state = State(make_rules("fives", 3), seed=seed)
        match = TerminalMatch(state, 0, {}, {1: "random", 2: "random"}, read=lambda prompt: "q", out=io.StringIO())
        while not state.finished:
            for action in state.legal_actions():
                text = match.describe(action)
                if action < DRAW:
                    after = state.layout.copy()
                    after.place(action >> 2, action & 3)
                    total = after.end_total
                    assert f"-> end total {total}" in text
                    assert (f", scores {total}" in text) == (total > 0 and total % 5 == 0)
                    shown += 1
            state.apply(chooser.choice(state.legal_actions()))
    assert shown > 300
