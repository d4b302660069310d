"""``python -m unotest``: the same entry point as the console script."""

import sys

from unotest.cli import main

sys.exit(main())
