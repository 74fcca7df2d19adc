"""`python -m harness`: see `python -m harness --help`."""

import sys

from harness.cli import main, stop_on_sigterm

stop_on_sigterm()
sys.exit(main())
