"""Games in progress: one person against bots (play), or bots alone (watch), and the store that keeps them.

A game's answer is built from what one seat may know: in play, the person's
:class:`~allfives_env.core.SeatView` and the rounds already finished (the
rules show every hand when a round ends); in watch, the public view, plus
every hand only when the watcher asks for them. Every change goes through
``State.apply`` under the game's lock, and bumps ``version``; a move that
names an older version is refused as stale, so a double click or a second tab
can never play twice.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass, field

from agents.base import Agent
from agents.registry import make_agent, parse_agent_spec, search_name
from allfives_env.core import DRAW, MAX_SEED, PASS, TILE_TEXT, IllegalActionError, Rules, State, fresh_seed, make_rules
from allfives_env.core.record import exact, to_record
from allfives_env.core.scoring import placement_points

from .payload import layout_json, round_result_json, rules_json, tiles_text

MODES = ("play", "watch")
#: The bot specs a page may ask for, and ``search[:belief][:equity][:N]`` with 1 <= N <= MAX_SEARCH. Paths are
#: never taken from a page.
BOT_CHOICES = ("random", "greedy", "heuristic", "search", "trained")
MAX_SEARCH = 2000
RECENT_EVENTS = 40
LOG = logging.getLogger("allfives_web")


class GameError(ValueError):
    """Bad input for a game: the answer is a 4xx with this message, and nothing changed."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def check_bot_spec(spec, extra: dict[str, str]) -> str:
    """The agent spec to build for a page's bot choice; GameError names what is allowed."""
    allowed = [*BOT_CHOICES, "search[:belief][:equity][:N]", *sorted(extra)]
    if isinstance(spec, str):
        name = spec.strip()
        if name in extra:
            return extra[name]
        if name in BOT_CHOICES:
            return name
        try:
            parsed = parse_agent_spec(name)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.kind == "search" and 1 <= (parsed.simulations or 1) <= MAX_SEARCH:
            name = search_name(parsed)
            return f"{name}:{parsed.simulations}" if parsed.simulations else name
    raise GameError(f"bot {spec!r} is not allowed; allowed: {', '.join(allowed)} (N from 1 to {MAX_SEARCH})")


def _int_field(body: dict, key: str, default, low: int, high: int):
    value = body.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise GameError(f"{key}={value!r} is not allowed; allowed: a whole number from {low} to {high}")
    return value


