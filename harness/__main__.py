"""`python -m harness`: see `python -m harness --help`."""

import sys

from harness.cli import main, stop_on_signals

stop_on_signals()
sys.exit(main())
