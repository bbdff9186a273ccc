"""``python -m allfives_web`` is ``python -m allfives_env serve``: the browser app."""

import sys

from .server import main

sys.exit(main())
