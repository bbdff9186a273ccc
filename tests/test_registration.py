"""``import allfives_env`` registers "allfives-v0" with PettingZoo and "AllFives-v0" with Gymnasium, and stays light.

Registering means importing PettingZoo or Gymnasium, which import numpy, and
the package must not import numpy (the rules core is pure Python). So the ids
are registered when the registry's package itself is imported, whichever of
the two imports comes first. Each check runs in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

PROLOGUE = """
import sys, warnings
warnings.filterwarnings("error", message=".*[Oo]verrid")  # registered once: no 'Overriding environment' warning
"""
MAKE = """
import gymnasium, pettingzoo
env = pettingzoo.make("aec", "allfives-v0", num_players=3)
env.reset(seed=1)
single = gymnasium.make("AllFives-v0", num_players=2)
single.reset(seed=1)
import allfives_env.aec_env, allfives_env.gym_env  # their own registration finds the ids taken
print(type(env.unwrapped).__module__, env.unwrapped.game_rules.num_players, single.unwrapped.game_rules.num_players)
"""
ORDERS = {
    "allfives_env first": "import allfives_env\nassert not {'numpy', 'pettingzoo', 'gymnasium'} & set(sys.modules)\n",
    "pettingzoo first": "import pettingzoo\nimport allfives_env\n",
    "gymnasium first": "import gymnasium\nimport allfives_env\n",
    "a submodule first": "import allfives_env\nfrom pettingzoo.utils import wrappers\n",
}


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_import_allfives_env_registers_both_ids(order):
    probe = PROLOGUE + ORDERS[order] + MAKE
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["allfives_env.aec_env", "3", "2"]


def test_finding_pettingzoo_without_importing_it_leaves_the_registration_to_its_import():
    """importlib.util.find_spec looks a package up without running it; the import that follows still registers."""
    probe = PROLOGUE + "import importlib.util, allfives_env\nassert importlib.util.find_spec('pettingzoo')\n" + MAKE
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
