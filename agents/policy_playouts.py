"""Play-outs by a policy at every seat, each seat from its own view, on the batched engine.

The search's fast rollout policies see every tile of the deal, so a
play-out under them is a game no real seat plays. Here the rest of the
round is played by a trained policy at every seat, each reading only its own
observation: the table as real players would go on. Policy iteration labels
actions this way on the true deals (:mod:`allfives_train.iteration`); the
guided search does it on the deals it draws (:class:`NetworkPlayouts`).
Policy iteration may seat a hand-written bot on one side of a table instead
(:class:`SeatBots`), chosen for many tables at once as the policy is.

An action's value is the search's: its seat's side's points over the rest of
the round minus the others', plus :data:`~agents.rollout.WIN_BONUS` for a
match won inside the round (minus it for one lost), and with a match-equity
table the value of the scores a round ends with (:mod:`agents.match_equity`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import ThreadpoolController

from allfives_env.core import SeatView
from allfives_env.vector import VectorEnv
from allfives_env.vector.convert import view_record
from allfives_env.vector.env import VectorStep

from .base import Agent
from .batched import choose
from .match_equity import equity_bonus
from .policy_net import NumpyActor
from .rollout import NO_EQUITY, WIN_BONUS

#: What picks the policy's move on some tables of an engine's last outputs: ``favourites(step, tables)``.
Favourites = Callable[[VectorStep, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SeatBots:
    """Hand-written bots that play some seats of an engine's tables in place of the policy."""

    seats: np.ndarray  # [tables, players] bool: True where a bot plays that seat of that table
    agents: list[Agent | None]  # the bot of each table (None where it has none)


def play_outs(
    favourites: Favourites,
    env: VectorEnv,
    owners: np.ndarray,
    actions: np.ndarray,
    equity: np.ndarray = NO_EQUITY,
    bots: SeatBots | None = None,
) -> np.ndarray:
    """Each ``actions[j]`` played on a copy of table ``owners[j]``, then the round out with ``favourites`` at every
    seat (but those ``bots`` play, on the tables where they sit): the value of each for the seat that took it
    (float64), a round's end short of the target valued by the ``equity`` table where it is not empty."""
    copies, step = env.branch(owners, episode="round")
    seats = step.current_player.copy()
    side_of = np.array(env.game_rules.side_of)
    target = env.game_rules.target
    points = np.zeros(len(owners))  # the seat's zero-sum points rewards, in units of the target
    bonus = np.zeros(len(owners))
    ids = np.arange(len(owners))
    step = copies.step(actions)
    while True:
        points[ids] += step.rewards[np.arange(ids.size), seats[ids]]
        for r in np.flatnonzero(step.terminated).tolist():
            scores = step.final_scores[r]
            side = side_of[seats[ids[r]]]
            if scores.max() >= target:  # the match was decided inside the round
                winners = np.flatnonzero(scores == scores.max())
                bonus[ids[r]] = WIN_BONUS / len(winners) if side in winners else -WIN_BONUS
            elif equity.size:
                bonus[ids[r]] = equity_bonus(equity, target, scores.tolist(), side)
        going = np.flatnonzero(~step.terminated)
        if not going.size:
            return points * target + bonus
        if going.size < ids.size:
            copies.keep(going)
            step = step._replace(**{f: v[going] for f, v in step._asdict().items() if v is not None})
            ids = ids[going]
        moves = step.action_mask.argmax(1)  # a lone legal action
        tables = np.flatnonzero(step.action_mask.sum(1) > 1)
        if tables.size and bots is not None:
            tables_of = owners[ids[tables]]
            by_bot = bots.seats[tables_of, step.current_player[tables]]
            if by_bot.any():
                moves[tables[by_bot]] = choose(copies, tables[by_bot], [bots.agents[t] for t in tables_of[by_bot]])
            tables = tables[~by_bot]
        if tables.size:
            moves[tables] = favourites(step, tables)
        step = copies.step(moves)


def deal_tables(view: SeatView, hands: np.ndarray, boneyards: np.ndarray) -> np.ndarray:
    """One table record per deal of the view's hidden tiles: hand masks [D, 4] (the viewer's own included) and
    boneyards [D, B] in draw order, as :class:`agents.belief.Dealer` and the search draw them."""
    rules = view.rules
    n = rules.num_players
    records = np.repeat(view_record(view), len(hands))
    records["hands"][:, :n] = hands[:, :n]
    left = view.boneyard_left
    if left:
        start = n * rules.hand_size + rules.boneyard_size - left
        records["deal"][:, start : start + left] = boneyards[:, :left]
    return records


class NetworkPlayouts:
    """Values of a view's candidate actions over deals of its hidden tiles, the round played out by a policy."""

    def __init__(self) -> None:
        self.engines: dict[tuple, VectorEnv] = {}  # one engine a table's rules, reloaded at each call
        # The products of a batch are small: BLAS threads would cost more than they give (5x the CPU time here),
        # and take the core of another process, such as a second evaluation worker.
        self.blas = ThreadpoolController()

    def values(
        self,
        actor: NumpyActor,
        view: SeatView,
        hands: np.ndarray,
        boneyards: np.ndarray,
        actions: list[int],
        equity: np.ndarray = NO_EQUITY,
    ) -> np.ndarray:
        """[D, A]: the value of ``actions[a]`` on deal ``d`` for the view's seat, ``actor`` at every seat (with the
        ``equity`` table's value of a round's end, where it is not empty)."""
        options = view.rules.as_dict()
        key = tuple(sorted(options.items()))
        env = self.engines.get(key)
        if env is None:
            env = self.engines[key] = VectorEnv(1, **options, reward="points", auto_forced=True, action_features=True)
        env.load(deal_tables(view, hands, boneyards))

        def favourites(step: VectorStep, tables: np.ndarray) -> np.ndarray:
            return actor.favourites(step.observation[tables], step.action_features[tables], step.action_mask[tables])

        owners = np.repeat(np.arange(len(hands)), len(actions))
        with self.blas.limit(limits=1, user_api="blas"):
            actions_played = np.tile(np.asarray(actions, dtype=np.int64), len(hands))
            values = play_outs(favourites, env, owners, actions_played, equity)
        return values.reshape(len(hands), len(actions))
