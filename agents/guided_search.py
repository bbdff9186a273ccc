"""The search bot guided by a trained policy: ``search:trained``, ``search:checkpoint:PATH``.

Plain ``search`` spreads its rollouts evenly over every legal action, most
of which a decent player would never consider. Here the policy network
(read through the seat's own observation and action features, exactly what
the environments give that seat) first scores the legal actions; the search
keeps only the ``candidates`` most probable ones (4, or 6 with the network's
play-outs below; plus any other action the policy gives at least
``min_prior``), and spends the whole rollout budget on
them, so each kept candidate is compared over more deals of the hidden
tiles. The candidate with the best mean rollout outcome is played; a tie
goes to the policy's favourite. With ``prior_weight`` above 0, each mean
first gains that many points times the log of the candidate's probability,
so the rollouts must beat the policy's favourite by a margin to overrule it.
Rollouts use the search bot's fast ``guarded`` policy (a network forward pass
per step of each rollout, one at a time, would cost far more than the 0.1 s a
decision allows; batched over many deals it fits, as below).

Like the search bot it reads only its seat's view: the deals of the hidden
tiles are sampled from what the view shows. With ``inference`` above 0 each
deal counts in the means with the weight :class:`~agents.inference.PlayModel`
gives it (a seat that passed up points this round probably lacked the tiles
that scored); by default every deal counts alike. With a ``belief`` model
(``search:trained:belief``) the deals are drawn from its learned marginals.

With ``network_deals`` above 0 (``search:trained:net``) each candidate is
valued twice: by the rollouts above, and by play-outs of ``network_deals``
more deals in which the policy network plays the rest of the round at every
seat, each seat from its own view (:mod:`agents.policy_playouts`: one forward
pass a step for a whole batch of tables). The two estimates err in different
ways: the fast rollouts see every tile, so no seat in them plays as a real
one would, while the network plays as a real seat would but is valued on
fewer deals. The candidate with the best mean of the two is played.

With ``equity`` (``search:trained:belief:net:equity``) both estimates value
a round's end by the chance of winning the match from its scores
(:mod:`agents.match_equity`).
"""

from __future__ import annotations

import math
import os

from allfives_env.core import SeatView

from .policy_agent import PolicyAgent, TrainedAgent
from .policy_playouts import NetworkPlayouts
from .search import DealModel, SearchAgent

#: Rollouts a decision by player count, when none is given: ten times what the search fitted into 0.1 s before
#: its play-outs were compiled. A decision with a choice then takes about 45 ms with two players, 30 ms with
#: three (longer hands: fewer rollouts) and 55 ms with four on one core (benchmarks/bench_bots.py).
DEFAULT_SIMULATIONS: dict[int, int] = {2: 7600, 3: 5200, 4: 7600}
#: At 760 rollouts, keeping 4 candidates instead of 3 cut the regret by a quarter (research/search_regret.py).
DEFAULT_CANDIDATES = 4
DEFAULT_MIN_PRIOR = 0.2
#: Points a candidate's mean gains per unit of its log-probability. 0: the rollouts decide alone (1.5 was
#: measured weaker).
DEFAULT_PRIOR_WEIGHT = 0.0
#: The deal model's points weight (``inference.DEFAULT_BETA`` is its fitted value). 0: deals count alike
#: (with 0.3 it won no more games; see docs/results.md).
DEFAULT_INFERENCE = 0.0
#: Deals the network plays out for each candidate in ``search:trained:net``, and the candidates it keeps: with 64
#: deals and 4 candidates it won 69.5% of 300 tuning matches against ``search``, with 128 and 6 71.8%, at about
#: 50 ms a decision with a choice on one core with two players (benchmarks/bench_bots.py; docs/results.md).
NETWORK_DEALS = 128
NETWORK_CANDIDATES = 6


