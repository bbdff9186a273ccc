"""Joining a Ray cluster: the one call the trainer's and the harness's Ray backends share.

The harness's backend, which plays each duplicate match as a Ray task, is
:class:`agents.evaluation.ray_map.RayMatchMap`; the trainer's rollout actors
are in ``allfives_train/ray_backend.py``. Both join the cluster here, and this
module imports nothing of either, so dependencies run one way. Needs ``ray``
(the ``ray`` extra).
"""

from __future__ import annotations

import ray


def connect(address: str | None) -> bool:
    """Join the cluster at ``address`` (None: ``ray.init``'s default, a local instance); True if this call started it."""
    if ray.is_initialized():
        return False
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return True
