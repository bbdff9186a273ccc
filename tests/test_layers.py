"""The layers' promise: the rules core stands alone, with no third-party import."""

import subprocess
import sys

PROBE = """
import sys
from allfives_env.core import State, make_rules
from allfives_env.core.record import replay, to_record
state = State(make_rules("pagat", 3), seed=1)
while not state.finished:
    state.apply(state.legal_actions()[0])
replay(to_record(state))
import allfives_env
print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pettingzoo', 'gymnasium', 'torch', 'agents'}))
"""


def test_the_core_and_the_package_import_no_third_party_module():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