class GuidedSearchAgent(SearchAgent):
    """Determinized search over the policy's most probable actions; see the module docstring."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        seed: int | None = None,
        simulations: int | None = None,
        candidates: int | None = None,
        min_prior: float = DEFAULT_MIN_PRIOR,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        inference: float = DEFAULT_INFERENCE,
        belief: DealModel | None = None,
        network_deals: int = 0,
        equity: bool = False,
    ) -> None:
        rollouts = DEFAULT_SIMULATIONS[2] if simulations is None else simulations
        if candidates is None:  # the network's play-outs separate more candidates than the rollouts alone
            candidates = NETWORK_CANDIDATES if network_deals else DEFAULT_CANDIDATES
        super().__init__(seed=seed, simulations=rollouts, inference=inference, belief=belief, equity=equity)
        self.simulations = simulations  # None: the table's default (DEFAULT_SIMULATIONS)
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise ValueError(f"candidates={candidates!r} is not allowed; allowed: a positive whole number")
        if isinstance(min_prior, bool) or not isinstance(min_prior, int | float) or not 0 <= min_prior <= 1:
            raise ValueError(f"min_prior={min_prior!r} is not allowed; allowed: a probability in [0, 1]")
        if (
            isinstance(prior_weight, bool)
            or not isinstance(prior_weight, int | float)
            or not 0 <= prior_weight < math.inf
        ):
            raise ValueError(f"prior_weight={prior_weight!r} is not allowed; allowed: a finite number >= 0 (points)")
        if isinstance(network_deals, bool) or not isinstance(network_deals, int) or network_deals < 0:
            raise ValueError(
                f"network_deals={network_deals!r} is not allowed; allowed: a whole number >= 0 (0: rollouts only)"
            )
        self.policy = TrainedAgent(seed=seed) if path is None else PolicyAgent(path, seed=seed)
        self.candidates = candidates
        self.min_prior = min_prior
        self.prior_weight = prior_weight
        self.network_deals = network_deals
        self.network_playouts = NetworkPlayouts()
        self.name = "search:trained" if path is None else f"search:checkpoint:{self.policy.path.name}"
        if belief is not None:
            self.name += ":belief"
        if network_deals:
            self.name += ":net"
        if equity:
            self.name += ":equity"

    def budget(self, view: SeatView) -> int:
        """The rollouts given at construction, else the default for the table's player count."""
        return DEFAULT_SIMULATIONS[view.rules.num_players] if self.simulations is None else self.simulations

    def priors(self, view: SeatView) -> tuple[list[int], list[float]]:
        """The legal actions in id order and the policy's probability of each."""
        legal, logits = self.policy.legal_logits(view)
        top = max(logits)
        weights = [math.exp(x - top) for x in logits]
        total = sum(weights)
        return legal, [w / total for w in weights]

    def shortlist(self, view: SeatView) -> tuple[list[int], list[float]]:
        """The candidates the rollouts compare (most probable first) and their priors."""
        legal, probs = self.priors(view)
        order = sorted(range(len(legal)), key=lambda i: (-probs[i], legal[i]))
        keep = [i for rank, i in enumerate(order) if rank < self.candidates or probs[i] >= self.min_prior]
        return [legal[i] for i in keep], [probs[i] for i in keep]

    def evaluate(self, view: SeatView, actions: list[int] | None = None) -> list[float]:
        """The rollouts' mean outcome of each action; with ``network_deals``, its mean with the network's play-outs."""
        values = super().evaluate(view, actions)
        if not self.network_deals:
            return values
        policy = self.policy.policy_for(view.rules) if isinstance(self.policy, TrainedAgent) else self.policy
        hands, boneyards = self.deal_arrays(view, self.network_deals)
        legal = view.legal if actions is None else actions
        equity = self.equity_table(view)
        played = self.network_playouts.values(policy.actor, view, hands, boneyards, legal, equity).mean(0)
        return [(rollouts + network) / 2 for rollouts, network in zip(values, played.tolist(), strict=True)]

    def act(self, view: SeatView) -> int:
        if len(view.legal) == 1:
            return view.legal[0]
        actions, probs = self.shortlist(view)
        if len(actions) == 1:
            return actions[0]
        values = self.evaluate(view, actions)
        if self.prior_weight:
            values = [v + self.prior_weight * math.log(max(p, 1e-12)) for v, p in zip(values, probs, strict=True)]
        best = max(values)
        return actions[values.index(best)]  # the first best: the policy's order breaks ties
