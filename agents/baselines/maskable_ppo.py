"""sb3-contrib's MaskablePPO on the Gymnasium env (``AllFives-v0``), one seat against the bot mix.

The library's own defaults throughout (``MultiInputPolicy``, 2,048 steps a
rollout, batches of 64, 10 epochs, learning rate 3e-4); the mask comes from
``env.action_masks()``, as the library asks. A decision is one ``env.step``,
one learner decision; sb3's ``num_timesteps`` counts them.
"""

from __future__ import annotations

from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from allfives_env.gym_env import AllFivesSingleAgentEnv

from .bot_mix import BotMix
from .job import Job, Recorder

SETTINGS = {
    "env": "AllFivesSingleAgentEnv(opponents=BotMix(), learner_seat='random', auto_forced=True)",
    "policy": "MultiInputPolicy (the library's policy for Dict observations)",
}


class _Snapshots(BaseCallback):
    """Saves the model at the end of each rollout that passes a mark of the budget."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        steps = self.num_timesteps
        if self.recorder.due(steps) or self.recorder.finished(steps):
            path = self.recorder.path(steps, ".zip")
            self.model.save(path)
            self.recorder.save(steps, f"sb3:{path}")


def train(job: Job, recorder: Recorder, reward: str = "win_loss") -> int:
    """The baseline's run; ``reward`` is the environment's (the baselines keep its default, ``win_loss``)."""
    env = AllFivesSingleAgentEnv(opponents=BotMix(), learner_seat="random", auto_forced=True, reward=reward)
    env.reset(seed=job.seed)
    model = MaskablePPO("MultiInputPolicy", env, seed=job.seed, verbose=0)
    model.learn(total_timesteps=job.budget, callback=_Snapshots(recorder))
    return model.num_timesteps