@dataclass
class Game:
    """One match on the server, with its bots and its public story (``events``)."""

    id: str
    mode: str
    state: State
    human: int | None
    specs: list[str]  # per seat: the bot's spec, or "human"
    bots: dict[int, Agent]
    seed: int
    events: list[dict] = field(default_factory=list)
    round_results: list[dict] = field(default_factory=list)  # each finished round, as the page shows it
    version: int = 0
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def rules(self) -> Rules:
        return self.state.rules

    # -- changing the game (callers hold ``lock``) --------------------------------

    def apply(self, action: int, forced: bool = False) -> None:
        """Take the acting seat's action and write it into the story; IllegalActionError leaves all as it was."""
        state = self.state
        seat = state.to_act
        if action not in state.legal_actions():
            state.apply(action)  # the core refuses it with its message (IllegalActionError), changing nothing
        event = {"n": len(self.events) + 1, "round": state.round_index + 1, "seat": seat, "forced": forced}
        event["text"] = state.action_text(action)
        event["drew"] = TILE_TEXT[state.boneyard[state.bone_pos]] if action == DRAW else None
        if action in (DRAW, PASS):
            event["points"], event["end_total"] = 0, None
        else:
            total = state.layout.end_total_after(action >> 2, action & 3)
            event["points"], event["end_total"] = placement_points(total), total
        rounds = len(state.past)
        state.apply(action)
        event["round_over"] = len(state.past) > rounds
        if event["round_over"]:  # written once: every later answer carries the finished rounds
            index = len(state.past) - 1
            result = round_result_json(self.rules, index, state.past[index], state.scores)
            self.round_results.append({**result, "event": event["n"]})
        self.events.append(event)
        self.version += 1

    def play_bots(self) -> None:
        """Play on until the person must choose: bots' turns, and the person's forced draws and passes."""
        state = self.state
        while not state.finished:
            seat = state.to_act
            if seat == self.human:
                legal = state.legal_actions()
                if legal in ([DRAW], [PASS]):
                    self.apply(legal[0], forced=True)
                    continue
                return
            self.apply(self.bots[seat].act(state.view(seat)))

    def step(self) -> None:
        """Watch: one action of the seat to act."""
        if not self.state.finished:
            seat = self.state.to_act
            self.apply(self.bots[seat].act(self.state.view(seat)))

    # -- what a seat may see -------------------------------------------------------

    def payload(self, show_hands: bool = False, since: int | None = None) -> dict:
        """The game as the page sees it: the person's seat view in play, the public table in watch.

        With ``since`` (a version the page has seen), ``events`` and ``rounds`` hold only what happened
        after it, so an answer stays small however long the match; without it, the last events and
        every finished round.
        """
        state, rules = self.state, self.rules
        viewer = self.human
        view = state.view(viewer if viewer is not None else state.to_act)
        seats = []
        for seat in range(rules.num_players):
            seats.append(
                {
                    "seat": seat,
                    "name": self.seat_name(seat),
                    "spec": self.specs[seat],
                    "side": rules.side_of[seat],
                    "tiles": view.hand_counts[seat],
                }
            )
        answer = {
            "id": self.id,
            "mode": self.mode,
            "version": self.version,
            "rules": rules_json(rules),
            "human": viewer,
            "seats": seats,
            "scores": [exact(s) for s in view.scores],
            "target": exact(rules.target),
            "round": view.round_index + 1,
            "leader": view.leader,
            "to_act": None if state.finished else view.to_act,
            "boneyard": view.boneyard_left,
            "layout": layout_json(view.layout),
            "finished": state.finished,
            "winners": list(state.winners),
            "since": since,
            "rounds": [r for r in self.round_results if since is None or r["event"] > since],
            "events": self._events(show_hands, since),
            "hand": None,
            "hands": None,
            "drawn": None,
            "legal": [],
        }
        if viewer is not None:
            answer["hand"] = tiles_text(view.hand)
            answer["drawn"] = TILE_TEXT[view.drawn] if view.drawn >= 0 else None
            answer["legal"] = [self._legal_json(a) for a in view.legal]
        elif show_hands:
            answer["hands"] = [tiles_text(h) for h in state.hands]
        return answer

    def _legal_json(self, action: int) -> dict:
        state = self.state
        entry = {"action": action, "text": state.action_text(action), "tile": None, "slot": None}
        if action not in (DRAW, PASS):
            total = state.layout.end_total_after(action >> 2, action & 3)
            entry.update(
                tile=TILE_TEXT[action >> 2],
                slot="WENS"[action & 3] if not state.layout.empty else None,
                end_total=total,
                points=placement_points(total),
            )
        return entry

    def _events(self, show_hands: bool, since: int | None) -> list[dict]:
        out = []
        for event in self.events[-RECENT_EVENTS:] if since is None else self.events[since:]:
            if event["drew"] is not None and not (event["seat"] == self.human or (self.human is None and show_hands)):
                event = {**event, "drew": None}
            out.append(event)
        return out

    def seat_name(self, seat: int) -> str:
        if seat == self.human:
            return "You"
        partner = self.human is not None and self.rules.partnerships and seat == (self.human + 2) % 4
        return f"{'Partner' if partner else 'Seat ' + str(seat)} ({self.specs[seat]})"

    def record(self) -> dict:
        return to_record(self.state, seed=self.seed, agents=list(self.specs))


def parse_new_game(body, extra_bots: dict[str, str]) -> tuple[str, Rules, int | None, list[str], int]:
    """Check a new game's settings: (mode, rules, human seat, spec per seat, seed); GameError on the first fault."""
    if not isinstance(body, dict):
        raise GameError("the body must be a JSON object with mode, rules, players, bots ...")
    known = {"mode", "rules", "players", "partnerships", "target", "opening", "seat", "bots", "seed"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise GameError(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(known))}")
    mode = body.get("mode", "play")
    if mode not in MODES:
        raise GameError(f"mode={mode!r} is not allowed; allowed: 'play' or 'watch'")
    try:
        rules = make_rules(
            body.get("rules", "pagat"),
            body.get("players", 2),
            body.get("partnerships"),
            body.get("target"),
            body.get("opening"),
        )
    except (ValueError, TypeError) as err:
        raise GameError(str(err)) from None
    n = rules.num_players
    human = _int_field(body, "seat", 0, 0, n - 1) if mode == "play" else None
    if mode == "play" and human is None:
        raise GameError(f"seat is required in play; allowed: 0 to {n - 1}")
    bots = body.get("bots", "heuristic")
    if isinstance(bots, str):
        bots = [bots] * n
    if not isinstance(bots, list) or len(bots) != n:
        raise GameError(f"bots must be one bot name, or a list of {n} (one per seat; the person's seat is ignored)")
    specs = ["human" if seat == human else check_bot_spec(spec, extra_bots) for seat, spec in enumerate(bots)]
    seed = _int_field(body, "seed", None, 0, MAX_SEED)  # a chosen seed tells whoever knows it every deal
    if seed is None:
        seed = fresh_seed()
    return mode, rules, human, specs, seed


