"""``python -m adk_rx.cli``: the same as the ``adk-rx`` console script."""

import sys

from adk_rx.cli.main import main

sys.exit(main())
