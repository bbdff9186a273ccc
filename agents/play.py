"""Play All Fives in the terminal against bots: ``python -m agents.play --vs heuristic``.

One seat is the person at the keyboard; every other seat is a bot (in
partnerships the partner is a bot too). Each turn shows the layout, the
scores, the own hand and the legal moves numbered; every action is echoed as
it happens (bots' draws and passes included), and each round's result is
announced. A move is typed as its number or its text (``5-3 E``, or a bare
tile where it fits one end only); ``q``, the end of the input (Ctrl-D) and
Ctrl-C all stop the match alike: an offer to save it, then exit status 1. A
forced move (a lone draw, pass or placement) is played at once with a
message. Input and output are injectable so tests can drive a whole match.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TextIO

from allfives_env.core import DRAW, PASS, TILE_TEXT, Rules, State, fresh_seed, make_rules, mask_to_tiles
from allfives_env.core.numbers import whole_number
from allfives_env.core.record import exact, write_record
from allfives_env.core.scoring import placement_points
from allfives_env.views.text import render_text

from .base import Agent
from .factory import AgentFactory, default_agent_factory
from .seeding import derive_seed

Reader = Callable[[str], str]

HELP = "Type a move's number or its text (such as '5-3 E', 'draw'), 'h' to show the table again, or 'q' to quit."


class QuitMatch(Exception):
    """The person stopped the match before its end: ``q``, the end of the input (Ctrl-D) or Ctrl-C, all alike."""


# -- one match ---------------------------------------------------------------------


class TerminalMatch:
    """A match between one person (``human`` seat) and bots, shown and read through ``read`` and ``out``."""

    def __init__(self, state: State, human: int, bots: dict[int, Agent], specs: dict[int, str], read: Reader, out):
        self.state = state
        self.rules: Rules = state.rules
        self.human = human
        self.bots = bots
        self.read = read
        self.out = out
        partner = (human + 2) % 4 if self.rules.partnerships else None
        self.seat_names = []
        for seat in range(self.rules.num_players):
            if seat == human:
                self.seat_names.append("you")
            else:
                role = "partner, " if seat == partner else ""
                self.seat_names.append(f"seat {seat} ({role}{specs[seat]})")

    # -- names and output --

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def side_name(self, side: int) -> str:
        seats = self.rules.seats_of(side)
        if len(seats) == 1:
            return self.seat_names[seats[0]]
        mine = self.rules.side_of[self.human] == side
        return f"{'your side' if mine else 'opponents'} (seats {'+'.join(map(str, seats))})"

    def scores_text(self) -> str:
        return ", ".join(f"{self.side_name(s)} {exact(x)}" for s, x in enumerate(self.state.scores))

    def show_table(self) -> None:
        state, seat = self.state, self.human
        self.say()
        self.say(f"=== Your turn (seat {seat}) ===")
        self.say(render_text(state, hands=False, names=self.seat_names))
        self.say("Your hand: " + " ".join(TILE_TEXT[t] for t in mask_to_tiles(state.hands[seat])))
        if state.drawn >= 0:
            self.say(f"You drew {TILE_TEXT[state.drawn]}; it fits, so it must be placed now.")
        self.say("Your moves:")
        for number, action in enumerate(state.legal_actions(), 1):
            self.say(f"  {number}) {self.describe(action)}")

    def describe(self, action: int) -> str:
        """An action's text with what it does: the end total it makes and the points it scores."""
        state = self.state
        if action == DRAW:
            return f"draw (boneyard: {state.boneyard_left} left)"
        if action == PASS:
            return "pass"
        total = state.layout.end_total_after(action >> 2, action & 3)
        points = placement_points(total)
        gain = f", scores {points}" if points else ""
        return f"{state.action_text(action)}  -> end total {total}{gain}"

    # -- the loop --

    def run(self) -> State:
        """Play to the end of the match; raise QuitMatch if the person quits."""
        state = self.state
        self.say(f"Scores start at 0; first to {self.rules.target} wins. You are seat {self.human}.")
        while not state.finished:
            seat = state.to_act
            legal = state.legal_actions()
            if seat == self.human:
                if len(legal) == 1:
                    self.take(seat, legal[0], forced=True)
                    continue
                self.show_table()
                action = self.ask(legal)
            else:
                action = self.bots[seat].act(state.view(seat))
            self.take(seat, action)
        self.say()
        winners = " and ".join(self.side_name(s) for s in state.winners)
        self.say(f"Match over. Final scores: {self.scores_text()}. Winner: {winners}.")
        return state

    def ask(self, legal: list[int]) -> int:
        while True:
            try:
                text = self.read("Your move: ").strip()
            except (EOFError, KeyboardInterrupt):
                raise QuitMatch("input ended or interrupted") from None
            choice = self.parse(text, legal)
            if choice is not None:
                return choice

    def parse(self, text: str, legal: list[int]) -> int | None:
        """The chosen action, or None after saying what was wrong."""
        count = len(legal)
        if not text:
            self.say(HELP)
            return None
        if text.lower() in ("q", "quit", "exit"):
            raise QuitMatch("quit")
        if text.lower() in ("h", "help", "?"):
            self.show_table()
            return None
        number = whole_number(text)
        if number is not None:
            if 1 <= number <= count:
                return legal[number - 1]
            self.say(f"There is no move {number}: choose a number from 1 to {count}.")
            return None
        try:
            action = self.state.parse_action(text)
        except ValueError as err:
            self.say(f"Cannot read {text!r}: {err}. {HELP}")
            return None
        if action not in legal:
            self.say(f"{text!r} is not a legal move now; choose one of the {count} moves listed (1 to {count}).")
            return None
        return action

    def take(self, seat: int, action: int, forced: bool = False) -> None:
        state = self.state
        drawn = state.boneyard[state.bone_pos] if action == DRAW else -1
        what = self.describe(action) if action not in (DRAW, PASS) else state.action_text(action)
        rounds = len(state.past)
        state.apply(action)
        if seat == self.human:
            line = f"You play {what}" if action not in (DRAW, PASS) else f"You {what}"
            if drawn >= 0:
                line += f": {TILE_TEXT[drawn]}"
            self.say(line + (" (your only move, played for you)" if forced else ""))
        else:
            verb = {DRAW: "draws", PASS: "passes"}.get(action, f"plays {what}")
            self.say(f"{self.seat_names[seat]} {verb}")
        if len(state.past) > rounds:
            self.round_over(state.past[-1])

    def round_over(self, log) -> None:
        result, names = log.result, self.side_name
        if result.end == "target":
            how = f"{names(result.winner)} reached the target"
        elif result.winner is not None:
            who = self.seat_names[result.domino_seat] if result.domino_seat is not None else names(result.winner)
            how = f"{result.end} by {who}; award {exact(result.award)} to {names(result.winner)}"
        elif result.split:
            how = f"block; {' and '.join(names(s) for s in result.split)} tie low and split {exact(result.award)}"
        else:
            how = f"{result.end}; tied, no award"
        pips = ", ".join(f"{self.seat_names[s]} {p}" for s, p in enumerate(result.seat_pips))
        self.say(f"--- Round {len(self.state.past)} over: {how}. Pips left: {pips}.")
        self.say(f"--- Scores: {self.scores_text()}")