def new_game(body, extra_bots: dict[str, str]) -> Game:
    """A new game from a page's settings, its bots built and (in play) already moved up to the person's turn."""
    mode, rules, human, specs, seed = parse_new_game(body, extra_bots)
    bots = {}
    for seat, spec in enumerate(specs):
        if seat == human:
            continue
        try:
            bots[seat] = make_agent(spec, seed=seed * 8 + seat)
        except (ValueError, OSError, ImportError) as err:
            # The reason may name files on the server: it goes to the server's log, not to the page.
            LOG.warning("bot %r cannot be started: %s", spec, err)
            raise GameError(f"bot {spec!r} cannot be started on this server (the server's log says why)") from None
    game = Game(secrets.token_urlsafe(18), mode, State(rules, seed=seed), human, specs, bots, seed)
    if mode == "play":
        game.play_bots()
    return game


class GameStore:
    """Games by id; an idle game is dropped after ``idle_seconds``, and at most ``max_games`` live at once."""

    def __init__(self, idle_seconds: float = 1800.0, max_games: int = 2000) -> None:
        self.idle_seconds = idle_seconds
        self.max_games = max_games
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def add(self, game: Game) -> None:
        with self._lock:
            self._expire()
            if len(self._games) >= self.max_games:
                raise GameError(f"the server holds {self.max_games} games already; try again later", 503)
            self._games[game.id] = game

    def get(self, game_id: str) -> Game:
        with self._lock:
            self._expire()
            game = self._games.get(game_id)
        if game is None:
            raise GameError("no such game: it never existed or expired after being idle", 404)
        game.last_used = time.monotonic()
        return game

    def remove(self, game_id: str) -> None:
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise GameError("no such game: it never existed or expired after being idle", 404)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.idle_seconds
        for game_id in [g.id for g in self._games.values() if g.last_used < cutoff]:
            del self._games[game_id]


def take_move(game: Game, body) -> None:
    """Play the person's move named in ``body`` (``version`` and ``action``), then the bots up to the next choice."""
    if game.mode != "play":
        raise GameError("moves are made only in play games; a watch game advances with step", 409)
    if not isinstance(body, dict) or set(body) - {"version", "action"}:
        raise GameError("the body must be a JSON object with version and action (an action id)")
    _check_version(game, body)
    action = body.get("action")
    if isinstance(action, bool) or not isinstance(action, int):
        raise GameError(f"action={action!r} is not an action id; allowed: one of the legal actions' ids")
    state = game.state
    if state.finished:
        raise GameError("the match is over", 409)
    if state.to_act != game.human:
        raise GameError(f"it is seat {state.to_act}'s turn, not yours", 409)
    try:
        game.apply(action)
    except IllegalActionError as err:
        raise GameError(str(err)) from None
    game.play_bots()


def take_step(game: Game, body) -> None:
    """Watch: the next action, if ``body``'s version is current."""
    if game.mode != "watch":
        raise GameError("step is for watch games; in play, make your move", 409)
    if not isinstance(body, dict) or set(body) - {"version"}:
        raise GameError("the body must be a JSON object with version")
    _check_version(game, body)
    if game.state.finished:
        raise GameError("the match is over", 409)
    game.step()


def _check_version(game: Game, body: dict) -> None:
    version = body.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise GameError(f"version={version!r} is not allowed; allowed: the game's current version, {game.version}")
    if version != game.version:
        raise GameError(f"stale move: the game is at version {game.version}, not {version}; reload it", 409)
