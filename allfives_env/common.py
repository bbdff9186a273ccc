"""What the PettingZoo and the Gymnasium environments share, so that both say and do the same.

Both take the same game keywords, checked here in one order with one set of
messages; both build the same observation (a ``Dict`` of the seat's
``observation`` vector, its ``action_mask`` and, when asked, its
``action_features`` rows); both read the same reset options, ignoring an
unknown key with a warning that names it and the allowed keys, and refusing
a bad ``deal`` with a :class:`~allfives_env.core.deal.DealError` (a
``ValueError``); both pay
the same rewards, which the core works out; both draw the table the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .core import NUM_ACTIONS, Rules, State, make_rules
from .core.deal import Deal, DealError, check_deal, deal_from_json
from .core.rules import shown
from .core.scoring import match_rewards, zero_sum_gain
from .options import ResetNeeded, choice, flag
from .views.action_features import ACTION_FEATURES_SHAPE, action_features_high, encode_seat_actions
from .views.observation import action_mask, encode_seat, observation_high
from .views.text import render_text

REWARD_MODES = ("win_loss", "points")
EPISODES = ("match", "round")
RENDER_MODES = ("ansi", "human", "rgb_array")


class ResetOptionError(ValueError):
    """Reset options that are not a dict, or a known option with a value it refuses; names the key and what is allowed."""


class UnknownResetOptionWarning(UserWarning):
    """A reset option the environment does not know, ignored.

    Not an error: PettingZoo's API asks every environment to accept any
    options dict (its own API test resets with ``{"options": 1}``). Turn it
    into one with ``warnings.simplefilter("error", UnknownResetOptionWarning)``
    to catch a mistyped key.
    """


@dataclass(frozen=True)
class GameSettings:
    """The checked keywords both environments take."""

    rules: Rules
    reward: str
    episode: str
    auto_forced: bool
    history: bool
    action_features: bool
    render_mode: str | None


def game_settings(
    num_players: Any,
    rules: Any,
    partnerships: Any,
    target: Any,
    opening: Any,
    reward: Any,
    episode: Any,
    auto_forced: Any,
    history: Any,
    action_features: Any,
    render_mode: Any,
) -> GameSettings:
    """Check the shared keywords in one order; a ValueError names the first bad one and what is allowed."""
    table = make_rules(rules, num_players, partnerships, target, opening)
    reward = choice("reward", reward, REWARD_MODES)
    episode = choice("episode", episode, EPISODES)
    auto_forced = flag("auto_forced", auto_forced)
    history = flag("history", history)
    action_features = flag("action_features", action_features)
    if render_mode is not None:
        choice("render_mode", render_mode, RENDER_MODES)
    return GameSettings(table, reward, episode, auto_forced, history, action_features, render_mode)


def observation_space(settings: GameSettings) -> spaces.Dict:
    """The ``Dict`` space of one seat's observation."""
    space = spaces.Dict(
        {
            "observation": spaces.Box(0, observation_high(settings.rules, settings.history), dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )
    if settings.action_features:
        space["action_features"] = spaces.Box(0, action_features_high(), dtype=np.int8)
    return space


def observe(state: State, seat: int, settings: GameSettings, legal: Sequence[int]) -> dict[str, np.ndarray]:
    """One seat's observation: fresh arrays, never changed afterwards.

    ``legal`` holds the seat's legal actions, empty when it is not to act or
    the episode is over; then its action feature rows are all zero.
    """
    obs = {"observation": encode_seat(state, seat, settings.history), "action_mask": action_mask(legal)}
    if settings.action_features:
        obs["action_features"] = encode_seat_actions(state, seat) if legal else np.zeros(ACTION_FEATURES_SHAPE, np.int8)
    return obs


def reset_options(options: Any, rules: Rules, allowed: tuple[str, ...]) -> dict[str, Any]:
    """The reset options, checked before anything changes: the keys in ``allowed``, ``"deal"`` as a checked Deal.

    A key outside ``allowed`` is ignored with an :class:`UnknownResetOptionWarning`
    naming it and the allowed keys; options that are not a dict raise
    :class:`ResetOptionError`, a bad deal :class:`~allfives_env.core.deal.DealError`
    (both ``ValueError``).
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ResetOptionError(
            f"options={shown(options)} is not allowed; allowed: None or a dict with the keys {_listed(allowed)}"
        )
    checked = {}
    for key, value in options.items():
        if key in allowed:
            checked[key] = value
        else:
            message = f"reset option {shown(key)} is not known and is ignored; allowed: {_listed(allowed)}"
            warnings.warn(message, UnknownResetOptionWarning, stacklevel=3)
    if options.get("deal") is not None:
        checked["deal"] = deal_option(options["deal"], rules)
    return checked


def deal_option(value: Any, rules: Rules) -> Deal:
    """The first round's deal as the ``deal`` reset option gives it; DealError says what the rules refuse."""
    try:
        deal = deal_from_json(value)
        check_deal(rules, deal, 0, None)
    except DealError as err:
        raise DealError(f"options['deal']: {err}") from None
    return deal


def _listed(keys: tuple[str, ...]) -> str:
    return ", ".join(map(repr, keys))


def episode_winners(state: State, episode: str) -> tuple[int, ...]:
    """The sides that won the episode: the match's winners, or the single round's winner (none on a tie)."""
    if episode == "match":
        return state.winners
    winner = state.past[0].result.winner
    return (winner,) if winner is not None else ()


def points_rewards(rules: Rules, before: Sequence, after: Sequence) -> list[float]:
    """Per side, the zero-sum points reward between two score lists, over the target."""
    gains = [now - then for now, then in zip(after, before, strict=True)]
    return [float(zero_sum_gain(gains, side) / rules.target) for side in range(rules.num_sides)]


def win_loss_rewards(rules: Rules, winners: Sequence[int]) -> tuple[float, ...]:
    """Per side, what the episode's end pays: +1 to a lone winner, -1 to the others, 0 to all otherwise."""
    return match_rewards(rules, winners)


def render(state: State | None, mode: str | None, names: Sequence[str]) -> str | np.ndarray | None:
    """The table as text (``ansi``; ``human`` prints it with every hand) or as an RGB array."""
    if mode is None:
        gymnasium.logger.warn("render() was called without a render_mode; pass render_mode= to the constructor")
        return None
    if state is None:
        raise ResetNeeded("render()")
    if mode == "rgb_array":
        from .views.image import render_image  # pillow is loaded only when images are asked for

        return render_image(state, list(names))
    text = render_text(state, hands=mode == "human", names=list(names))
    if mode == "human":
        print(text + "\n", flush=True)
        return None
    return text