# -- command line ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agents.play", description="Play All Fives against bots.")
    parser.add_argument(
        "--vs", default="heuristic", help="the bots: one spec for every other seat, or a comma list, one per other "
        "seat in seat order (default heuristic)"
    )  # fmt: skip
    parser.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    parser.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--target", type=int, default=None, help="points to win (default: the rule set's)")
    parser.add_argument("--opening", default=None, choices=["winners_choice", "descending"], help="fives only")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the deals' seed: it fixes every hand, so whoever knows it knows the bots' tiles (default: a fresh "
        "128-bit seed, printed when the match stops)",
    )
    parser.add_argument("--save", metavar="FILE", help="write the match record here (replay: python -m allfives_env)")
    return parser


def main(
    argv: list[str] | None = None,
    read: Reader = input,
    out: TextIO | None = None,
    agent_factory: AgentFactory | None = None,
) -> int:
    out = out if out is not None else sys.stdout
    args = _parser().parse_args(argv)
    try:
        rules = make_rules(args.rules, args.players, args.partnerships, args.target, args.opening)
        if not 0 <= args.seat < rules.num_players:
            raise ValueError(f"--seat {args.seat} is not a seat; allowed: 0..{rules.num_players - 1}")
        others = [s for s in range(rules.num_players) if s != args.seat]
        specs = [s.strip() for s in args.vs.split(",")]
        if len(specs) == 1:
            specs *= len(others)
        if len(specs) != len(others):
            raise ValueError(
                f"--vs {args.vs!r} names {len(specs)} bots; give one name, or {len(others)} (one per other seat)"
            )
        seed = args.seed if args.seed is not None else fresh_seed()
        factory = agent_factory or default_agent_factory
        bots = {}
        for seat, spec in zip(others, specs, strict=True):
            bots[seat] = factory(spec, derive_seed(seed, "bot", seat))
            bots[seat].reset(derive_seed(seed, "match", seat))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    state = State(rules, seed=seed)
    setup = f"{rules.rules}, {rules.num_players} players{', partnerships' if rules.partnerships else ''}"
    # The seed fixes every deal, so a fresh one is shown only once the match stops: until then it would tell
    # the person every hand. A seed the person chose is theirs to know.
    print(f"All Fives ({setup}){f', seed {seed}' if args.seed is not None else ''}.", file=out)
    replay_hint = f"This match's seed {seed} deals it again: --seed {seed}."
    match = TerminalMatch(state, args.seat, bots, dict(zip(others, specs, strict=True)), read, out)
    seat_agents = ["human" if s == args.seat else match_spec for s, match_spec in _seat_specs(others, specs, rules)]
    try:
        match.run()
    except QuitMatch:
        # q, Ctrl-D and Ctrl-C stop alike: the save question (whose default is --save's file, taken when the
        # input has ended), then exit status 1, which tells a script the match did not reach its end.
        print(f"\nStopped in round {state.round_index + 1}. Scores: {match.scores_text()}. {replay_hint}", file=out)
        path = _ask_save(read, out, args.save)
        if path:
            _save(state, path, seed, seat_agents, out)
        return 1
    print(replay_hint, file=out)
    if args.save:
        _save(state, args.save, seed, seat_agents, out)
    return 0


def _seat_specs(others: list[int], specs: list[str], rules: Rules) -> list[tuple[int, str]]:
    by_seat = dict(zip(others, specs, strict=True))
    return [(s, by_seat.get(s, "human")) for s in range(rules.num_players)]


def _ask_save(read: Reader, out, default: str | None) -> str | None:
    hint = f" [Enter: {default}; 'n': don't save]" if default else " (Enter or 'n': don't save)"
    try:
        answer = read(f"Save the unfinished match? File name{hint}: ").strip()
    except (EOFError, KeyboardInterrupt):
        return default
    # A yes/no answer is what people type at such a prompt: never take it for a file name.
    if answer.lower() in ("-", "n", "no"):
        return None
    if answer.lower() in ("y", "yes"):
        return default or "allfives-match.json"
    return answer or default


def _save(state: State, path: str, seed: int, seat_agents: list[str], out) -> None:
    try:
        write_record(state, path, seed=seed, agents=seat_agents)
    except OSError as err:
        print(f"Could not write {path}: {err.strerror}", file=out)
        return
    print(f"Record written to {path}; replay it with: python -m allfives_env replay {path}", file=out)


if __name__ == "__main__":
    sys.exit(main())
