"""The trained policy as an agent: ``checkpoint:PATH`` and ``trained`` in the harness and terminal play.

It reads the seat's view through the environments' observation contract (the
observation of :func:`~allfives_env.views.encode_observation` and the rows of
:func:`~allfives_env.views.action_features.action_features`), exactly what
``allfives_env.env(action_features=True)`` hands any policy, scores the legal
actions with the checkpoint's actor and plays the best one (the lowest action
id on a tie), or samples from the softmax when ``sample=True``. Only legal
actions can come out: the network scores the legal rows and nothing else.
``trained`` (:class:`TrainedAgent`) plays, at each table, the shipped
checkpoint trained there.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from allfives_env.core import Rules, SeatView
from allfives_env.views.action_features import action_features
from allfives_env.views.observation import encode_observation

from .base import Agent
from .policy_net import NumpyActor, net_from_checkpoint, read_checkpoint

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
#: The checkpoint shipped with the package (two-player pagat): configs/strong.yaml, the default recipe with a wider
#: network and more labels.
DEFAULT_CHECKPOINT = CHECKPOINTS / "default.pt"
#: The other shipped checkpoints, by the table they were trained at: (rule set, players, partnerships).
SHIPPED = {("fives", 3, False): "fives3.pt", ("pagat", 4, True): "pagat4_partners.pt"}


def shipped_checkpoint(rules: Rules, directory: Path | None = None) -> Path:
    """The shipped checkpoint trained at this table, or ``default.pt`` where none was; with ``directory``, the file
    of that name there instead (a set of earlier policies laid out as the shipped ones)."""
    name = SHIPPED.get((rules.rules, rules.num_players, rules.partnerships))
    if directory is None:
        directory, default = CHECKPOINTS, DEFAULT_CHECKPOINT
    else:
        default = directory / DEFAULT_CHECKPOINT.name
    return directory / name if name is not None and (directory / name).is_file() else default


class PolicyAgent(Agent):
    """Plays the argmax (or, with ``sample=True``, a softmax sample) of a trained actor."""

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False) -> None:
        super().__init__(seed)
        self.path = Path(path)
        self.sample = sample
        data = read_checkpoint(self.path)
        self.actor = NumpyActor(net_from_checkpoint(data, self.path))
        self.trained_steps = int(data.get("steps", 0))
        self.name = f"checkpoint:{self.path.name}"

    def legal_logits(self, view: SeatView) -> tuple[list[int], list[float]]:
        """The legal actions in id order (the mask's order) and the actor's logit of each."""
        legal = sorted(view.legal)
        rows = action_features(view)[legal]
        return legal, self.actor.logits(encode_observation(view), rows).tolist()

    def act(self, view: SeatView) -> int:
        if len(view.legal) == 1:
            return view.legal[0]
        legal, logits = self.legal_logits(view)
        if not self.sample:
            return legal[max(range(len(legal)), key=logits.__getitem__)]
        top = max(logits)
        weights = [math.exp(x - top) for x in logits]
        return self.rng.choices(legal, weights=weights)[0]


class TrainedAgent(Agent):
    """``trained``: at each table, the shipped policy trained there (:func:`shipped_checkpoint`)."""

    name = "trained"

    def __init__(self, seed: int | None = None, sample: bool = False) -> None:
        super().__init__(seed)
        self.sample = sample
        self.policies: dict[Path, PolicyAgent] = {}
        self._load(DEFAULT_CHECKPOINT)  # an unreadable shipped file is refused now, not at the first move

    def policy_for(self, rules: Rules) -> PolicyAgent:
        """The shipped policy for this table."""
        return self._load(shipped_checkpoint(rules))

    def _load(self, path: Path) -> PolicyAgent:
        policy = self.policies.get(path)
        if policy is None:
            policy = self.policies[path] = PolicyAgent(path, sample=self.sample)
            policy.rng = self.rng  # one stream, reseeded by reset()
        return policy

    def legal_logits(self, view: SeatView) -> tuple[list[int], list[float]]:
        return self.policy_for(view.rules).legal_logits(view)

    def act(self, view: SeatView) -> int:
        return self.policy_for(view.rules).act(view)


def load_policy_agent(
    path: str | os.PathLike | None, seed: int | None = None, sample: bool = False
) -> PolicyAgent | TrainedAgent:
    """The agent of a checkpoint file, or ``trained`` (the shipped policies) when ``path`` is None."""
    return TrainedAgent(seed=seed, sample=sample) if path is None else PolicyAgent(path, seed=seed, sample=sample)
