"""Train RLlib's PPO on the PettingZoo environment (one policy shared by every seat), then evaluate it.

    pip install -e ".[ray]"
    python examples/rllib_ppo.py --players 3 --iterations 20 --out runs/rllib3

RLlib's current API stack plays the AEC game through its ``PettingZooEnv``:
only the seat to act observes, and every seat's last reward (+1 / -1 at the
end of the match) arrives with its final observation. The env comes from
``agents.rllib_env.rllib_env``, which wraps it in ``FloatObservations``
(RLlib's encoders take float input, the env's arrays are int8), and the
network is :class:`agents.rllib_module.MaskedPPOModule`,
PPO's default network with the action mask applied to its logits. The
saved checkpoint is then played through the evaluation harness as the agent
``rllib:PATH`` against ``random`` on duplicate deals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.tune.registry import register_env

from agents.evaluate import evaluate
from agents.rllib_agent import SHARED, shared_policy
from agents.rllib_env import rllib_env
from agents.rllib_module import MaskedPPOModule
from allfives_env.core import make_rules

ENV_NAME = "allfives-float"


def build_config(players: int, batch: int, minibatch: int, epochs: int, hidden: int, seed: int) -> PPOConfig:
    """PPO on the new API stack: every seat maps to the one module ``shared``; sampling in this process."""
    register_env(ENV_NAME, rllib_env)  # PettingZooEnv(FloatObservations(allfives_env.env(**env_config)))
    module = RLModuleSpec(module_class=MaskedPPOModule, model_config={"fcnet_hiddens": [hidden, hidden]})
    return (
        PPOConfig()
        # RLlib's environment check steps random actions of the whole Discrete(114) space; the env answers an
        # illegal one by ending the match with a warning, so the check would only print noise.
        .environment(ENV_NAME, env_config={"num_players": players}, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .multi_agent(policies={SHARED}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED: module}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, lr=3e-4)
        .debugging(seed=seed)
    )


def train(config: PPOConfig, iterations: int, out: Path) -> tuple[Path, list[dict]]:
    """Run ``iterations`` PPO iterations and save the algorithm to ``out``; return the path and the results."""
    algo = config.build_algo()
    results = []
    try:
        for i in range(iterations):
            result = algo.train()
            results.append(result)
            returns = result.get("env_runners", {}).get("agent_episode_returns_mean", {})
            print(f"iteration {i + 1}: episode returns {returns}", flush=True)
        path = Path(algo.save_to_path(str(Path(out).resolve())))
    finally:
        algo.stop()
    return path, results


def lineup(spec: str, players: int, opponent: str) -> list[str]:
    """The agent against ``opponent`` in every other seat (one entry per team with partnerships)."""
    rules = make_rules("pagat", players)
    return [spec, opponent] if rules.partnerships else [spec] + [opponent] * (players - 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--iterations", type=int, default=10, help="PPO iterations (each samples --batch steps)")
    parser.add_argument("--batch", type=int, default=4000, help="environment steps per iteration")
    parser.add_argument("--minibatch", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/rllib_ppo"), help="where the checkpoint goes")
    parser.add_argument("--matches", type=int, default=100, help="duplicate matches against --opponent afterwards")
    parser.add_argument("--opponent", default="random")
    parser.add_argument("--ray-address", default=None, help="an existing Ray cluster (default: a local instance)")
    args = parser.parse_args(argv)
    ray.init(address=args.ray_address, include_dashboard=False, ignore_reinit_error=True)
    try:
        config = build_config(args.players, args.batch, args.minibatch, args.epochs, args.hidden, args.seed)
        path, _ = train(config, args.iterations, args.out)
    finally:
        ray.shutdown()
    print(f"checkpoint: {path}")
    result = evaluate(lineup(f"rllib:{path}", args.players, args.opponent), args.matches,
                      num_players=args.players, seed=args.seed, workers=1, progress=False)  # fmt: skip
    print(result.markdown(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
