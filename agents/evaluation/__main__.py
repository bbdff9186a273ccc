"""``python -m agents.evaluation ...`` is ``python -m agents.evaluate ...``."""

import sys

from .cli import main

sys.exit(main())
