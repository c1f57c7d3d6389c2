"""``python -m neardup.spark``: see :mod:`neardup.spark.command`."""

import sys

from .command import main

sys.exit(main())
